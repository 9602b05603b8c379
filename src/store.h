/* Every statement kyud runs against kyu_jobs. Each function is one or a
 * few round trips; callers decide when to call them. */
#ifndef KYU_STORE_H
#define KYU_STORE_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "db.h"

struct claimed {
	uint64_t seq;
	char *id, *queue, *command, *argv_json, *env_json, *cwd;
	unsigned attempts, tempfails, max_attempts, time_limit;
};

/* How an attempt ended, as recorded in the row. */
enum outcome {
	OUT_SUCCEEDED,
	OUT_RETRY,     /* failed, goes back to waiting after a backoff */
	OUT_FAILED,    /* failed for good */
	OUT_RELEASE,   /* interrupted by kyud itself: due again now, attempt not counted */
	OUT_CANCELLED, /* the user cancelled it while it ran */
};

struct finish {
	uint64_t seq, token;
	int pid; /* the job's process, 0 if it never started */
	enum outcome outcome;
	int exit_code; /* -1: none */
	int signal;    /* 0: none */
	bool tempfail; /* EX_TEMPFAIL: retry; counted in tempfails, not against max_attempts */
	const char *error;
	const char *output;
	size_t output_len;
};

/* Results that may ride along with a claim: plain successes (see
 * store_finish_plain), recorded by one UPDATE sent in the claim's round
 * trip. done is set when it ran (then rejected counts as for
 * store_finish), even when the claim after it failed. */
struct claim_finish {
	const struct finish *f;
	int n;
	bool done;
	int rejected;
};

/* Record fin (may be NULL), claim up to n due jobs for token (mark), then
 * read them (select): all in one round trip. Returns the number claimed
 * (rows in *ret, caller frees with store_claimed_free) or -1 with db->err
 * set. When fewer than n were claimed, *next_due_us is set to the
 * microseconds until the next row becomes due (<= 0: now; INT64_MAX:
 * nothing is waiting or running), else to INT64_MIN. */
int store_claim(struct db *db, const struct kyu_config *cfg, uint64_t token, const char *host, int n,
		struct claim_finish *fin, struct claimed **ret, int64_t *next_due_us, enum db_fail *fail);
/* A success with no output and no message: recorded in bulk. */
bool store_finish_plain(const struct finish *f);
void store_claimed_free(struct claimed *rows, int n);
/* Free the fields of one row (the row itself is the caller's). */
void store_claimed_clear(struct claimed *c);

/* Extend the leases of the given (seq, token) pairs, and record the pid of
 * jobs whose pids[i] is non-zero. Returns the number of rows extended, or -1. */
int64_t store_heartbeat(struct db *db, const struct kyu_config *cfg, const uint64_t *seqs,
			const uint64_t *tokens, const int *pids, int n, enum db_fail *fail);

/* For rows that a heartbeat did not extend: their current status and
 * owner, to tell a cancel from a lost lease. Calls back per row found. */
int store_inspect(struct db *db, const uint64_t *seqs, int n,
		  void (*cb)(void *arg, uint64_t seq, uint64_t owner, const char *status), void *arg,
		  enum db_fail *fail);

/* Record finishes. Plain successes with no output are written in one
 * statement per token; the rest one by one. Returns the number of rows
 * written; *rejected counts finishes whose row no longer belonged to us. */
int store_finish(struct db *db, const struct kyu_config *cfg, const struct finish *f, int n,
		 int *rejected, enum db_fail *fail);

/* Delete finished rows older than the retention, one batch, if no other
 * process holds the cleanup lock. Returns rows deleted or -1. */
int64_t store_cleanup(struct db *db, const struct kyu_config *cfg, enum db_fail *fail);

#endif
