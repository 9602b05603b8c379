/* The database server's clock, watched with the worker's own monotonic
 * clock.
 *
 * Leases (lease_until) and schedules (next_run) are times of the server's
 * clock, and an NTP step after a VM resume, or a manual fix, moves that
 * clock by any amount at once: forward, every lease looks expired and
 * every instant of the last minute due; backward, every lease and instant
 * lies an hour ahead. The worker's monotonic clock does not step. Each
 * statement that reads the server's time (the claim's SELECT, the
 * heartbeat's, the schedules scan) hands its reading here; between two
 * readings the server's clock must have moved as far as ours did, within
 * the round trips of the two statements and DBCLOCK_TOLERANCE. More or
 * less than that is a step, which the caller acts on and logs.
 *
 * Pure: no I/O and no logging (tests/unit/test_dbclock.c). One instance
 * per clock scale: the server's NOW(6) (the leases' session time) and
 * UTC_TIMESTAMP(6) (the schedules') are watched apart, since a daylight
 * saving change in the server's zone steps the one and not the other. */
#ifndef KYU_DBCLOCK_H
#define KYU_DBCLOCK_H

#include <stdbool.h>
#include <stdint.h>

/* A difference below this (plus the two round trips and 0.1 % of the
 * time between the readings, for a clock being slewed) is not a step: the
 * leases' fence_margin (10 s by default) covers it, as it always did. */
#define DBCLOCK_TOLERANCE 1.0

struct dbclock {
	bool known;          /* a reading was made */
	int64_t db_us;       /* the server's clock at the last reading, µs */
	double sent, got;    /* monotonic: its statement was sent, its reply came */
	double steady_since; /* monotonic: the first reading after the last step (or ever) */
};

/* A reading: db_us, read by a statement sent at monotonic time sent and
 * answered at got. Returns how far the server's clock moved beyond what
 * ours allows since the last reading, in µs (> 0 forward, < 0 backward),
 * or 0: no step, or no reading before this one. Either way the reading
 * is the new reference. */
int64_t dbclock_read(struct dbclock *c, int64_t db_us, double sent, double got);

/* The server's clock at monotonic time now as ours predicts it from the
 * last reading, at the latest it can be (counted from the moment that
 * reading's statement was sent). Meaningful only when known. */
int64_t dbclock_predict_us(const struct dbclock *c, double now);

/* Seconds the server's clock has moved with ours (since the first
 * reading, or the first after the last step); 0 when nothing was read. */
double dbclock_steady_for(const struct dbclock *c, double now);

#endif
