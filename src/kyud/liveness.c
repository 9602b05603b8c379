/* Liveness: a worker silent for lease - fence_margin - heartbeat is
 * killed (liveness.h). */
#include "liveness.h"

#include <signal.h>

#include "common/log.h"
#include "common/util.h"

/* Silent this long, a worker is killed. At least a second, so that a
 * configuration with no time to spare (heartbeat close to lease -
 * fence_margin) does not kill workers for a late timer. */
static double kill_after(const struct liveness *l)
{
	return l->kill_after > 1.0 ? l->kill_after : 1.0;
}

/* Its reports come from its loop's timer whatever the database does, so a
 * worker merely waiting on a slow database keeps reporting and fences its
 * own jobs (lease.h). Its last renewal started at most a heartbeat before
 * its loop stopped, and its last report came before that, so
 * lease - fence_margin - heartbeat after the last report is within the
 * fencing deadline. A worker that never reported has claimed nothing (its
 * first report precedes its first claim) and is left alone. Armed for the
 * earliest deadline; a report since only makes it fire early and look
 * again. */
static void check(struct liveness *l)
{
	double now = mono_now(), next = 0, after = kill_after(l);

	for (int i = 0; i < *l->n; i++) {
		struct child *c = &l->children[i];
		if (c->life != CHILD_ALIVE && c->life != CHILD_OVERDUE)
			continue;
		if (now - c->seen >= after && c->life == CHILD_ALIVE) {
			/* Look once more after one turn of the loop: if the
			 * supervisor itself was stopped, its poll returned EINTR
			 * on SIGCONT and the reports that came meanwhile are
			 * still unread in the sockets. */
			c->life = CHILD_OVERDUE;
			next = now;
		} else if (now - c->seen >= after) {
			log_err("worker %d (pid %d) stopped reporting for %.1f s (its loop is stuck or "
				"the process is stopped; lease - fence_margin - heartbeat is %.1f s): "
				"killing it and its jobs before their leases run out",
				c->index, (int)c->pid, now - c->seen, after);
			kill(c->pid, SIGKILL);
			c->life = CHILD_KILLED;
		} else if (next == 0 || c->seen + after < next) {
			next = c->seen + after;
		}
	}
	ev_timer_stop(l->loop, &l->kill_w);
	if (next > 0) {
		ev_timer_set(&l->kill_w, next - now, 0.);
		ev_timer_start(l->loop, &l->kill_w);
	}
}

static void on_kill(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	check(t->data);
}

void liveness_init(struct liveness *l, struct ev_loop *loop, struct child *children, const int *n,
		   const struct kyu_config *cfg)
{
	*l = (struct liveness){ .loop = loop, .children = children, .n = n };
	l->kill_after = cfg->lease - cfg->fence_margin - config_heartbeat(cfg);
	ev_init(&l->kill_w, on_kill);
	l->kill_w.data = l;
	/* When reports and this timer are pending in the same loop
	 * iteration, the reports are read first. */
	ev_set_priority(&l->kill_w, EV_MINPRI);
}

void liveness_free(struct liveness *l)
{
	ev_timer_stop(l->loop, &l->kill_w);
}

void liveness_configure(struct liveness *l, const struct kyu_config *cfg)
{
	l->kill_after = cfg->lease - cfg->fence_margin - config_heartbeat(cfg);
	check(l);
}

void liveness_set_watchdog(struct liveness *l, uint64_t watchdog_us)
{
	l->watchdog_us = watchdog_us;
}

int64_t liveness_report_us(const struct liveness *l)
{
	/* Four reports per silence tolerated (and per ping interval's worth
	 * of staleness): a late timer or two under load still leaves the
	 * worker counted as alive. */
	double every = kill_after(l) / 4;

	if (l->watchdog_us && (double)l->watchdog_us / 4e6 < every)
		every = (double)l->watchdog_us / 4e6;
	return (int64_t)(every * 1e6);
}

void liveness_spawned(struct liveness *l, struct child *c)
{
	(void)l;
	/* It has a whole limit to report for the first time. */
	c->life = CHILD_STARTED;
	c->seen = mono_now();
	c->st = (struct worker_state){ 0 };
	c->ping_withheld = false;
}

void liveness_exited(struct liveness *l, struct child *c)
{
	(void)l;
	c->life = CHILD_DOWN;
	c->st = (struct worker_state){ 0 };
	c->ping_withheld = false;
}

void liveness_report(struct liveness *l, struct child *c, int64_t value)
{
	if (c->life == CHILD_DOWN || c->life == CHILD_KILLED)
		return;
	c->seen = mono_now();
	c->life = CHILD_ALIVE;
	proto_state_unpack(value, &c->st);
	if (!ev_is_active(&l->kill_w))
		check(l);
}
