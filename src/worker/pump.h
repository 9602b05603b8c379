/* The statement order: which statement a worker sends next on its one
 * connection, as a table of rows in priority order (each row's columns
 * are in its room: conn.c, claim.c, record.c, lease.c, live.c,
 * scheduler.c, daemonrow.c, retention.c), the dispatcher that walks it
 * and sends the first due row, the one reply dispatcher, and the tick
 * that wakes the loop when the next row falls due.
 *
 * Guarantees, kept here and only here: one statement in flight per
 * connection (a row is sent only while db_idle); the order of the rows is
 * the priority (notes/DESIGN.md, "How a statement travels"); results ride
 * along with a claim only while no other result waits (claim.c's row
 * before record.c's); the tick is never armed for a moment already passed
 * while the connection is busy (a spin).
 *
 * Owns no row of a job: each room owns what its statements carry. */
#ifndef KYU_PUMP_H
#define KYU_PUMP_H

#include <stdbool.h>

#include <ev.h>

#include "claim.h"
#include "conn.h"
#include "daemonrow.h"
#include "held.h"
#include "lease.h"
#include "live.h"
#include "peers.h"
#include "record.h"
#include "retention.h"
#include "scheduler.h"
#include "settle.h"
#include "stmt.h"

/* The rooms whose rows make the order (worker.c's). */
struct pump_rooms {
	struct conn *conn;
	struct held *held;
	struct claim *claim;
	struct lease *lease;
	struct daemonrow *reg;
	struct live *live;
	struct scheduler *sched;
	struct record *rec;
	struct retention *ret;
	struct settle *settle;
	struct peers *peers;
};

#define PUMP_ROWS 17

struct pump {
	struct ev_loop *loop;
	struct conn *conn;
	struct held *held;
	struct stmt_row order[PUMP_ROWS];
	const struct stmt_row *inflight; /* the row whose statement is in flight (NULL: none) */
	ev_timer tick_w;                 /* wakes the loop for the next moment a row falls due */
};

void pump_init(struct pump *p, struct ev_loop *loop, const struct pump_rooms *rooms);
/* Send what is due, while statements complete at once, then arm the
 * tick: before the loop sleeps, after every event (worker.c). */
void pump_run(struct pump *p);
/* A stopping worker waits for the statement in flight (stmt_row's
 * exit_waits). */
bool pump_exit_waits(const struct pump *p);

#endif
