/* kyu show ID: every column of one job (the workflow ones when set), its
 * failed attempts (kyu_attempts), its upstreams and downstreams, and its
 * output: one read-only statement per part, which main.c may send to the
 * replica. Apart from cmd_jobs.c because it is the one command that joins
 * four tables and prints in three forms (table.h). */
#ifndef KYU_CMD_SHOW_H
#define KYU_CMD_SHOW_H

#include "common/attr.h"
#include "common/db.h"

/* kyu show ID; 1 when there is no such job. */
KYU_MUSTCHECK int cmd_show(struct db *db, const char *id);

#endif
