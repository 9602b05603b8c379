/* The worker's database connection: connecting, reconnecting with a backoff,
 * the schema check after every connect. See conn.h. */
#include "conn.h"

#include <sysexits.h>

#include "common/log.h"
#include "common/schema.h"
#include "common/util.h"

/* A claim or a flush that deadlocked (on Galera: failed certification,
 * another node's commit took the same rows) after db.c's immediate
 * retries waits CONFLICT_BASE * 2^(n-1), at most CONFLICT_CAP, jittered by
 * half either way, so that workers that collided do not collide again in
 * step; a spell of CONFLICT_LOG of them in a row is logged once. */
#define CONFLICT_BASE 0.005
#define CONFLICT_CAP 0.5
#define CONFLICT_LOG 20
/* A connection that lasted this long resets the reconnect backoff. */
#define STABLE_CONNECTION 5.0

static void on_connected(void *arg, const struct db_reply *r);

/* A statement may take this long before its connection is abandoned: a
 * claim may wait innodb_lock_wait_timeout (3 s) per row lock, retention
 * deletes a batch; anything longer is a server that stopped answering. */
static double statement_deadline(const struct kyu_config *cfg)
{
	double d = cfg->lease / 2.0;
	return d < 5 ? 5 : d > 30 ? 30 : d;
}

static void on_reconnect(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	conn_start(t->data);
}

void conn_init(struct conn *c, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct report *rep, struct board_worker *bw, void (*up)(void *ctx), void *up_ctx)
{
	c->loop = loop;
	c->cfg = cfg;
	c->rep = rep;
	c->bw = bw;
	c->up = up;
	c->up_ctx = up_ctx;
	c->reconnect_delay = 0.5;
	c->db = db_new(loop, statement_deadline(cfg));
	ev_init(&c->reconnect_w, on_reconnect);
	c->reconnect_w.data = c;
}

void conn_free(struct conn *c)
{
	db_free(c->db);
	c->db = NULL;
}

/* The connection is ready for work: the supervisor may now tell systemd. */
static void usable(struct conn *c)
{
	c->usable = true;
	report_check(c->rep);
}

void conn_start(struct conn *c)
{
	c->connect_tried = mono_now();
	c->usable = false;
	ev_timer_stop(c->loop, &c->reconnect_w);
	c->connecting = true;
	if (db_connect_async(c->db, c->cfg, on_connected, c) < 0) {
		struct db_reply fake = { .fail = DB_LOST, .err = db_error(c->db) };
		on_connected(c, &fake);
	}
}

static void schedule_reconnect(struct conn *c)
{
	if (ev_is_active(&c->reconnect_w) || c->connecting)
		return;
	ev_timer_set(&c->reconnect_w, c->reconnect_delay, 0.);
	ev_timer_start(c->loop, &c->reconnect_w);
	c->reconnect_delay = c->reconnect_delay * 2 > 10 ? 10 : c->reconnect_delay * 2;
}

/* The connection is gone (closed by db.c). Jobs keep running: lease.c's
 * fence timer kills them if it stays gone too long. */
static void lost(struct conn *c, const char *why)
{
	/* A connection that failed soon after it was made (a Galera node
	 * that takes connections but refuses statements) keeps the backoff
	 * growing, rather than reconnecting twice a second. */
	if (mono_now() - c->connected_at >= STABLE_CONNECTION)
		c->reconnect_delay = 0.5;
	if (spell_begin(&c->outage))
		log_warn("database connection lost: %s", why);
	schedule_reconnect(c);
}

static void on_connected(void *arg, const struct db_reply *r)
{
	struct conn *c = arg;

	c->connecting = false;
	if (r->fail != DB_OK) {
		if (spell_begin(&c->outage))
			log_warn("cannot connect to the database: %s", r->err);
		schedule_reconnect(c);
		return;
	}
	/* With several hosts, which one matters (kyud(8), "Galera"). */
	log_info("connected to %s", db_peer(c->db));
	if (spell_end(&c->outage))
		log_notice("database connection restored");
	if (c->ever_connected)
		board_add(c->bw, BC_RECONNECTS, 1);
	c->ever_connected = true;
	c->connected_at = mono_now();
	c->schema_wanted = true;
	c->up(c->up_ctx);
	/* Usable (for readiness) once conn_schema_reply has checked the
	 * version. */
}

void conn_wake(struct conn *c)
{
	if (!db_connected(c->db) && !c->connecting && mono_now() - c->connect_tried >= 0.5)
		conn_start(c);
}

