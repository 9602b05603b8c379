/* A claimed row until its job starts: at once if a slot is free, else in
 * the prefetch ring (prefetch.c) until one frees up, or given back
 * (status 'waiting' again, due now, its attempt not counted) when it has
 * waited past the hold limit, when kyud stops, or when a reload drops its
 * queue.
 *
 * Who owns the row here: claim.c hands each row of a claim's reply to
 * held_take as a struct claimed (common/attempt.h); this module moves it
 * into jobs_start (jobs.c owns it from then on), or into the ring (which
 * owns it until it is popped), or gives it back: its result (OUT_RELEASE)
 * goes to results.c and its strings are freed here.
 *
 * Why apart from claim.c: the claim decides what to ask for and reads the
 * answer; this is what happens to a row once it is ours, and it runs
 * before every walk of the statement order (held_start), not only when a
 * claim comes back. */
#ifndef KYU_HELD_H
#define KYU_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/board.h"
#include "common/config.h"
#include "jobs.h"
#include "parent.h"
#include "prefetch.h"
#include "queues.h"
#include "results.h"

struct held {
	const struct kyu_config *cfg;
	struct jobs *jobs;
	struct results *results; /* a given-back row's result goes there (record.c's) */
	struct parent *parent;
	const struct queues *dir; /* the claim's directory: which queues are limited */
	struct board_worker *bw;
	struct prefetch ring; /* rows claimed ahead of a free slot */
	double reloaded_at;   /* monotonic: the last reload (dropped_by_reload) */
	uint64_t n_given_back;
};

void held_init(struct held *h, const struct kyu_config *cfg, struct jobs *jobs,
	       struct results *results, struct parent *parent, const struct queues *dir,
	       struct board_worker *bw);
void held_free(struct held *h);
/* A row a claim returned (taken: c is cleared): started, held or given
 * back. */
void held_take(struct held *h, struct claimed *c);
/* Start held jobs while slots are free; give back those held too long.
 * Before every walk of the statement order. */
void held_start(struct held *h);
/* Held jobs that could start now (held_start stopped after its share). */
bool held_startable(const struct held *h);
/* When the oldest held row must be given back (monotonic; 0: none held). */
double held_expiry(const struct held *h);
/* Give back every held row, saying why. */
void held_give_back_all(struct held *h, const char *why);
/* The configuration was reloaded: held rows of queues no longer served
 * go back now, and so will such rows of a claim that was in flight. */
void held_reload(struct held *h);

#endif
