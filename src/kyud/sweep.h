/* The jobs of a worker that died: re-parented to the supervisor (a child
 * subreaper) and killed, since nobody renews their leases any more (see
 * sweep_now).
 *
 * Kept apart from the supervisor's loop (sup.c): a duty of its own, on every
 * child's exit, that must know every child of ours (pool.h,
 * metricsproc.h) to spare them; the rule for what is killed is
 * common/orphans.h's. */
#ifndef KYU_SWEEP_H
#define KYU_SWEEP_H

#include <ev.h>

#include "metricsproc.h"
#include "pool.h"

struct sweep {
	struct ev_loop *loop;
	const struct pool *pool;
	const struct metricsproc *mp;
	const struct child *watcher; /* the watcher process (watchproc.h) */
	ev_timer w;                  /* the next sweep, while some were killed */
};

void sweep_init(struct sweep *sw, struct ev_loop *loop, const struct pool *pool,
		const struct metricsproc *mp, const struct child *watcher);
/* Become a child subreaper (a warning when we cannot). */
void sweep_subreaper(void);
/* Kill the children of ours that are neither a worker nor the metrics
 * process; returns how many. */
int sweep_now(struct sweep *sw);

#endif
