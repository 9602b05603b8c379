/* The wake-up listener: the UDP socket of [kyud] listen, where kyu and the
 * kyu_notify UDF send "kyu:QUEUE" datagrams (wake.h) when a job may be due.
 * A burst of them becomes one wake, a queue this daemon does not serve is
 * ignored, and wakes beyond [kyud] wake_rate wait for the bucket's next
 * token (one deferred wake, whatever the flood): so that a flood from
 * anyone on the host costs the database at most wake_rate claims a
 * second. The wake itself goes out through the fan-out (fanout.h).
 *
 * Kept apart from the supervisor's loop (sup.c): the one door of the daemon that
 * anyone on the network may knock at, so what it accepts and how much it
 * lets through read in one place. */
#ifndef KYU_LISTENER_H
#define KYU_LISTENER_H

#include <ev.h>

#include "common/attr.h"
#include "common/config.h"
#include "fanout.h"
#include "ratelimit.h"

struct listener {
	struct ev_loop *loop;
	const struct kyu_config *cfg; /* the supervisor's, in force */
	struct fanout *fan;
	ev_io io;
	int fd; /* -1: not listening */
	struct ratelimit rl;
	unsigned long hints_bad;      /* malformed datagrams so far */
	unsigned long hints_bad_said; /* of which the log has told */
	double bad_said_at;           /* mono time of the last such line */
};

/* Seconds between two lines about malformed datagrams. */
#define LISTENER_BAD_LOG_GAP 60.0

/* Not listening yet. */
void listener_init(struct listener *l, struct ev_loop *loop, const struct kyu_config *cfg,
		   struct fanout *fan);
/* Listen on cfg->listen (nothing when empty), in place of the socket
 * open, if any. Returns 0, or < 0 (logged) when that address cannot be
 * bound; the old socket, if any, is kept then. */
KYU_MUSTCHECK int listener_open(struct listener *l);
void listener_close(struct listener *l);
/* cfg->wake_rate is in force, from a full bucket. */
void listener_set_rate(struct listener *l);

#endif
