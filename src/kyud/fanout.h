/* The wake fan-out: which worker of the pool is asked to acquire, and
 * when. A wake-up hint (listener.h) or the fallback poll timer becomes
 * KYU_WAKE to one idle worker, in turn, so that claims (and the database
 * work they bring) spread over the pool; hints that arrive while a claim is
 * in flight are folded into one follow-up claim, and a worker that finds a
 * full batch (KYU_MORE) brings in another. It also tells every worker,
 * once per poll interval, that the daemon is polling (KYU_POLLED), and
 * announces the start once every worker is ready.
 *
 * Kept apart from the supervisor's loop (sup.c) because this is the one part of
 * it on the path of every job: the claims it asks for per hint and per
 * poll are what the tests idle_cost and wake_coalesce count. It reads the
 * pool and the flags it keeps in each struct child; it starts and stops
 * no process. */
#ifndef KYU_FANOUT_H
#define KYU_FANOUT_H

#include <stdbool.h>

#include <ev.h>

#include "common/config.h"
#include "common/proto.h"
#include "child.h"
#include "pool.h"
#include "ratelimit.h"
#include "sdnotify.h"

struct fanout {
	struct ev_loop *loop;
	const struct kyu_config *cfg; /* the supervisor's, in force */
	struct pool *pool;
	struct sdnotify *sdn;
	/* The listener's bucket of datagram wake-ups (NULL: none): a claim
	 * that found work gives its token back, so that only wake-ups that
	 * find nothing (a flood) are held to [kyud] wake_rate. */
	struct ratelimit *wake_bucket;
	ev_timer poll_w;
	double polled_at;  /* ev_now of the last KYU_POLLED to every worker */
	int rr;            /* where the next round-robin search starts */
	bool announced;    /* every worker was ready once: wakes may go */
	bool hint_pending; /* a wake folded into the claim in flight */
	/* The wake to send was asked for by a datagram: a worker whose claim
	 * then finds nothing looks once more (the datagram may have left
	 * before its rows were committed). */
	bool datagram_hint;
	bool stopping; /* no more wakes; fanout_stop */
	/* Cancel hints: the last KYU_CANCEL round (ev_now), and the timer of
	 * the one a hint within FANOUT_CANCEL_GAP of it asked for. */
	double cancel_at;
	ev_timer cancel_w;
};

/* Cancel hints make a KYU_CANCEL round at most this often (s): a flood of
 * them costs each worker a few lease renewals a second, no more. */
#define FANOUT_CANCEL_GAP 0.25

void fanout_init(struct fanout *f, struct ev_loop *loop, const struct kyu_config *cfg,
		 struct pool *pool, struct sdnotify *sdn);
/* The first poll, a jittered interval from now. */
void fanout_start(struct fanout *f);
/* No more wakes or polls: the daemon stops. */
void fanout_stop(struct fanout *f);

/* Ask one idle worker to acquire (or fold it into the claim in flight). */
void fanout_wake(struct fanout *f);
/* A wake-up datagram asked for a wake; within_rate false: over [kyud]
 * wake_rate, the poll picks it up shortly instead. */
void fanout_hinted(struct fanout *f, bool within_rate);
/* A datagram for any queue (also what a changed schedule sends): worker 1,
 * which runs the schedules, reads them again. */
void fanout_schedules(struct fanout *f);
/* A cancel hint (wake.h): every worker renews its leases now (KYU_CANCEL),
 * which stops the process of a job whose row was cancelled; within
 * FANOUT_CANCEL_GAP of the last round, once that time is up. */
void fanout_cancel(struct fanout *f);
/* Worker c said KYU_READY, KYU_IDLE or KYU_MORE (other types are not the
 * fan-out's and are ignored). */
void fanout_msg(struct fanout *f, struct child *c, const struct msg *m);

#endif