void conn_reconnect_if_wanted(struct conn *c)
{
	if (c->reconnect_wanted && !c->connecting && (db_idle(c->db) || !db_connected(c->db))) {
		c->reconnect_wanted = false;
		db_close(c->db);
		conn_start(c);
	}
}

void conn_failed(struct conn *c, const struct db_reply *r, const char *what)
{
	switch (r->fail) {
	case DB_OK:
		break;
	case DB_LOST:
		lost(c, r->err);
		break;
	case DB_RETRY:
		/* Counted in the exit summary; the caller sends it again. */
		log_debug("%s: deadlock, trying again: %s", what, r->err);
		break;
	case DB_BUSY:
		/* Once per spell: it repeats every retry until the server takes
		 * writes again. */
		if (spell_begin(&c->busy))
			log_warn(
				"the database refuses writes for now (%s: %s); results wait and are "
				"retried every %.0f s",
				what, r->err, CONN_BUSY_RETRY);
		break;
	case DB_ERROR:
		log_err("%s failed: %s", what, r->err);
		break;
	}
}

void conn_wrote(struct conn *c)
{
	c->conflicts = 0;
	if (spell_end(&c->busy))
		log_notice("the database takes writes again");
}

double conn_backoff(struct conn *c, double now)
{
	double d = CONFLICT_BASE;

	for (int i = 1; i < c->conflicts && d < CONFLICT_CAP; i++)
		d *= 2;
	if (d > CONFLICT_CAP)
		d = CONFLICT_CAP;
	c->conflicts++;
	if (c->conflicts == CONFLICT_LOG)
		log_warn("%d deadlocks or certification conflicts in a row; results are kept and "
			 "retried with up to %.1f s between tries",
			 CONFLICT_LOG, CONFLICT_CAP);
	return now + d * (0.5 + (double)(random_token() % 1024) / 1024.0);
}

/* ---- the schema version ------------------------------------------------ */

/* After every connect, before anything is claimed or written: a database
 * of another schema than this kyud knows stops the daemon (exit 78, which
 * the supervisor and systemd do not restart). Jobs that run are left to
 * the supervisor, which kills what a worker leaves behind; their leases
 * expire and a kyud that knows the schema runs them again. Nothing is
 * written on such a database, results included. */
bool conn_schema_due(void *conn, struct stmt_turn *t)
{
	const struct conn *c = conn;

	(void)t;
	return c->schema_wanted;
}

bool conn_schema_send(void *conn, struct stmt_turn *t, struct strbuf *sb)
{
	(void)conn;
	(void)t;
	sb_adds(sb, SCHEMA_STATE_SQL);
	return true;
}

void conn_schema_reply(void *conn, const struct db_reply *r)
{
	struct conn *c = conn;
	struct schema_state st;
	char msg[512];

	if (r->fail == DB_LOST) {
		conn_failed(c, r, "reading the schema version");
		return;
	}
	c->schema_wanted = false;
	schema_state_read(r, &st);
	/* Counted from version 4 on; an empty or unreadable state is tried
	 * (a count that fails turns counting off for a while). */
	c->minutes = !((st.found == SCHEMA_FOUND || st.found == SCHEMA_NO_META) && st.version < 4);
	c->fan = st.found == SCHEMA_FOUND && st.version >= SCHEMA_FAN;
	switch (st.found) {
	case SCHEMA_EMPTY:
		/* Nothing installed yet, or sql/schema.sql is being loaded
		 * (it creates kyu_meta first and records the version last):
		 * claims fail and say so until it is there, at the newest
		 * version. */
		usable(c);
		return;
	case SCHEMA_DENIED:
		log_err("cannot read the schema version: %s: grant kyud's account SELECT on kyu_meta "
			"(kyud(8)); without kyu_meta, run `kyu schema upgrade` (kyu(1))",
			st.err);
		break;
	case SCHEMA_UNREADABLE:
		/* Not a verdict on the schema: try again on a new connection. */
		log_err("reading the schema version failed: %s", st.err);
		db_close(c->db);
		lost(c, "reading the schema version failed");
		return;
	case SCHEMA_FOUND:
	case SCHEMA_NO_META:
		switch (schema_judge(&st, SCHEMA_VERSION, SCHEMA_NEEDS, msg, sizeof(msg))) {
		case SCHEMA_OK:
			usable(c);
			return;
		case SCHEMA_NEWER:
			if (spell_begin(&c->schema_newer))
				log_notice("%s", msg);
			usable(c);
			return;
		case SCHEMA_TOO_OLD:
		case SCHEMA_TOO_NEW:
			log_err("%s", msg);
			break;
		}
		break;
	}
	c->exit_status = EX_CONFIG;
	db_close(c->db);
	ev_break(c->loop, EVBREAK_ALL);
}
