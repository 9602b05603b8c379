/* The scheduler: worker 1 turning kyu_schedules' rows into jobs, by
 * sending the statements schedules.c builds (a scan, then one step per
 * due schedule) in their place in the statement order, and reading their
 * replies back into it. A chore: due when schedules.c says (the earliest
 * next_run, a wake-up, else every poll_interval, 60 s at least), before
 * claims so that a busy worker still fires on time; looked at again
 * shortly after a wake-up of the schedules (a row changed in SQL wakes it
 * before its commit).
 *
 * Why apart from schedules.c: that module is pure (statements and
 * replies, unit-tested without a connection); this one holds what the
 * worker adds: whether this worker runs it, the transaction a failed step
 * may leave open (claim.c rolls it back), and the claim a fired job may
 * want. A job it enqueues is an ordinary row, claimed like any other. */
#ifndef KYU_SCHEDULER_H
#define KYU_SCHEDULER_H

#include <stdbool.h>

#include "claim.h"
#include "common/config.h"
#include "common/db.h"
#include "conn.h"
#include "jobs.h"
#include "schedules.h"
#include "stmt.h"

struct scheduler {
	struct schedules s;
	const struct kyu_config *cfg;
	int worker;
	struct conn *conn;
	struct claim *claim;
	const struct jobs *jobs;
	bool on;           /* this worker runs the schedules (worker 1, [kyud] schedules) */
	bool txn;          /* the statement in flight opened a transaction */
	double recheck_at; /* monotonic: read kyu_schedules again then (0: no) */
};

void scheduler_init(struct scheduler *sc, const struct kyu_config *cfg, int worker,
		    struct conn *conn, struct claim *claim, const struct jobs *jobs);
void scheduler_free(struct scheduler *sc);
/* A new connection: what was read is forgotten. */
void scheduler_connected(struct scheduler *sc);
/* After a reload: schedules may have been turned on or off (a step in
 * flight finishes; turning them off ends them after it). */
void scheduler_reload(struct scheduler *sc);
/* The supervisor relayed a wake-up of the schedules (KYU_SCHEDULES). */
void scheduler_wake(struct scheduler *sc);

/* Its rows of the statement order (ctx: the scheduler): the recheck of a
 * wake-up (a moment), then the statement. */
bool scheduler_recheck_due(void *scheduler, struct stmt_turn *t);
double scheduler_recheck_when(void *scheduler, double now);
bool scheduler_due(void *scheduler, struct stmt_turn *t);
bool scheduler_send(void *scheduler, struct stmt_turn *t, struct strbuf *sb);
void scheduler_reply(void *scheduler, const struct db_reply *r);
double scheduler_when(void *scheduler, double now);

#endif
