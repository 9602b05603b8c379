/* Lease renewal and self-fencing, in one place.
 *
 * Every running job's row carries a lease (lease_until) that this worker
 * extends with a heartbeat every `heartbeat` seconds; the heartbeat's reply
 * also says, row by row, whether the row is still ours and whether the user
 * cancelled it. Independently of the database, a timer is always armed for
 * the earliest moment a job's lease may run out less fence_margin (counted
 * from just before the statement that last set it was sent): a job not
 * renewed by then is killed, because once its lease expires another claim
 * may start it again. The timer runs whatever the connection does, so a
 * database that stops answering cannot keep a job alive past its lease.
 *
 * A lease is a time of the database server's clock, which can step (an
 * NTP step after a VM resume, a manual fix): forward, every lease looks
 * expired at once. So this module also decides which expired leases a
 * claim may take over (lease_takeover_before): only those that ran out by
 * the server's clock as this worker's monotonic clock predicts it, and
 * none until the worker has watched the server's clock move steadily for
 * a whole lease (since it started, or since the last step it saw). By
 * then every live owner has renewed its leases on the new clock, or
 * fenced its jobs. A worker that sees a step renews its own leases at
 * once (dbclock.h reads the steps).
 *
 * The heartbeat is one chore of the worker's statement order (pump.c): its
 * row's columns are at the end of this header, beside what they send. The
 * jobs are jobs.c's (the slots are borrowed); this module owns only what
 * the heartbeat in flight renews and the fence timer. */
#ifndef KYU_LEASE_H
#define KYU_LEASE_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "common/config.h"
#include "common/db.h"
#include "common/board.h"
#include "common/util.h"
#include "conn.h"
#include "dbclock.h"
#include "job.h"
#include "stmt.h"

struct lease {
	struct ev_loop *loop;
	struct job **slots; /* the worker's, n_slots long; NULL entries are free */
	int n_slots;
	const struct kyu_config *cfg; /* the worker's, read at each heartbeat */
	struct conn *conn;
	struct board_worker *bw; /* how late heartbeats are, on the scoreboard */
	int lease, margin;
	double interval;
	double next_beat; /* monotonic; 0: at once (a new connection) */
	double beat_due;  /* monotonic: when the heartbeat in flight was due */
	ev_timer fence_w;
	struct dbclock clock; /* the server's NOW(6), read by claims and heartbeats */
	uint64_t clock_steps;
	/* The heartbeat in flight. */
	uint64_t *seqs, *tokens;
	int *pids;
	int n;
	uint64_t lost, cancelled, fenced;
};

void lease_init(struct lease *l, struct ev_loop *loop, struct job **slots, int n_slots,
		const struct kyu_config *cfg, struct conn *conn, struct board_worker *bw);
void lease_configure(struct lease *l, const struct kyu_config *cfg);
void lease_free(struct lease *l);
/* Whether any running job has a lease to renew (next_beat means nothing
 * otherwise). */
bool lease_renewing(const struct lease *l);
/* A heartbeat should be sent now. */
bool lease_due(const struct lease *l, double now);
/* Seconds until the next heartbeat is due (may be <= 0). */
double lease_next_in(const struct lease *l, double now);
/* Append the heartbeat for every running job to sb; false (nothing
 * appended) when none runs. */
bool lease_build(struct lease *l, const struct kyu_config *cfg, struct strbuf *sb);
/* Apply the heartbeat's reply: renew, or end jobs whose row was cancelled,
 * taken over or deleted. On failure nothing is renewed; the fence timer
 * decides. */
void lease_reply(struct lease *l, const struct db_reply *r);
/* Kill every job past its fencing deadline; arm the timer for the next.
 * Call after a job started or its lease changed. */
void lease_check(struct lease *l);

/* The server's NOW(6) as µs since '1970-01-01' (its session's time, the
 * leases' scale), read by a statement sent at monotonic time sent and
 * answered at got: a claim's (the heartbeat reads its own). A step is
 * logged, the leases are renewed before anything else is sent, and no
 * expired lease is taken over for a lease from then. */
void lease_clock_read(struct lease *l, int64_t db_us, double sent, double got);
/* The latest lease_until (µs since '1970-01-01' of the server's NOW(6))
 * a claim sent now may take over, or 0: none. */
#define LEASE_TAKEOVER_SLACK 1.0
int64_t lease_takeover_before(const struct lease *l, double now);

/* A cancel hint (KYU_CANCEL): renew now, since the renewal's reply is
 * where a cancelled row is found and its process stopped; at most once
 * per LEASE_HURRY_GAP s after the last renewal, whatever the hints. */
#define LEASE_HURRY_GAP 0.2
void lease_hurry(struct lease *l, double now);

/* The heartbeat's row of the statement order (ctx: the lease). */
bool lease_beat_due(void *lease, struct stmt_turn *t);
bool lease_beat_send(void *lease, struct stmt_turn *t, struct strbuf *sb);
void lease_beat_reply(void *lease, const struct db_reply *r);
double lease_beat_when(void *lease, double now);

#endif
