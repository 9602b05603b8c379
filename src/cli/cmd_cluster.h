/* kyu daemons, wake, locks: the cluster beyond the job rows, the daemons
 * that kyu_daemons registers, waking them, and the cluster-wide locks of
 * kyu_locks (kyu lock itself is lock_main, lock.h, on a connection
 * of its own). */
#ifndef KYU_CMD_CLUSTER_H
#define KYU_CMD_CLUSTER_H

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"

/* kyu daemons: every row of kyu_daemons, live or not; when none is live,
 * a line that says so, with the last daemon seen. */
KYU_MUSTCHECK int cmd_daemons(struct db *db);
/* kyu drain DAEMON (its id, or HOST:PID): set kyu_daemons.drain of that
 * live daemon, which then stops claiming, lets its jobs finish and exits;
 * 1 when no live daemon matches. */
KYU_MUSTCHECK int cmd_drain(struct db *db, const struct kyu_config *cfg, const char *daemon);
/* kyu wake [QUEUE] ("": any queue): 0 when a daemon was sent to, else 1. */
KYU_MUSTCHECK int cmd_wake(struct db *db, const struct kyu_config *cfg, const char *queue);
/* kyu locks [NAME] (NULL: all of them). */
KYU_MUSTCHECK int cmd_locks(struct db *db, const char *name);

#endif
