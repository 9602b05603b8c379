/* The worker's database connection: connecting, reconnecting with a
 * backoff, the schema check after every connect, and what a failed reply
 * says about the connection (lost, refused for now, deadlocked again and
 * again), each said once per spell.
 *
 * Why a room of its own: everything here is about the link, nothing about
 * what a statement is for. pump.c sends the statements (one at a time) and
 * the rooms read their replies; the rooms that keep state per connection
 * (the prepared claims, the leases' next renewal, the scheduler's scan...)
 * hear of a new connection through the up hook, which worker.c wires, so
 * that this module knows none of them. Owns no row of a job. */
#ifndef KYU_CONN_H
#define KYU_CONN_H

#include <stdbool.h>

#include <ev.h>

#include "common/board.h"
#include "common/config.h"
#include "common/db.h"
#include "common/spell.h"
#include "report.h"
#include "stmt.h"

/* A server that refuses writes for now (read-only, disk full) is asked
 * again this often. */
#define CONN_BUSY_RETRY 1.0

struct conn {
	struct db *db;
	struct ev_loop *loop;
	const struct kyu_config *cfg;
	struct report *rep;      /* told once the connection is usable */
	struct board_worker *bw; /* reconnections are counted there (NULL: none) */
	/* A new connection is set up: every room forgets what it knew of the
	 * old one (worker.c). */
	void (*up)(void *ctx);
	void *up_ctx;

	bool connecting;       /* a connect is under way */
	bool usable;           /* set up and checked (reported to the supervisor) */
	bool schema_wanted;    /* the schema version is checked before anything else is sent */
	bool minutes;          /* the schema has kyu_minutes, or may have (record.c counts) */
	bool fan;              /* the schema has kyu_queue_names (claim.c's fan) */
	bool reconnect_wanted; /* new settings: reconnect once the statement in flight is back */
	bool ever_connected;
	int exit_status; /* the database is one this kyud must not touch: stop with this */
	double reconnect_delay;
	double connect_tried; /* monotonic */
	double connected_at;  /* monotonic: when the connection in use was set up */
	ev_timer reconnect_w;
	int conflicts;       /* claims or flushes deadlocked in a row */
	struct spell outage; /* a loss (logged at its start and end) */
	struct spell busy;   /* the server refuses writes (DB_BUSY; logged at its start and end) */
	struct spell schema_newer; /* a newer, compatible version (logged once) */
};

/* The loop, the configuration (the worker's, read at each use: a reload
 * changes it in place), the supervisor's report and the scoreboard are
 * borrowed for the connection's life. */
void conn_init(struct conn *c, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct report *rep, struct board_worker *bw, void (*up)(void *ctx), void *up_ctx);
void conn_free(struct conn *c);
/* Connect now, dropping nothing (the connection is down or was closed). */
void conn_start(struct conn *c);
/* A wake-up: someone has work, so try the database now rather than at
 * the end of a backoff of up to 10 s (at most twice a second). */
void conn_wake(struct conn *c);
/* Reconnect if a reload asked for it and nothing is in flight. */
void conn_reconnect_if_wanted(struct conn *c);
/* A reply that failed: say so at the level it deserves; a lost
 * connection is reconnected. what names the statement ("acquiring
 * jobs"). */
void conn_failed(struct conn *c, const struct db_reply *r, const char *what);
/* A write went through: a spell of conflicts or of refusals is over. */
void conn_wrote(struct conn *c);
/* One more conflict in a row (a deadlock, or on Galera a failed
 * certification, after db.c's immediate retries): when to try again
 * (monotonic), jittered so that workers that collided do not collide
 * again in step. */
double conn_backoff(struct conn *c, double now);

/* The schema check's row of the statement order (ctx: the conn). */
bool conn_schema_due(void *conn, struct stmt_turn *t);
bool conn_schema_send(void *conn, struct stmt_turn *t, struct strbuf *sb);
void conn_schema_reply(void *conn, const struct db_reply *r);

#endif
