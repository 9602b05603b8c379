/* Claiming ahead of free slots (prefetch), and how far ahead.
 *
 * What the database costs per job depends on the claim's batch size, not
 * on how many children run at once (notes/DESIGN.md), so a worker claims
 * more rows than it has free slots and holds the rest here until a slot
 * frees up. A held row is `running` in the table but has not started, so:
 * a worker holds about HOLD_HORIZON seconds of work at the rate its jobs
 * have been finishing, never more than `prefetch` rows, nothing until it
 * has seen a job end, and never more than its last jobs' rate of ending
 * would start within half the hold limit (what its slots run is not what
 * a loaded machine lets it start); a row held longer than the hold limit
 * is given back.
 * Pure apart from the ring's memory: unit-tested (tests/unit/test_prefetch.c). */
#ifndef KYU_PREFETCH_H
#define KYU_PREFETCH_H

#include <stdbool.h>

#include "store.h"

/* 0.1 s rather than 0.05: a claim's statements cost about as much for 20
 * rows as for 10, and the number of statements per job is most of what a
 * job costs the database (issue 40); the price, a held job's wait, is
 * still a tenth of a second. */
#define HOLD_HORIZON 0.1
#define HOLD_LIMIT 1.0
#define RATE_ENDS 32

struct prefetch {
	struct claimed *ring; /* oldest first */
	int head, n, cap;
	int slots, max;
	double avg_run; /* moving average of recent attempts' run time, s; 0: none seen */
	double hold_limit;
	/* When the last RATE_ENDS jobs ended (any way), a ring: n_ends of
	 * them, the oldest at end_head once it is full. */
	double end_at[RATE_ENDS];
	int n_ends, end_head;
};

/* lease and fence_margin decide the hold limit: well inside the
 * self-fencing deadline a held row's lease is subject to from its claim. */
void prefetch_init(struct prefetch *p, int slots, int max, int lease, int fence_margin);
void prefetch_free(struct prefetch *p);
/* Rows to claim beyond the free slots, from the average run time alone. */
int prefetch_target(const struct prefetch *p);
/* Rows to claim beyond the free slots: the target, at most what the last
 * jobs' rate of ending starts within half the hold limit. */
int prefetch_room(const struct prefetch *p);
/* An attempt ran for run seconds and ended on its own. */
void prefetch_ran(struct prefetch *p, double run);
/* A job ended (any way) at monotonic time now. */
void prefetch_ended(struct prefetch *p, double now);
/* A held row was given back: slots free up slower than the average says,
 * so claim no further ahead until short jobs pull it down again (instead
 * of claiming and giving back every hold limit). */
void prefetch_gave_back(struct prefetch *p);
/* Take c (moved: c is cleared); false when the ring is full. */
bool prefetch_push(struct prefetch *p, struct claimed *c);
/* Move the oldest held row to out; false when none. */
bool prefetch_pop(struct prefetch *p, struct claimed *out);
/* Monotonic time the oldest held row expires, or 0 when none is held. */
double prefetch_expiry(const struct prefetch *p);

#endif
