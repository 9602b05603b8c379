/* kyu web: the dashboard is a program of its own, kyu-web (src/web/main.c),
 * so that only it loads the HTTP library; kyu replaces itself with it. */
#ifndef KYU_CMD_WEB_H
#define KYU_CMD_WEB_H

#include "common/attr.h"

/* Exec kyu-web with -c path (when set) and argv[1..argc-1]; returns only
 * when it cannot be run: 127 (not found) or 126, with a message. */
KYU_MUSTCHECK int cmd_web(const char *path, int argc, char **argv);

#endif
