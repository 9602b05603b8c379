/* Live output: while an attempt runs, the recent tail of what it wrote is
 * copied into its row's output column (kyud(8), "Live output"), so that
 * kyu web and plain SQL see it before the attempt ends.
 *
 * What it costs is bounded, and nothing for most jobs: a job's tail is
 * written only once the job has run for [kyud] live_output seconds, only
 * when it wrote something since its last write, and at most LIVE_TAIL_MAX
 * bytes of it. One UPDATE carries every such job of the worker, at most
 * once per live_output seconds, fenced by claim token and status like the
 * heartbeat, so a worker that lost a row never writes it. The worker sends
 * it after the heartbeat when both are due; the result at the attempt's
 * end still writes the whole kept output over it.
 *
 * A job's progress and note from its status channel (status.h) go with
 * the same write, on the same terms: only once it has run an interval,
 * only when they changed, the last ones, however often the job wrote
 * them. Its result waits for the attempt's end (results.c).
 *
 * The write is one chore of the worker's statement order (pump.c): its
 * row's columns are at the end of this header. The jobs are jobs.c's (the
 * slots are borrowed); this module owns only the write in flight. */
#ifndef KYU_LIVE_H
#define KYU_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"
#include "common/spell.h"
#include "common/util.h"
#include "conn.h"
#include "job.h"
#include "stmt.h"

/* A screenful of recent lines: enough to see what a job is doing, small
 * enough that a write of every slot of a worker stays a few pages. */
#define LIVE_TAIL_MAX 4096

struct live {
	struct conn *conn;
	struct job **slots; /* the worker's, n_slots long; NULL entries are free */
	int n_slots;
	double interval; /* seconds; 0: off */
	double next_at;  /* monotonic: no write before then */
	int start;       /* the slot the next write looks at first */
	/* The write in flight: which attempts, and how much each had written. */
	uint64_t *seqs, *tokens, *totals, *gens; /* gens: status.gen (status.h) */
	int n;
	struct spell failing; /* writes fail (logged at the start and end of a spell) */
	uint64_t writes, rows;
};

void live_init(struct live *l, struct job **slots, int n_slots, const struct kyu_config *cfg,
	       struct conn *conn);
void live_configure(struct live *l, const struct kyu_config *cfg);
void live_free(struct live *l);
/* A write should be sent now. */
bool live_due(const struct live *l, double now);
/* When the next write may become due (monotonic), with the output
 * written so far; 0 when none may (off, nothing new to write). */
double live_next(const struct live *l);
/* Append the write of every job that is due to sb, within max_len bytes
 * (the jobs left out come first next time); false (nothing appended)
 * when none is. Either way, the next write waits an interval. */
bool live_build(struct live *l, double now, size_t max_len, struct strbuf *sb);
/* The write's reply: on success each job written remembers how much of
 * its output is in its row. A failure is only retried at the next
 * interval (the row keeps the tail written before, if any). */
KYU_MUSTCHECK int live_reply(struct live *l,
			     const struct db_reply *r); /* jobs written (0 on failure) */

/* The write's row of the statement order (ctx: the live). */
bool live_write_due(void *live, struct stmt_turn *t);
bool live_write_send(void *live, struct stmt_turn *t, struct strbuf *sb);
void live_write_reply(void *live, const struct db_reply *r);
double live_write_when(void *live, double now);

#endif
