/* The statement order: which statement a worker sends next on its one
 * connection, as a table of rows in priority order. See pump.h. */
#include "pump.h"

#include <string.h>

#include "common/log.h"
#include "common/util.h"

/* The soonest the tick fires again for a moment that has passed without
 * pump_once acting on it (arm_tick). */
#define TICK_FLOOR 0.05

static void on_tick(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)t;
	(void)revents;
	/* Nothing to do here: waking the loop runs worker.c's prepare
	 * watcher, which pumps. */
}

/* The statement order: the first row that is due is sent (pump_once).
 * Leases first (they keep jobs alive), then the daemon's registry row
 * and running jobs' live output (each at most once per its interval), the
 * scheduler, then results (or a claim carrying the plain successes), a
 * claim, retention; notes/DESIGN.md, "How a statement travels", says why
 * each is where it is. */
void pump_init(struct pump *p, struct ev_loop *loop, const struct pump_rooms *r)
{
	const struct stmt_row order[PUMP_ROWS] = {
		/* After every connect, before anything is claimed or written. */
		{ .name = "reading the schema version",
		  .ctx = r->conn,
		  .due = conn_schema_due,
		  .send = conn_schema_send,
		  .on_reply = conn_schema_reply },
		/* Before anything else: a statement sent into a transaction
		 * left open would not be committed (a lease renewal included). */
		{ .name = "ending a failed claim's transaction",
		  .ctx = r->claim,
		  .due = claim_rollback_due,
		  .send = claim_rollback_send,
		  .on_reply = claim_rollback_reply },
		{ .name = "giving back the rows of a failed claim",
		  .ctx = r->claim,
		  .due = claim_release_due,
		  .send = claim_release_send,
		  .on_reply = claim_release_reply,
		  .unsent = claim_release_unsent,
		  .when = claim_release_when },
		/* Leases before anything that is not a repair: they keep jobs
		 * alive. */
		{ .name = "extending leases",
		  .ctx = r->lease,
		  .due = lease_beat_due,
		  .send = lease_beat_send,
		  .on_reply = lease_beat_reply,
		  .when = lease_beat_when },
		{ .name = "the daemon registry",
		  .ctx = r->reg,
		  .due = daemonrow_due,
		  .send = daemonrow_send,
		  .on_reply = daemonrow_reply,
		  .unsent = daemonrow_unsent,
		  .when = daemonrow_when,
		  .exit_waits = true },
		/* Behind the leases, ahead of claims and results, each at most
		 * once per its interval. */
		{ .name = "writing running jobs' output",
		  .ctx = r->live,
		  .due = live_write_due,
		  .send = live_write_send,
		  .on_reply = live_write_reply,
		  .when = live_write_when },
		/* Moments: what falls due here changes what the rows below
		 * read, in this walk already. */
		{ .name = "a wake-up's recheck",
		  .ctx = r->claim,
		  .due = claim_recheck_due,
		  .when = claim_recheck_when },
		{ .name = "a schedules wake-up's recheck",
		  .ctx = r->sched,
		  .due = scheduler_recheck_due,
		  .when = scheduler_recheck_when },
		/* Before claims, so that a busy worker still fires on time. */
		{ .name = "schedules",
		  .ctx = r->sched,
		  .due = scheduler_due,
		  .send = scheduler_send,
		  .on_reply = scheduler_reply,
		  .when = scheduler_when },
		{ .name = "claiming by itself",
		  .ctx = r->claim,
		  .due = claim_self_poll_due,
		  .when = claim_self_poll_when },
		{ .name = "the claim's size",
		  .ctx = r->claim,
		  .due = claim_size_due,
		  .when = claim_size_when },
		/* The claim carries the plain successes waiting, as long as no
		 * other result waits; else the results go first, alone. */
		{ .name = "acquiring jobs",
		  .ctx = r->claim,
		  .due = claim_with_results_due,
		  .send = claim_with_results_send,
		  .on_reply = claim_reply,
		  .unsent = claim_unsent,
		  .exit_waits = true },
		{ .name = "recording results",
		  .ctx = r->rec,
		  .due = record_due,
		  .send = record_send,
		  .on_reply = record_reply,
		  .unsent = record_unsent,
		  .when = record_when,
		  .exit_waits = true },
		/* Only after results that freed a limited slot, when the list
		 * of the other daemons is stale: they are told at once. A
		 * draining worker waits for it (its last jobs' slots). */
		{ .name = "reading the other daemons",
		  .ctx = r->peers,
		  .due = peers_due,
		  .send = peers_send,
		  .on_reply = peers_reply,
		  .when = peers_when,
		  .exit_waits = true },
		/* After the results, which make its work; before the claim,
		 * which may take what it frees. */
		{ .name = "settling workflows",
		  .ctx = r->settle,
		  .due = settle_due,
		  .send = settle_send,
		  .on_reply = settle_reply,
		  .when = settle_when },
		{ .name = "acquiring jobs",
		  .ctx = r->claim,
		  .due = claim_due,
		  .send = claim_send,
		  .on_reply = claim_reply,
		  .unsent = claim_unsent,
		  .exit_waits = true },
		/* Last: nothing waits for it. */
		{ .name = "retention delete",
		  .ctx = r->ret,
		  .due = retention_due,
		  .send = retention_send,
		  .on_reply = retention_reply },
	};

	p->loop = loop;
	p->conn = r->conn;
	p->held = r->held;
	memcpy(p->order, order, sizeof(order));
	ev_init(&p->tick_w, on_tick);
	p->tick_w.data = p;
}

