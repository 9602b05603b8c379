/* kyu cancel|retry|delete with filters instead of ids: count, confirm,
 * then act in batches with the statements of common/action.h, which the
 * dashboard's bulk actions share. */
#ifndef KYU_CMD_BULK_H
#define KYU_CMD_BULK_H

#include <stdbool.h>

#include "common/attr.h"
#include "common/action.h"
#include "common/config.h"
#include "common/db.h"

/* kyu cancel|retry|delete with filters instead of an id (OPTIONS, below):
 * whether argv (the command first) is that form. */
bool cmd_job_is_bulk(enum action a, int argc, char **argv);
/* That form: counts the jobs the filters match, asks (on a terminal;
 * --yes: not), then acts on them in batches (common/action.h), settling
 * their dependents after each and waking the daemons once. With db NULL
 * it only checks the options: 0 or EXIT_USAGE. */
KYU_MUSTCHECK int cmd_job_bulk(struct db *db, const struct kyu_config *cfg, enum action a, int argc,
			       char **argv);
#endif
