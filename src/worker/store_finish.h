/* Recording results: the UPDATEs that write attempts' ends into their
 * rows (one for all plain successes, one per other result), kept within
 * the server's max_allowed_packet, and the reading of their replies. Pure,
 * like all of store.h.
 *
 * Apart from store.c along the statement family: the results'
 * helpers (costs, backoff, the cut of output) serve nothing else. The one
 * thing shared is the bulk UPDATE of plain successes, which a claim also
 * carries in front (store_claim.c): it is exported here, with the family
 * it belongs to, rather than moved to a module of its own. */
#ifndef KYU_STORE_FINISH_H
#define KYU_STORE_FINISH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/attr.h"
#include "common/attempt.h"
#include "common/config.h"
#include "common/db.h"
#include "common/util.h"

/* The id of every failure hook's job begins with this (a hook job that
 * fails fires none): kyu_jobs(7), "Failure hooks". */
#define STORE_HOOK_PREFIX "on_failure:"

/* A success with no output and no message: recorded in bulk. */
bool store_finish_plain(const struct finish *f);

/* Append one UPDATE for the plain successes among f, whatever their claim:
 * the common case under load costs one statement per batch. Returns how
 * many it covers (0: nothing appended). store_finish_build and
 * store_claim_build_plan both send it. */
int store_finish_build_plain(struct strbuf *sb, const struct finish *f, int n);

/* Append the statements recording f[0..] to sb: one UPDATE for all plain
 * successes, then one per other result, as long as the whole stays within
 * max_len bytes (a result whose output alone would not fit has its output
 * cut to fit, with a marker). Returns how many of f it covers (at least
 * one when n > 0) and the number of statements in *n_stmts. */
KYU_MUSTCHECK int store_finish_build(struct strbuf *sb, const struct kyu_config *cfg,
				     const struct finish *f, int n, size_t max_len, int *n_stmts);
/* Read the reply of store_finish_build(f, count): *done is how many of f's
 * results are recorded (a failed statement stops the rest), *rejected
 * how many of those found their row taken over by another claim. */
void store_finish_read(const struct db_reply *r, const struct finish *f, int count, int *done,
		       int *rejected);
/* How many statements result f takes (a failure for good with its hook:
 * START TRANSACTION, UPDATE, INSERT, COMMIT). */
int store_finish_stmts(const struct finish *f);
/* Whether the reply r of store_finish_build(f, count) stopped inside a
 * hook's transaction, which is then still open on the connection: it must
 * be rolled back before anything else is sent (a lease renewal sent into
 * it would not be committed). */
bool store_finish_txn_open(const struct db_reply *r, const struct finish *f, int count);

#endif
