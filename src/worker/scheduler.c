/* The scheduler: worker 1 turning kyu_schedules' rows into jobs, by sending
 * the statements schedules.c builds. See scheduler.h. */
#include "scheduler.h"

#include "common/util.h"

/* A schedule INSERTed in SQL wakes the scheduler before its commit:
 * kyu_schedules is read once more this much later. */
#define SCHEDULES_RECHECK 1.0

void scheduler_init(struct scheduler *sc, const struct kyu_config *cfg, int worker,
		    struct conn *conn, struct claim *claim, const struct jobs *jobs)
{
	sc->cfg = cfg;
	sc->worker = worker;
	sc->conn = conn;
	sc->claim = claim;
	sc->jobs = jobs;
	schedules_init(&sc->s);
	schedules_set_poll(&sc->s, cfg->poll_interval, mono_now());
	sc->on = worker == 1 && cfg->schedules;
}

void scheduler_free(struct scheduler *sc)
{
	schedules_free(&sc->s);
}

void scheduler_connected(struct scheduler *sc)
{
	schedules_reset(&sc->s, mono_now());
}

void scheduler_reload(struct scheduler *sc)
{
	schedules_set_poll(&sc->s, sc->cfg->poll_interval, mono_now());
	sc->on = sc->worker == 1 && sc->cfg->schedules;
	if (sc->on)
		schedules_poke(&sc->s, mono_now());
}

void scheduler_wake(struct scheduler *sc)
{
	if (sc->on) {
		schedules_poke(&sc->s, mono_now());
		sc->recheck_at = mono_now() + SCHEDULES_RECHECK;
	}
}

/* The moment a wake-up of the scheduler is looked at again. */
bool scheduler_recheck_due(void *scheduler, struct stmt_turn *t)
{
	struct scheduler *sc = scheduler;

	if (sc->recheck_at > 0 && t->now >= sc->recheck_at) {
		sc->recheck_at = 0;
		if (sc->on)
			schedules_poke(&sc->s, t->now);
	}
	return false;
}

double scheduler_recheck_when(void *scheduler, double now)
{
	const struct scheduler *sc = scheduler;

	(void)now;
	return sc->recheck_at;
}

/* A step is rare and short; before claims, so that a busy worker still
 * fires on time. */
bool scheduler_due(void *scheduler, struct stmt_turn *t)
{
	const struct scheduler *sc = scheduler;

	return sc->on && !sc->jobs->draining && schedules_ready(&sc->s, t->now);
}

double scheduler_when(void *scheduler, double now)
{
	const struct scheduler *sc = scheduler;

	return sc->on && !sc->jobs->draining ? schedules_wake_time(&sc->s, now) : 0;
}

bool scheduler_send(void *scheduler, struct stmt_turn *t, struct strbuf *sb)
{
	struct scheduler *sc = scheduler;

	sc->txn = schedules_build(&sc->s, sb, t->now);
	return true;
}

void scheduler_reply(void *scheduler, const struct db_reply *r)
{
	struct scheduler *sc = scheduler;

	/* A step is a transaction: one that failed part-way is ended before
	 * anything else is sent (a lost connection ends it by itself). */
	if (r->fail != DB_OK && r->fail != DB_LOST && sc->txn)
		claim_txn_left_open(sc->claim);
	if (r->fail == DB_LOST || r->fail == DB_RETRY || r->fail == DB_BUSY)
		conn_failed(sc->conn, r, "schedules");
	schedules_read(&sc->s, r, mono_now());
	if (sc->s.fired_new) {
		/* The job may be ours to run; with no wake-up trigger nothing
		 * else would tell us before the poll. */
		sc->s.fired_new = false;
		claim_want(sc->claim);
	}
}
