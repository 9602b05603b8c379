/* kyu wait [--timeout SECONDS] ID: wait for a job to end, through the
 * schema's CALL kyu_wait (kyu_jobs(7), "Waiting for a job"), and exit as
 * it ended. Its own module: the one command that keeps a statement
 * running on the server for as long as it waits. */
#ifndef KYU_CMD_WAIT_H
#define KYU_CMD_WAIT_H

#include "common/attr.h"
#include "common/db.h"

/* Besides 0 (succeeded), 1 (no such job, or the database failed) and
 * cli.h's EXIT_JOB_FAILED and EXIT_JOB_CANCELLED: EX_TEMPFAIL, as kyu
 * lock's --wait, for a job that had not ended within --timeout (it may
 * still). */
#define WAIT_TIMEOUT 75

/* With db NULL only checks the arguments (0 or EXIT_USAGE). */
KYU_MUSTCHECK int cmd_wait(struct db *db, int argc, char **argv);

#endif
