/* Settling: the worker's calls of kyu_settle, the procedure that moves
 * the jobs waiting for others on (sql/schema.sql; kyu_jobs(7),
 * "Workflows"). The triggers of kyu_jobs flag a job with dependents that
 * ends (after_changed) and leave an item in kyu_after_todo for the other
 * changes a dependent must hear of, in the transaction that made them;
 * kyu_settle acts on both. A worker calls it when a job it
 * claimed with dependents has ended (record.c), when a claim's reply says
 * that items wait (claim.c: an end made by someone else), and when the
 * supervisor relays an any-queue wake-up (sql/notify.sql sends one for
 * each item); then it claims at once, since what kyu_settle freed may be
 * due now. A chore of the statement order, behind the results and ahead
 * of the claim. Owns no job row. */
#ifndef KYU_SETTLE_H
#define KYU_SETTLE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/db.h"
#include "common/spell.h"
#include "conn.h"
#include "stmt.h"
#include "store_claim.h"

/* Items acted on per call: a cascade longer than this goes on in the
 * next call, which the claim after this one asks for. */
#define SETTLE_ITEMS 100
/* Every results round trip also asks whether kyu_settle has work
 * (record.c): a job may have got dependents after its claim (its claim's
 * has_downstream was 0), or a dependent of it was inserted by plain SQL
 * with no wake-up, and its end then leaves work nobody else may look for
 * before the poll. Two index dives riding on a round trip made anyway. */
#define SETTLE_WAKE_GAP 0.25
#define SETTLE_PROBE_SQL "SELECT " STORE_SETTLE_PENDING

struct settle {
	struct conn *conn;
	/* Called after each call that worked: claim at once (claim.c). */
	void (*settled)(void *ctx);
	void *settled_ctx;
	bool wanted;
	double after; /* monotonic: not before then (after a failure) */
	/* A call asked for by an any-queue wake-up, which anyone may send in
	 * floods: at most one per SETTLE_WAKE_GAP, the rest folded into it. */
	bool woken;
	double wake_after;
	struct spell failing; /* calls fail (logged once per spell) */
	uint64_t calls;
};

void settle_init(struct settle *s, struct conn *conn, void (*settled)(void *ctx),
		 void *settled_ctx);
/* Call kyu_settle at the next chance. */
void settle_want(struct settle *s);
/* An any-queue wake-up: call it, at most once per SETTLE_WAKE_GAP. */
void settle_wake(struct settle *s);
/* The result of SETTLE_PROBE_SQL: settle if it says items wait. */
void settle_probed(struct settle *s, const struct db_result *r);

/* Its row of the statement order (ctx: the settle). */
bool settle_due(void *settle, struct stmt_turn *t);
bool settle_send(void *settle, struct stmt_turn *t, struct strbuf *sb);
void settle_reply(void *settle, const struct db_reply *r);
double settle_when(void *settle, double now);

#endif
