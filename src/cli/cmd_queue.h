/* kyu queues, pause, resume, limit, queue-reset: the queues, which exist
 * by their jobs' rows or by their settings' row in kyu_queues; each
 * command one statement that a user could type instead. */
#ifndef KYU_CMD_QUEUE_H
#define KYU_CMD_QUEUE_H

#include <stdbool.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"

/* kyu queues [--sort attention|name] [--limit N] [--offset N] [--after
 * NAME]: each queue, its counts, settings and attention, those that need
 * it first (common/attention.h) or by name (--after NAME: by name, those
 * whose names sort after NAME); at most N of them, from the offset's.
 * Without db: only checks the options (0, or EXIT_USAGE after saying
 * why). */
KYU_MUSTCHECK int cmd_queues(struct db *db, int argc, char **argv);
/* kyu pause|resume|limit|key-limit|queue-reset (what) QUEUE [value:
 * limit's N or "none", key-limit's N]; create: --create, make the settings of a queue that has none
 * and no jobs. */
KYU_MUSTCHECK int cmd_queue_set(struct db *db, const struct kyu_config *cfg, const char *what,
				const char *queue, const char *value, bool create);

#endif
