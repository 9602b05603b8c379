/* kyu submit, list, stats, and cancel, retry, run-now, delete: the
 * commands on the rows of kyu_jobs, each one plain statement (or two: the
 * id a submit generated, whether a list has more) that a user could type
 * instead. list and stats only read: main.c may connect them to the
 * replica. */
#ifndef KYU_CMD_JOBS_H
#define KYU_CMD_JOBS_H

#include <stdbool.h>

#include "common/attr.h"
#include "common/action.h"
#include "common/config.h"
#include "common/db.h"

/* kyu submit. With db NULL it only checks the options (before
 * connecting): 0 or EXIT_USAGE. Exits 75 when the queue is full. */
KYU_MUSTCHECK int cmd_submit(struct db *db, const struct kyu_config *cfg, int argc, char **argv);
/* kyu show: cmd_show.h. */
/* kyu list [-q QUEUE] [-s STATUS] [-n N]; with db NULL it only checks the
 * options, as cmd_submit. */
KYU_MUSTCHECK int cmd_list(struct db *db, int argc, char **argv);
/* kyu cancel|retry|run-now|delete ID (a not on a queue: common/action.h).
 * After a cancel, retry or delete, the job's dependents are settled and
 * the daemons woken (cfg: where the wake-up goes without kyu_daemons). */
KYU_MUSTCHECK int cmd_job_action(struct db *db, const struct kyu_config *cfg, enum action a,
				 const char *id);
/* kyu stats [--json]. */
KYU_MUSTCHECK int cmd_stats(struct db *db, bool as_json);

#endif
