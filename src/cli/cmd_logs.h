/* kyu logs [-f] ID: a job's output, and with -f its live output as it
 * comes (kyud(8), "Live output") until the job ends. */
#ifndef KYU_CMD_LOGS_H
#define KYU_CMD_LOGS_H

#include "common/attr.h"
#include "common/db.h"

/* With db NULL only checks the arguments (0 or EXIT_USAGE). */
KYU_MUSTCHECK int cmd_logs(struct db *db, int argc, char **argv);

#endif
