/* The scoreboard: kyud's own counters and histograms, in one shared memory
 * file (a memfd) that the supervisor creates once and hands to every worker
 * and to the metrics process.
 *
 * Each worker writes only its own slot, with plain relaxed stores (one
 * writer per word: no locks, no read-modify-write between processes); the
 * metrics process maps the file read-only and sums the slots when it is
 * scraped. A worker that is restarted maps the same slot again and counts
 * on, so every counter only grows while the supervisor lives, which is
 * what Prometheus expects of a counter. Nothing here touches the database:
 * counting costs a job a few stores. */
#ifndef KYU_BOARD_H
#define KYU_BOARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attr.h"

/* A worker starts with the scoreboard on this descriptor (after the
 * control socket, 3, and the configuration, 4). */
#define BOARD_FD 5

#define BOARD_MAX_WORKERS 256
/* Queue labels one worker keeps; the jobs of further queues are counted
 * under BOARD_OTHER_QUEUE. Bounded, because the names come from rows. */
#define BOARD_QUEUES 64
#define BOARD_OTHER_QUEUE "(other)"
/* The queue column holds 64 characters of utf8mb4, up to 4 bytes each. */
#define BOARD_QUEUE_NAME 257

/* What happened to jobs, per queue. */
enum board_job {
	BJ_STARTED,   /* an attempt's process started */
	BJ_SUCCEEDED, /* an attempt succeeded */
	BJ_FAILED,    /* a job failed for good (started or not) */
	BJ_RETRIED,   /* an attempt failed and the job waits for another */
	BJ_CANCELLED, /* the user cancelled a running job */
	BJ_TIMED_OUT, /* an attempt was killed at its time limit (also counted as failed or retried) */
	BJ_GIVEN_BACK, /* a claimed job was given back without starting */
	BJ_N
};

/* Per worker. */
enum board_counter {
	BC_CLAIMS,     /* claim round trips that completed */
	BC_DEADLOCKS,  /* statements retried after a deadlock or lock wait timeout */
	BC_RECONNECTS, /* connections re-established after a loss */
	BC_FENCES,     /* attempts killed because their lease could not be renewed */
	BC_N
};

enum board_gauge {
	BG_RUNNING, /* attempts running now */
	BG_N
};

enum board_hist {
	BH_CLAIM,     /* claim round trip, seconds */
	BH_START,     /* from due (run_at) to the start of the process, seconds */
	BH_HEARTBEAT, /* from when a lease renewal was due to its confirmation, seconds */
	BH_BATCH,     /* rows per claim */
	BH_N
};

#define BOARD_BUCKETS 18

struct board_histogram {
	/* Not cumulative; the last is +Inf. Their total is the count (a
	 * separate count word could disagree with them in a reader's view). */
	uint64_t bucket[BOARD_BUCKETS + 1];
	uint64_t sum; /* microseconds, or rows for BH_BATCH */
};

struct board_queue {
	char name[BOARD_QUEUE_NAME];
	uint64_t n[BJ_N];
};

struct board_worker {
	uint64_t counter[BC_N];
	uint64_t gauge[BG_N];
	struct board_histogram hist[BH_N];
	/* Entries below n_queues are complete (published with a release
	 * store after the name is written); the last entry is the overflow. */
	uint32_t n_queues;
	struct board_queue queue[BOARD_QUEUES + 1];
};

/* The watcher's (src/watch): how it finds changes, and how it fares. */
enum board_watch_mode { BW_NONE, BW_BINLOG, BW_POLL };
struct board_watch {
	uint64_t mode;       /* enum board_watch_mode */
	uint64_t hints;      /* hints sent to the supervisor */
	uint64_t events;     /* binary log events read */
	uint64_t lag_us;     /* how long after its writing the last event was read */
	uint64_t reconnects; /* streams or connections opened again after a loss */
};

struct board {
	uint32_t magic, layout;
	uint64_t worker_restarts; /* written by the supervisor */
	struct board_watch watch; /* written by the watcher */
	struct board_worker worker[BOARD_MAX_WORKERS];
};

/* The supervisor's: a sealed-size memfd holding a zeroed board, mapped
 * read-write into *ret (close-on-exec descriptor in *ret_fd). */
KYU_MUSTCHECK int board_create(struct board **ret, int *ret_fd);
/* Map the board on fd (writable for a worker, read-only for the metrics
 * process); -errno when it is not one. */
KYU_MUSTCHECK int board_map(int fd, bool writable, struct board **ret);
void board_unmap(struct board *b);

/* Upper bounds of the buckets of histogram h (BOARD_BUCKETS of them). */
const double *board_bounds(enum board_hist h);

/* Writers (the owning worker only). */
void board_count(struct board_worker *w, const char *queue, enum board_job what);
void board_add(struct board_worker *w, enum board_counter c, uint64_t n);
void board_set(struct board_worker *w, enum board_gauge g, uint64_t v);
/* v in seconds (rows for BH_BATCH). */
void board_observe(struct board_worker *w, enum board_hist h, double v);
void board_restarted(struct board *b);

/* The watcher's writes: one word each. */
static inline void board_store(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* Readers: one word, as last stored. */
static inline uint64_t board_load(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
uint32_t board_n_queues(const struct board_worker *w);
/* Attempts running now, over every worker (BG_RUNNING summed). */
uint64_t board_running(const struct board *b);

#endif
