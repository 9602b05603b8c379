/* The jobs of a worker that died: re-parented to the supervisor (a child
 * subreaper) and killed, since nobody renews their leases any more. See
 * sweep.h. */
#include "sweep.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/log.h"
#include "common/orphans.h"

static void on_sweep(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	sweep_now(t->data);
}

void sweep_init(struct sweep *sw, struct ev_loop *loop, const struct pool *pool,
		const struct metricsproc *mp, const struct child *watcher)
{
	sw->watcher = watcher;
	sw->loop = loop;
	sw->pool = pool;
	sw->mp = mp;
	ev_init(&sw->w, on_sweep);
	sw->w.data = sw;
}

void sweep_subreaper(void)
{
	/* A dead worker's jobs come to us rather than to init, so that
	 * sweep_now can stop them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("cannot become a child subreaper (%s): jobs of a worker that dies are "
			 "not stopped before their leases expire",
			 strerror(errno));
}

/* Our own children: the workers, the metrics process and the watcher. */
static bool is_worker(void *arg, pid_t pid)
{
	const struct sweep *sw = arg;
	if (sw->mp->child.pid == pid || sw->watcher->pid == pid)
		return true;
	return pool_has(sw->pool, pid);
}

/* The jobs of a worker that died are re-parented here (we are a subreaper)
 * and nobody renews their leases any more: when the leases run out another
 * worker runs them again, so they must not still be running then. Kill them
 * now. A killed job's children that had left its process group arrive a
 * moment later, hence the repeated sweeps. */
int sweep_now(struct sweep *sw)
{
	int n = orphans_kill(is_worker, sw);
	if (n < 0) {
		log_err("cannot list my children to stop the jobs of a dead worker: %s",
			strerror(-n));
		return 0;
	}
	if (n > 0 && !ev_is_active(&sw->w)) {
		ev_timer_set(&sw->w, 0.02, 0.);
		ev_timer_start(sw->loop, &sw->w);
	}
	return n;
}
