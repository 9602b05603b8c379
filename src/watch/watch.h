/* kyud's watcher: the process (kyud --watcher, one per daemon, started by
 * the supervisor: src/kyud/watchproc.h) that notices new and newly due
 * jobs without any help from the submitter, so that a plain INSERT starts
 * at once on any server:
 *   - where the server writes a binary log and kyud's user may read it
 *     ([kyud] wake_binlog), it follows the log as a replica would
 *     (db_binlog.h) and sends a hint the moment a committed change makes
 *     a job due (follow.h);
 *   - elsewhere it asks the server every [kyud] wake_poll seconds whether
 *     anything moved (changes.h).
 * Its hints go to the supervisor as KYU_HINT messages on the control
 * socket (proto.h), which wakes an idle worker as it does for a datagram.
 * A process of its own because Connector/C's replication stream blocks,
 * and so that neither the supervisor's loop nor a worker's claims wait
 * on it. */
#ifndef KYU_WATCH_H
#define KYU_WATCH_H

#include "common/config.h"

/* Runs until the supervisor goes away (or kills it). Returns an exit
 * status: EX_CONFIG when wake_binlog = on and the log cannot be read. */
int watch_main(const struct kyu_config *cfg, const char *daemon_id);

#endif
