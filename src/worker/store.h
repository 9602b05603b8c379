/* Every statement kyud sends to kyu_jobs, built as text, and the reading of
 * their replies. Pure: no I/O and no connection (the worker sends the text
 * through db.c), so each builder is unit-tested without a server and the
 * benches time exactly the statements kyud sends. */
#ifndef KYU_STORE_H
#define KYU_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/config.h"
#include "common/db.h"
#include "common/util.h"
#include "queues.h"

/* A success with no output and no message: recorded in bulk. */
bool store_finish_plain(const struct finish *f);

/* ---- claim: record plain successes, mark, select, in one round trip ---- */

/* Append the claim of up to n due rows of any unrestricted queue (the
 * catch-all) for token to sb. The first n_fin of fin (all plain
 * successes, or 0) ride along in front. */
void store_claim_build(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
		       const char *host, int n, const struct finish *fin, int n_fin);

/* A worker's claim: which queues, how many from each (queues.c). */
struct claim_plan {
	const struct qpart *parts;
	int n_parts;
	bool directory; /* read the queue directory in the same round trip */
	bool prepared;  /* kyu_claim and kyu_reclaim exist on this connection */
	bool rollback;  /* a failed claim may have left its transaction open */
	/* Mark with SELECT ... FOR UPDATE SKIP LOCKED whatever the configured
	 * shape: a row lock held by another transaction stalled a claim. */
	bool skip_locked;
};
/* Where each statement's result is in the reply. */
struct claim_layout {
	int fin_at, dir_at, sel_at; /* -1: not sent */
	int n_fin, asked, n_stmts;
	bool prepares;    /* this claim prepared kyu_claim and kyu_reclaim */
	bool transaction; /* it holds restricted parts */
};
void store_claim_build_plan(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
			    const char *host, const struct claim_plan *plan, const struct finish *fin,
			    int n_fin, struct claim_layout *lay);

struct claim_reply {
	struct claimed *rows; /* got of them; free with store_claimed_free */
	int got;
	/* When fewer than asked were claimed: microseconds until the next row
	 * of the served queues becomes due, paused ones included (<= 0: now;
	 * INT64_MAX: nothing waiting or running); else INT64_MIN. */
	int64_t next_due_us;
	const struct db_result *dir; /* the directory, when read (lives as the reply) */
	bool fin_done;   /* the results in front were recorded */
	int fin_rejected; /* of those, rows that no longer belonged to us */
	enum db_fail fail;
};
/* Read the reply of a claim built with (n, n_fin) by store_claim_build. */
void store_claim_read(const struct db_reply *r, int n, int n_fin, uint64_t token, double claimed_at,
		      struct claim_reply *out);
void store_claim_read_plan(const struct db_reply *r, const struct claim_layout *lay, uint64_t token,
			   double claimed_at, struct claim_reply *out);
void store_claimed_free(struct claimed *rows, int n);
void store_claimed_clear(struct claimed *c);

/* Give back every row a failed claim of token marked: its round trip
 * stopped at a failed statement after some of its UPDATEs had committed,
 * and the worker never learnt which rows they took. */
void store_release_build(struct strbuf *sb, uint64_t token);

/* ---- results ----------------------------------------------------------- */

/* Append the statements recording f[0..] to sb: one UPDATE for all plain
 * successes, then one per other result, as long as the whole stays within
 * max_len bytes (a result whose output alone would not fit has its output
 * cut to fit, with a marker). Returns how many of f it covers (at least
 * one when n > 0) and the number of statements in *n_stmts. */
int store_finish_build(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f, int n,
		       size_t max_len, int *n_stmts);
/* Read the reply of store_finish_build(f, count): *done is how many of f's
 * results are recorded (a failed statement stops the rest), *rejected
 * how many of those found their row taken over by another claim. */
void store_finish_read(const struct db_reply *r, const struct finish *f, int count, int *done,
		       int *rejected);

/* ---- leases ------------------------------------------------------------ */

/* Extend the leases of (seqs, tokens), recording pids[i] where non-zero,
 * and read every row's owner and status in the same round trip, so that a
 * lease lost or a job cancelled is seen without a second statement. */
void store_heartbeat_build(struct strbuf *sb, const struct kyu_config *cfg, const uint64_t *seqs,
			   const uint64_t *tokens, const int *pids, int n);
/* Calls cb for every row found (rows not found are gone). Returns the
 * number of rows extended, or -1 when the reply failed. */
int64_t store_heartbeat_read(const struct db_reply *r,
			     void (*cb)(void *arg, uint64_t seq, uint64_t owner, const char *status),
			     void *arg);

/* ---- live output ------------------------------------------------------- */

/* The live tail of one running attempt (capture_live), to be written. */
struct live_row {
	uint64_t seq, token;
	const char *text;
	size_t len;
};
/* One UPDATE writing each row's text into its output, fenced like the
 * heartbeat: a row that is no longer running under that claim's token is
 * not touched. */
void store_live_build(struct strbuf *sb, const struct live_row *rows, int n);
/* Bytes store_live_build may take for a row of len bytes (escaping may
 * double every byte). */
size_t store_live_room(size_t len);

/* ---- retention --------------------------------------------------------- */

/* Delete one batch of finished rows older than the retention, only if no
 * other session holds the cleanup lock; released in the same round trip.
 * lock false: without the lock (for a server that refuses GET_LOCK). */
#define STORE_CLEANUP_STMTS 4 /* statements of the cleanup */
void store_cleanup_build_lock(struct strbuf *sb, const struct kyu_config *cfg, bool lock);
void store_cleanup_build(struct strbuf *sb, const struct kyu_config *cfg); /* lock true */
/* The reply failed at GET_LOCK itself (Galera releases refuse it with
 * 1235): then the next cleanup goes without it. */
bool store_cleanup_lock_refused(const struct db_reply *r);
/* Rows deleted (0 when another session held the lock), or -1. */
int64_t store_cleanup_read(const struct db_reply *r);

#endif
