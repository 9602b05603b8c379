/* kyu_attempts: one row per attempt that ended (kyu_jobs(7), "Attempts";
 * [kyud] history and attempt_output).
 *
 * Written as kyu_minutes is counted (common/minutes.h), and for the same
 * reason: no round trip of its own. One INSERT ... SELECT rides last in
 * every round trip that records results (a finish, or a claim carrying
 * plain successes), reads the batch's rows again by primary key and copies
 * the ones whose result was applied: still owned by the attempt's claim,
 * in a status a result leaves (waiting: retried). Everything the row says
 * of the attempt is the row's own, as the result just wrote it; only
 * "timed out" is not in the row, so kyud names those seqs.
 *
 * What a round trip does not settle stays pending, as in minutes.h:
 * results recorded by a round trip that failed before its INSERT are
 * copied by the next one (a retried job claimed again meanwhile has lost
 * its row then); results sent again after a lost reply are copied only if
 * their row changed after the new session began. Pure: statements and
 * pending rows only; record.c decides when. */
#ifndef KYU_HISTORY_H
#define KYU_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/util.h"

/* A failed INSERT (no table, no privilege) turns history off for this
 * long, then it is tried again. */
#define HISTORY_RETRY 60.0

struct history_row {
	uint64_t seq, token;
	bool unsure;  /* recorded by a round trip whose reply was lost, perhaps */
	bool timeout; /* ended at its time limit */
};

/* Recorded results without their row of kyu_attempts yet. */
struct history_pending {
	struct history_row *rows;
	int n, cap;
};

/* Who writes: the daemon's id in kyu_daemons (NULL: a worker started by
 * hand, which has none) and the bytes of output kept per attempt. */
struct history_writer {
	const char *daemon;
	int output;
	bool all; /* [kyud] history = all: first attempts that succeeded too */
};

/* Append "; " and the INSERT for the pending rows and f[0..n) to sb
 * (kyud's own give-backs, OUT_RELEASE, are no attempt). Returns false,
 * appending nothing, when there is none. */
bool history_build(struct strbuf *sb, const struct history_writer *wr,
		   const struct history_pending *p, const struct finish *f, int n);
/* At most how long history_build makes the INSERT of p and n results. */
size_t history_room(const struct history_pending *p, int n);
/* Keep f[0..n) pending (recorded, no row yet), except give-backs (and,
 * unless all, first attempts that succeeded). */
void history_keep(struct history_pending *p, bool all, const struct finish *f, int n);
void history_clear(struct history_pending *p);
void history_free(struct history_pending *p);

#endif
