/* Every statement kyud sends to kyu_jobs, built as text, and the reading of
 * their replies. Pure: no I/O and no connection (the worker sends the text
 * through db.c), so each builder is unit-tested without a server and the
 * benches time exactly the statements kyud sends.
 *
 * This header is the whole store: it includes the claim (store_claim.h)
 * and the results (store_finish.h), so that its users (the worker, the
 * unit tests, the benches) include one header as before the cut (issue
 * 26), and each part keeps a header of its own, included first by its .c.
 * store.c itself holds the short statements on rows already claimed or
 * finished, each of one or two statements and helpers of its own: the
 * release of a failed claim, the heartbeat, the live output and the
 * cleanup. Their names (store_release_*, store_heartbeat_*, store_live_*,
 * store_cleanup_*) fit no module's prefix but this one's, so they stay
 * here rather than in a store_chores.c whose name they would not carry. */
#ifndef KYU_STORE_H
#define KYU_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/db.h"
#include "common/util.h"
#include "store_claim.h"
#include "store_finish.h"

/* ---- release ----------------------------------------------------------- */

/* Give back every row a failed claim of token marked: its round trip
 * stopped at a failed statement after some of its UPDATEs had committed,
 * and the worker never learnt which rows they took. */
void store_release_build(struct strbuf *sb, uint64_t token);

/* ---- leases ------------------------------------------------------------ */

/* Extend the leases of (seqs, tokens), recording pids[i] where non-zero,
 * and read every row's owner and status in the same round trip, so that a
 * lease lost or a job cancelled is seen without a second statement. */
void store_heartbeat_build(struct strbuf *sb, const struct kyu_config *cfg, const uint64_t *seqs,
			   const uint64_t *tokens, const int *pids, int n);
/* Calls cb for every row found (rows not found are gone). Returns the
 * number of rows extended, or -1 when the reply failed. */
int64_t store_heartbeat_read(const struct db_reply *r,
			     void (*cb)(void *arg, uint64_t seq, uint64_t owner,
					const char *status),
			     void *arg);

/* The server's NOW(6) the heartbeat read (µs since '1970-01-01', the
 * leases' scale), or 0 when its reply has no row. */
int64_t store_heartbeat_now(const struct db_reply *r);

/* ---- live output ------------------------------------------------------- */

/* The live tail of one running attempt (capture_live), to be written,
 * and its progress. */
struct live_row {
	uint64_t seq, token;
	const char *text; /* NULL: its output did not grow */
	size_t len;
	bool status;      /* its progress changed: progress and note written */
	int progress;     /* 0..100 */
	const char *note; /* NULL: none */
};
/* One UPDATE writing each row's text into its output and, for the rows
 * whose progress changed, the progress, fenced like the heartbeat: a row
 * that is no longer running under that claim's token is not touched. A
 * column no row changes is not named (the statement of jobs that never
 * use their status channel is what it was before it). */
void store_live_build(struct strbuf *sb, const struct live_row *rows, int n);
/* Bytes store_live_build may take for a row of len bytes (escaping may
 * double every byte). */
size_t store_live_room(size_t len);

/* ---- retention --------------------------------------------------------- */

/* Delete one batch of finished rows older than their retention (succeeded:
 * [kyud] retention; failed and cancelled: store_retention_failed), only if
 * no other session holds the cleanup lock; released in the same round
 * trip. lock false: without the lock (for a server that refuses
 * GET_LOCK). */
#define STORE_CLEANUP_STMTS 4 /* statements of the cleanup */
void store_cleanup_build_lock(struct strbuf *sb, const struct kyu_config *cfg, bool lock);
void store_cleanup_build(struct strbuf *sb, const struct kyu_config *cfg); /* lock true */
/* The reply failed at GET_LOCK itself (Galera releases refuse it with
 * 1235): then the next cleanup goes without it. */
bool store_cleanup_lock_refused(const struct db_reply *r);
/* Seconds failed and cancelled rows are kept: the longer of [kyud]
 * retention_failed and retention (an id is held at least retention). */
int store_retention_failed(const struct kyu_config *cfg);
/* Rows deleted (0 when another session held the lock), or -1. */
int64_t store_cleanup_read(const struct db_reply *r);

#endif
