/* Which queues a worker claims from, and how many rows from each.
 *
 * A worker keeps the queue directory it last read (store.c's directory
 * statement: every queue holding waiting or running rows, its earliest due
 * time and its kyu_queues settings) and shares each claim between the
 * queues that have due rows, by weight: stride scheduling. Every queue has
 * a pass value that grows by 1/weight per job it was given; each chunk of
 * a claim goes to the eligible queue with the smallest pass. A queue
 * that (re)appears starts at the smallest pass of the others, so an idle
 * spell earns it no burst. A queue whose claim came back short is left out
 * until its retry moment (queues_claimed) or a wake-up (queues_undrain).
 * Pure: no I/O (tests/unit/test_queues.c). */
#ifndef KYU_QUEUES_H
#define KYU_QUEUES_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attr.h"
#include "common/db.h"

/* Queues one claim takes rows from at most: each costs a statement (a
 * restricted one, four), so a claim stays one bounded round trip. */
#define QUEUES_MAX_PARTS 16
/* Rows a queue of weight 1 is given at a time. */
#define QUEUES_QUANTUM 32

struct qentry {
	char *name;
	double due_at;    /* monotonic: the queue's earliest row is due */
	double retry_at;  /* drained: when to look again (0: at the next read) */
	bool paused;      /* kyu_queues.paused: never planned */
	bool restricted;  /* max_running or rate_limit set: claimed in a transaction */
	bool rated;       /* rate_limit set: starts are logged */
	double expiry_at; /* restricted: earliest lease of its running rows (0: none) */
	double interval;  /* rated: rate_period / rate_limit, s */
	double open_at;   /* rated: when the oldest start in its window leaves it (0: none) */
	unsigned weight;  /* >= 1 */
	/* kyu_queues.key_max_running: > 1, its rows with a key are claimed
	 * into slots (store_claim.c, "keyed") */
	unsigned key_max;
	double pass;
	bool drained;
};

struct queues {
	struct qentry *e; /* sorted by name (byte order, as utf8mb4_bin) */
	int n;
	double read_at; /* monotonic; 0: never read */
	int arrived;    /* at the last read: due queues that were not due before */
};

/* One queue's share of a claim. name NULL: the catch-all (every queue
 * without restrictions, by due time), planned only when nothing else is
 * known to be due. */
struct qpart {
	const char *name; /* borrowed from the directory; valid until the next queues_read */
	int n;
	bool restricted, rated;
	bool reclaim; /* restricted: a running row's lease may have expired */
	bool keyed;   /* key_max_running > 1: the keyed form of its claim */
};

/* Build in out the directory the rows of a directory statement describe
 * (columns: queue, microseconds until due, paused, max_running,
 * rate_limit, rate_period, weight, for a restricted queue microseconds
 * until its earliest running lease expires, for a rated one until the
 * oldest start counted in its window leaves it, and key_max_running),
 * keeping each queue's pass from d.
 * Returns 0, or -1 when the result does not have that shape (out is
 * untouched). */
KYU_MUSTCHECK int queues_read(const struct queues *d, const struct db_result *r, double now,
			      struct queues *out);
void queues_free(struct queues *d);

/* Share n rows between the eligible queues, in chunks of QUEUES_QUANTUM x
 * weight rows given to the queue with the smallest pass. Writes up to
 * QUEUES_MAX_PARTS parts and returns how many. Restricted queues are asked
 * like the others: their limits are applied by the claim itself, and a row
 * claimed ahead of a free slot counts against them while it waits (at most
 * the hold limit, prefetch.h). */
KYU_MUSTCHECK int queues_plan(struct queues *d, double now, int n, struct qpart *parts);

/* After the claim of parts: got[i] rows came back for parts[i]. A part
 * that got fewer than it asked is drained until the next read, and is
 * looked at again at the first moment something may have changed that
 * nobody announces: the earliest running lease's expiry, a rated queue's
 * window opening (else one emission interval), at the latest
 * blocked_retry s later. A queue without limits whose earliest row (as
 * the directory read since says) became due after the claim was sent
 * (claimed_at) is not drained: it was short of due rows, not blocked.
 * Nor is a keyed part that got rows: its claim starts at most one row per
 * key, and a key may have more free slots. */
void queues_claimed(struct queues *d, const struct qpart *parts, int n_parts, const int *got,
		    double claimed_at, double now, double blocked_retry);

/* Something may have freed what the drained queues wait for (a wake-up,
 * a slot freed here): every queue is asked again. A directory read does
 * not undrain (queues_read). */
void queues_undrain(struct queues *d);

/* Microseconds from now until the earliest queue that may have rows to
 * claim (<= 0: now), INT64_MAX when none. */
int64_t queues_next_due_us(const struct queues *d, double now);

/* A restricted queue has rows to claim now: a freed slot should claim. */
bool queues_restricted_due(const struct queues *d, double now);

/* Queues known to hold due rows that cannot be claimed now (paused,
 * drained): a catch-all claim would scan past them. */
bool queues_blocked_backlog(const struct queues *d, double now);

/* Some queue had due rows at the last read (claimable or not): the
 * directory is worth reading again. */
bool queues_any_due(const struct queues *d, double now);

const struct qentry *queues_find(const struct queues *d, const char *name);

/* The fan (claim.c): with many queues due at once, claims take one row of
 * each queue in turn, in name order, and the directory keeps only the
 * queues the fan leaves out: paused, restricted (max_running, a rate)
 * and keyed (key_max_running > 1) ones, which keep their own claims. */
/* Queues with rows to claim now that the fan would serve. */
int queues_count_plain(const struct queues *d, double now);
/* Keep only the queues the fan leaves out. */
void queues_keep_special(struct queues *d);
/* Whether the fan leaves e out. */
bool queues_special(const struct qentry *e);

#endif
