/* The wake fan-out: which worker of the pool is asked to acquire, and when.
 * See fanout.h. */
#include "fanout.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void on_poll(EV_P_ ev_timer *t, int revents);
static void on_cancel(EV_P_ ev_timer *t, int revents);

void fanout_init(struct fanout *f, struct ev_loop *loop, const struct kyu_config *cfg,
		 struct pool *pool, struct sdnotify *sdn)
{
	memset(f, 0, sizeof(*f));
	f->loop = loop;
	f->cfg = cfg;
	f->pool = pool;
	f->sdn = sdn;
	ev_init(&f->poll_w, on_poll);
	f->poll_w.data = f;
	ev_init(&f->cancel_w, on_cancel);
	f->cancel_w.data = f;
	f->cancel_at = -FANOUT_CANCEL_GAP;
}

static double jittered(double v)
{
	/* ±10%, so that many daemons started together drift apart. */
	return v * (0.9 + 0.2 * ((double)random() / RAND_MAX));
}

/* Every worker hears, once per poll interval, that the daemon is polling:
 * one that hears nothing for longer (this process stopped, or stuck)
 * claims by itself (worker/claim.c, SELF_POLL). Also from the idle answers,
 * which re-arm the poll timer and can keep it from ever firing while
 * wake-ups come often. A message per worker per interval. */
static void tell_polled(struct fanout *f, bool polled)
{
	struct pool *p = f->pool;
	double now = ev_now(f->loop);

	if (!polled && now - f->polled_at < f->cfg->poll_interval)
		return;
	f->polled_at = now;
	for (int i = 0; i < p->n; i++)
		if (!p->children[i].metrics && p->children[i].ready)
			child_send(&p->children[i], KYU_POLLED);
}

static void arm_poll(struct fanout *f, double after)
{
	ev_timer_stop(f->loop, &f->poll_w);
	ev_timer_set(&f->poll_w, after, 0.);
	ev_timer_start(f->loop, &f->poll_w);
}

void fanout_start(struct fanout *f)
{
	arm_poll(f, jittered(f->cfg->poll_interval));
}

void fanout_stop(struct fanout *f)
{
	f->stopping = true;
	ev_timer_stop(f->loop, &f->poll_w);
	ev_timer_stop(f->loop, &f->cancel_w);
}

/* The next idle worker other than except, in turn, so that claims (and the
 * database work they bring) spread over the pool; NULL when none is idle. */
static struct child *next_idle(struct fanout *f, const struct child *except)
{
	struct pool *p = f->pool;

	for (int k = 0; k < p->n; k++) {
		struct child *c = &p->children[(f->rr + k) % p->n];
		if (c != except && c->pid && c->ready && c->idle && !c->retired &&
		    !c->wake_inflight) {
			f->rr = (int)(c - p->children + 1) % p->n;
			return c;
		}
	}
	return NULL;
}

/* Hints that arrive while a claim is in flight are folded into one
 * follow-up claim. */
void fanout_wake(struct fanout *f)
{
	struct pool *p = f->pool;
	struct child *c;

	if (f->stopping || !f->announced)
		return;
	for (int i = 0; i < p->n; i++) {
		if (p->children[i].pid && p->children[i].wake_inflight) {
			f->hint_pending = true;
			return;
		}
	}
	c = next_idle(f, NULL);
	if (c) {
		struct msg m = { .type = KYU_WAKE,
				 .value = f->datagram_hint ? KYU_WAKE_HINTED : 0 };
		c->wake_inflight = true;
		f->datagram_hint = false;
		(void)proto_send_fd(c->fd, &m, -1);
	}
}

/* A worker found a full batch: bring in another idle worker too. Not
 * counted as the claim in flight: the busy worker's next answer is. */
static void wake_another(struct fanout *f, struct child *busy)
{
	struct child *c = next_idle(f, busy);

	if (c) {
		c->idle = false;
		child_send(c, KYU_WAKE);
	}
}

