/* kyu logs [-f] ID: a job's output, and with -f its live output as it
 * comes (kyud(8), "Live output") until the job ends. */
#ifndef KYU_CMD_LOGS_H
#define KYU_CMD_LOGS_H

#include "common/attr.h"
#include "common/db.h"

/* The exit statuses of kyu logs -f for a job that ended other than
 * succeeded (0); 1 stays every other failure. */
#define LOGS_FAILED 2
#define LOGS_CANCELLED 3

/* With db NULL only checks the arguments (0 or EXIT_USAGE). */
KYU_MUSTCHECK int cmd_logs(struct db *db, int argc, char **argv);

#endif
