/* Recording results: the round trip that writes the results waiting in
 * results.c into their rows (its row of the statement order), and the
 * count in kyu_minutes and the rows of kyu_attempts that ride at the end
 * of every round trip that records results, this one or a claim's
 * (minutes.h, history.h).
 *
 * Who owns the row here: results.c owns each attempt's struct finish
 * (common/attempt.h) from the attempt's end (jobs.c) until a round trip
 * has recorded it; this room builds the batch from results_batch (a
 * read-only view), reads what the reply recorded and tells results.c to
 * forget those (record_recorded), whether they went in this round trip or
 * rode along with a claim (claim.c). That is where a job's row ends.
 *
 * Why the cut: the claim's round trip carries results and their count
 * too, so what both need (the count, recorded results, when results may
 * go out: flush_after) is here, below the claim; what a recorded result
 * means to the claim (a key freed earlier may let a job start) goes back
 * up through the recorded hook. */
#ifndef KYU_RECORD_H
#define KYU_RECORD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/config.h"
#include "common/db.h"
#include "common/minutes.h"
#include "common/registry.h"
#include "common/spell.h"
#include "conn.h"
#include "history.h"
#include "jobs.h"
#include "results.h"
#include "settle.h"
#include "stmt.h"

struct record {
	const struct kyu_config *cfg;
	struct conn *conn;
	const struct jobs *jobs; /* a batch waits only while jobs still run */
	struct results results;
	double flush_after; /* monotonic: a deadlocked or refused flush waits until then */
	/* The round trip in flight, when it is a finish. */
	int sent_count, sent_stmts;
	bool sent_probe; /* it ends (before the count) with settle.h's probe: always */
	/* A failure hook's transaction (store_finish.h) was left open by a
	 * failed statement: claim.c rolls it back before anything else. */
	bool txn_open;
	/* The results recorded by a round trip (the first n of f; retried:
	 * one of them goes back to waiting for its backoff): claim.c. */
	void (*recorded)(void *ctx, const struct finish *f, int n, bool retried);
	void *recorded_ctx;
	struct settle *settle; /* told when a job with dependents was recorded */

	/* Counting ended jobs in kyu_minutes (minutes.h). */
	char daemon[REGISTRY_ID_MAX]; /* the daemon's token, the rows' writer */
	int worker;
	double minutes_after;         /* monotonic: a count that failed is tried again then */
	struct spell minutes_failing; /* counting fails (logged at its start and end) */
	struct minutes_pending pending;
	/* The round trip in flight (a finish or a claim) ends with the
	 * count, and what the count's statement did. */
	bool counted;
	enum minutes_outcome m;

	/* The rows of kyu_attempts (history.h), written after the count. */
	const char *history_daemon;   /* daemon, or NULL: a worker started by hand has no id */
	double history_after;         /* monotonic: history that failed is tried again then */
	struct spell history_failing; /* writing it fails (logged at its start and end) */
	struct history_pending history;
	/* The round trip in flight ends with the INSERT, and what it did. */
	bool history_sent;
	enum minutes_outcome h;

	uint64_t n_finished, n_rejected;
};

/* daemon_id: the daemon's token (NULL: a worker started by hand counts
 * under a token of its own, made from host). */
void record_init(struct record *rec, const struct kyu_config *cfg, struct conn *conn,
		 const struct jobs *jobs, int worker, const char *daemon_id, const char *host,
		 struct settle *settle,
		 void (*recorded)(void *ctx, const struct finish *f, int n, bool retried),
		 void *recorded_ctx);
void record_free(struct record *rec);
/* A new connection: what was pending was counted on the old session
 * perhaps, which is unknowable now. */
void record_connected(struct record *rec);

/* Whether round trips that record results count them now; pending
 * counts are dropped while not. */
bool record_counting(struct record *rec);
/* Append the count of f[0..n) (and of what is pending) to a round trip
 * that records them, when counting is on; the round trip in flight is
 * then counted. Then, when [kyud] history is on, their rows of
 * kyu_attempts (and the pending ones). */
void record_count_add(struct record *rec, struct strbuf *sb, const struct finish *f, int n);
/* The reply r of a round trip of n_body statements, with the count and
 * the attempts' INSERT after them if they were sent: the body's view in
 * *body. */
void record_count_read(struct record *rec, const struct db_reply *r, int n_body,
		       struct db_reply *body);
/* What the count and the attempts' INSERT of reply r settled: f[0..n) are the results the round
 * trip carried, of which the first `recorded` are recorded. Call before
 * record_recorded forgets them. */
void record_count_settle(struct record *rec, const struct db_reply *r, const struct finish *f,
			 int n, int recorded);
/* The first n results of the last batch are recorded, rejected of them
 * because their row had passed to another claim: forget them. */
void record_recorded(struct record *rec, int n, int rejected);

/* The finish's row of the statement order (ctx: the record). */
bool record_due(void *record, struct stmt_turn *t);
bool record_send(void *record, struct stmt_turn *t, struct strbuf *sb);
void record_reply(void *record, const struct db_reply *r);
void record_unsent(void *record);
double record_when(void *record, double now);

#endif