bool pump_exit_waits(const struct pump *p)
{
	return p->inflight && p->inflight->exit_waits;
}

/* The one reply dispatcher: the row is no longer in flight when its
 * reply runs. */
static void on_reply(void *arg, const struct db_reply *r)
{
	struct pump *p = arg;
	const struct stmt_row *row = p->inflight;

	p->inflight = NULL;
	row->on_reply(row->ctx, r);
}

/* Send the statement of a row that is due. db_send refuses a statement
 * before sending (too large, or the connection is not idle): a bug or a
 * limit, never a lost link. */
static void send_row(struct pump *p, const struct stmt_row *row, struct stmt_turn *t)
{
	struct strbuf sb = { 0 };

	if (!row->send(row->ctx, t, &sb))
		return;
	/* Set first: a reply that is already there completes inside db_send. */
	p->inflight = row;
	if (db_send(p->conn->db, &sb, on_reply, p) < 0) {
		p->inflight = NULL;
		log_err("%s: not sent: %s", row->name, db_error(p->conn->db));
		sb_free(&sb);
		if (row->unsent)
			row->unsent(row->ctx);
	}
}

/* The tick wakes the loop for the next moment something is due that the
 * loop can act on now. Every statement needs the connection: while one is
 * in flight (or the connection is down) its reply, its deadline or the
 * reconnect timer wakes the loop, and pump_once sends what fell due
 * meanwhile. Arming for a moment already past while the connection is busy
 * would make the loop spin (a zero timeout, again and again, for as long as
 * the statement takes: seconds of CPU with the database stopped). Only the
 * prefetch's hold limit needs no connection. */
static void arm_tick(struct pump *p, double now)
{
	double next = held_expiry(p->held);
	bool idle = db_idle(p->conn->db) && !p->conn->exit_status;

	for (int i = 0; idle && i < PUMP_ROWS; i++) {
		const struct stmt_row *row = &p->order[i];
		double t = row->when ? row->when(row->ctx, now) : 0;

		if (t > 0 && (next == 0 || t < next))
			next = t;
	}
	/* A moment that has passed while the connection was idle means
	 * pump_once saw it and chose not to act (nothing to send after all):
	 * firing again at once would repeat that choice. Wake at the earliest
	 * a little later instead; anything that changes the choice (a reply,
	 * a job's end, a message) wakes the loop by itself. */
	if (next > 0 && next <= now)
		next = now + TICK_FLOOR;
	/* Not a moment passed but work at hand: at once. */
	if (held_startable(p->held))
		next = now;
	ev_timer_stop(p->loop, &p->tick_w);
	if (next > 0) {
		ev_timer_set(&p->tick_w, next > now ? next - now : 0., 0.);
		ev_timer_start(p->loop, &p->tick_w);
	}
}

/* One statement, if one is due and the connection is free: the first due
 * row of the order. Returns true when a row was due (whether or not it
 * had anything to send after all). */
static bool pump_once(struct pump *p)
{
	struct stmt_turn t = { .now = mono_now() };

	held_start(p->held);
	conn_reconnect_if_wanted(p->conn);
	if (!db_idle(p->conn->db) || p->conn->exit_status)
		return false;
	for (int i = 0; i < PUMP_ROWS; i++) {
		const struct stmt_row *row = &p->order[i];

		/* A moment's due is called for what it does; it sends nothing. */
		if (!row->due(row->ctx, &t) || !row->send)
			continue;
		send_row(p, row, &t);
		return true;
	}
	return false;
}

/* A reply can complete inside db_send (a local server answers before
 * Connector/C would wait), and its callback may want the next statement
 * at once: with nothing left to wake the loop, that would wait for the
 * next event. So go on while statements complete synchronously (bounded,
 * in case each of them asks for another). */
void pump_run(struct pump *p)
{
	for (int i = 0; i < 16; i++)
		if (!pump_once(p) || !db_idle(p->conn->db))
			break;
	arm_tick(p, mono_now());
}