static void check_ready(struct fanout *f)
{
	int ready = 0;
	if (f->announced)
		return;
	for (int i = 0; i < f->cfg->workers; i++)
		ready += f->pool->children[i].ready;
	if (ready < f->cfg->workers)
		return;
	f->announced = true;
	sdnotify_started(f->sdn, f->cfg->workers);
	fanout_wake(f);
}

void fanout_msg(struct fanout *f, struct child *c, const struct msg *m)
{
	switch (m->type) {
	case KYU_READY:
		c->ready = true;
		c->idle = true;
		check_ready(f);
		if (f->announced)
			fanout_wake(f);
		break;
	case KYU_IDLE: {
		double next = f->cfg->poll_interval, due = (double)m->value / 1e6;
		if (m->pad > 0 && f->wake_bucket)
			ratelimit_refund(f->wake_bucket);
		c->idle = true;
		c->wake_inflight = false;
		next = jittered(next);
		if (m->value != INT64_MAX && due < next)
			next = due < 0.01 ? 0.01 : due;
		/* The earliest moment any worker named stands: another worker's
		 * later answer (its claim saw other queues, or came after the
		 * moment was taken) must not push it back. Taking the earliest
		 * costs at most a claim that finds nothing; the poll's own
		 * moment is never moved later either, so the timer fires at
		 * least every poll interval. */
		if (ev_is_active(&f->poll_w)) {
			double rem = ev_timer_remaining(f->loop, &f->poll_w);
			if (rem < next)
				next = rem < 0.01 ? 0.01 : rem;
		}
		if (!f->stopping)
			arm_poll(f, next);
		tell_polled(f, false);
		if (f->hint_pending) {
			f->hint_pending = false;
			fanout_wake(f);
		}
		break;
	}
	case KYU_MORE:
		if (f->wake_bucket)
			ratelimit_refund(f->wake_bucket);
		c->idle = false;
		c->wake_inflight = false;
		f->hint_pending = false;
		wake_another(f, c);
		break;
	}
}

static void on_poll(EV_P_ ev_timer *t, int revents)
{
	struct fanout *f = t->data;
	(void)EV_A;
	(void)revents;
	/* Re-armed at the full interval in case no worker answers; an answer
	 * re-arms it to the next due time. */
	arm_poll(f, jittered(f->cfg->poll_interval));
	/* A claim lost with its worker must not block all further wakes. */
	for (int i = 0; i < f->pool->n; i++)
		f->pool->children[i].wake_inflight = false;
	fanout_wake(f);
	tell_polled(f, true);
}

void fanout_hinted(struct fanout *f, bool within_rate)
{
	f->datagram_hint = true;
	if (!within_rate) {
		/* Over the rate: one wake when the bucket has its next token,
		 * however many hints come meanwhile (the poll timer's, earlier
		 * if it is earlier). */
		double gap = 1.0 / (f->cfg->wake_rate > 0 ? f->cfg->wake_rate : 1);
		if (!ev_is_active(&f->poll_w) || ev_timer_remaining(f->loop, &f->poll_w) > gap)
			arm_poll(f, gap);
		return;
	}
	fanout_wake(f);
}

/* Also while stopping: a draining daemon's jobs may be cancelled too. */
static void cancel_round(struct fanout *f)
{
	struct pool *p = f->pool;

	f->cancel_at = ev_now(f->loop);
	for (int i = 0; i < p->n; i++)
		if (!p->children[i].metrics && p->children[i].ready)
			child_send(&p->children[i], KYU_CANCEL);
}

static void on_cancel(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	cancel_round(t->data);
}

void fanout_cancel(struct fanout *f)
{
	double wait = f->cancel_at + FANOUT_CANCEL_GAP - ev_now(f->loop);

	if (ev_is_active(&f->cancel_w))
		return;
	if (wait <= 0) {
		cancel_round(f);
		return;
	}
	ev_timer_set(&f->cancel_w, wait, 0.);
	ev_timer_start(f->loop, &f->cancel_w);
}

void fanout_schedules(struct fanout *f)
{
	if (f->pool->n > 0 && !f->stopping)
		child_send(&f->pool->children[0], KYU_SCHEDULES);
}
