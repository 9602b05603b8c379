/* The round trips of a connection (db.h): Connector/C's non-blocking
 * steps, driven from libev or from poll(). */
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <errmsg.h>
#include <mysql.h>
#include <mysqld_error.h>

/* Deadlocks of a statement's first step are sent again at once this many
 * times before the caller sees DB_RETRY. */
#define DEADLOCK_RETRIES 5

enum phase { PH_NONE, PH_CONNECT, PH_QUERY, PH_STORE, PH_NEXT };

struct db {
	struct ev_loop *loop; /* NULL: blocking */
	double deadline;
	MYSQL *my;
	bool connected;
	enum phase phase;
	int wait; /* what Connector/C waits for, MYSQL_WAIT_* */
	ev_io io;
	ev_timer tmo;  /* Connector/C's own timeout (connect_timeout) */
	ev_timer dead; /* our deadline for the whole round trip */
	double dead_s; /* its length, for the message */

	/* The round trip in flight. */
	struct strbuf sql;
	db_done_fn *done;
	void *arg;
	int retries;
	double sent_at;
	MYSQL *conn_ret;
	int iret;
	MYSQL_RES *res_ret;
	struct db_reply_store got; /* its results, and the reply handed out */

	struct db_session session; /* the server and credentials of the connect in flight */
	bool setup;                /* the round trip in flight is the session set-up */
	bool connecting;           /* the round trip in flight is a connect (and its set-up) */
	char peer[300]; /* the server connected to (or being tried): HOST:PORT or the socket */

	size_t max_statement;
	uint64_t deadlocks, round_trips;
	char err[512];
	unsigned err_no; /* of err, when it has one */
};

static enum db_fail classify(unsigned e)
{
	switch (e) {
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
		return DB_RETRY;
	case ER_OPTION_PREVENTS_STATEMENT: /* read_only, super_read_only */
	case ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION:
	case ER_OPEN_AS_READONLY:
	case ER_DISK_FULL:
	case ER_RECORD_FILE_FULL:
	case ER_OUT_OF_RESOURCES:
		/* The statement is fine and the link too; the server cannot
		 * take it now. Results must wait, not be dropped. */
		return DB_BUSY;
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
	/* Galera: the node is cut off from the cluster's primary component,
	 * or not yet synced ("WSREP has not yet prepared node for application
	 * use"). Nothing was written; another node (or this one, once it is
	 * back) takes the same statement, so this is a lost link, not a bad
	 * statement. */
	case ER_UNKNOWN_COM_ERROR:
	case ER_ERROR_DURING_COMMIT:
	case ER_QUERY_INTERRUPTED:
	case 4031: /* ER_CLIENT_INTERACTION_TIMEOUT */
		return DB_LOST;
	default:
		/* Connector/C reports its own failures (the link, not the
		 * statement) as 2xxx. */
		return e >= 2000 && e < 3000 ? DB_LOST : DB_ERROR;
	}
}

static void on_io(EV_P_ ev_io *io, int revents);
static void on_tmo(EV_P_ ev_timer *t, int revents);
static void on_deadline(EV_P_ ev_timer *t, int revents);

struct db *db_new(struct ev_loop *loop, double deadline)
{
	struct db *db = xcalloc(1, sizeof(*db));
	db->loop = loop;
	db->deadline = deadline > 0 ? deadline : 30;
	db->max_statement = 1 << 20;
	ev_init(&db->io, on_io);
	ev_init(&db->tmo, on_tmo);
	ev_init(&db->dead, on_deadline);
	return db;
}

static void stop_watchers(struct db *db)
{
	if (!db->loop)
		return;
	ev_io_stop(db->loop, &db->io);
	ev_timer_stop(db->loop, &db->tmo);
	ev_timer_stop(db->loop, &db->dead);
}

static void close_conn(struct db *db)
{
	stop_watchers(db);
	if (db->my) {
		int fd = (int)mysql_get_socket(db->my);
		/* A server that stopped answering must not hold us: with the
		 * socket shut down, the goodbye mysql_close sends fails at once
		 * instead of waiting. */
		if (fd >= 0)
			(void)shutdown(fd, SHUT_RDWR);
		mysql_close(db->my);
	}
	db->my = NULL;
	db->connected = false;
	db->setup = false;
	db->phase = PH_NONE;
}

void db_close(struct db *db)
{
	db_reply_drop_rows(&db->got);
	close_conn(db);
	db->done = NULL;
	sb_reset(&db->sql);
	db_reply_reset(&db->got);
}

void db_free(struct db *db)
{
	if (!db)
		return;
	db_close(db);
	db_session_free(&db->session);
	sb_free(&db->sql);
	db_reply_free(&db->got);
	free(db);
}

bool db_connected(const struct db *db)
{
	return db->connected;
}

bool db_idle(const struct db *db)
{
	return db->connected && db->phase == PH_NONE;
}

const char *db_error(const struct db *db)
{
	return db->err;
}

unsigned db_error_code(const struct db *db)
{
	return db->err_no;
}

const char *db_peer(const struct db *db)
{
	return db->peer;
}

uint64_t db_deadlocks(const struct db *db)
{
	return db->deadlocks;
}

uint64_t db_round_trips(const struct db *db)
{
	return db->round_trips;
}

size_t db_max_statement(const struct db *db)
{
	return db->max_statement;
}

static void set_err_from_mysql(struct db *db, const char *what)
{
	/* mysql_error often ends in the errno in parentheses already; the
	 * server's or client's error number goes in front. */
	db->err_no = mysql_errno(db->my);
	snprintf(db->err, sizeof(db->err), "%s%serror %u: %s", what ? what : "", what ? ": " : "",
		 db->err_no, mysql_error(db->my));
}

/* Call the step of the current phase: start it (first) or continue it
 * with what the socket is ready for. Returns Connector/C's wait flags. */
static int call_phase(struct db *db, bool first, int ready)
{
	const struct db_session *s = &db->session;

	switch (db->phase) {
	case PH_CONNECT:
		if (!first)
			return mysql_real_connect_cont(&db->conn_ret, db->my, ready);
		return mysql_real_connect_start(
			&db->conn_ret, db->my, s->socket ? NULL : s->hosts[s->host_at].name,
			s->user, s->password, s->name, s->socket ? 0 : s->hosts[s->host_at].port,
			s->socket,
			/* Multi-statements: a claim's UPDATE and SELECT
						 * share one round trip (store.c). Every value
						 * kyud puts in a statement is a number or goes
						 * through db_quote. */
			CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS);
	case PH_QUERY:
		if (!first)
			return mysql_real_query_cont(&db->iret, db->my, ready);
		return mysql_real_query_start(&db->iret, db->my, db->sql.buf,
					      (unsigned long)db->sql.len);
	case PH_STORE:
		if (!first)
			return mysql_store_result_cont(&db->res_ret, db->my, ready);
		return mysql_store_result_start(&db->res_ret, db->my);
	case PH_NEXT:
		if (!first)
			return mysql_next_result_cont(&db->iret, db->my, ready);
		return mysql_next_result_start(&db->iret, db->my);
	case PH_NONE:
		break;
	}
	return 0;
}

/* The session set-up's statements: the server's packet limit, whether it
 * is a Galera node that cannot serve yet, and the session's character set
 * (db_session.h). Such a node accepts connections and statements without
 * tables, but refuses the first claim (1047), and it would be first in the
 * list again at the next try: it is passed over here instead. SHOW answers on a node cut off from the
 * cluster, needs no privilege, and gives no row on a server without wsrep
 * (MySQL included). */
#define SETUP_SQL                                                                                  \
	"SELECT @@max_allowed_packet; SHOW GLOBAL VARIABLES LIKE 'wsrep\\_on'; "                   \
	"SHOW GLOBAL STATUS LIKE 'wsrep\\_ready'; " DB_SESSION_CHECK_SQL

/* The value of a SHOW ... LIKE reply's one row, or NULL. */
static const char *show_value(const struct db_result *r)
{
	return r->n_rows == 1 && r->n_cols == 2 ? r->cells[1] : NULL;
}

/* The session set-up is done: read the server's packet limit. Statements
 * larger than it would cost the connection, so db_send refuses them
 * before sending. Returns false for a Galera node not ready to serve, and
 * for a session not in utf8mb4 (whose quoting would not hold): a lost
 * connection, so that a host list moves on to the next server. */
static bool setup_done(struct db *db)
{
	static const struct db_result none = { 0 };

	if (db_session_check(db->my, db->got.n == 4 ? &db->got.r[3] : &none, db->peer, db->err,
			     sizeof(db->err)) < 0) {
		db->err_no = CR_UNKNOWN_ERROR;
		return false;
	}
	if (db->got.n == 4 && db->got.r[0].n_rows == 1 && db->got.r[0].n_cols == 1) {
		const char *on = show_value(&db->got.r[1]), *ready = show_value(&db->got.r[2]);
		if (db->got.r[0].cells[0]) {
			unsigned long long v = strtoull(db->got.r[0].cells[0], NULL, 10);
			/* Leave room for the packet header and a margin. */
			if (v > 4096)
				db->max_statement = (size_t)v - 1024;
		}
		if (on && strcmp(on, "ON") == 0 && (!ready || strcmp(ready, "ON") != 0)) {
			db->err_no = ER_UNKNOWN_COM_ERROR;
			snprintf(db->err, sizeof(db->err),
				 "cannot use %s: a Galera node that is not ready (wsrep_ready %s)",
				 db->peer, ready ? ready : "unknown");
			return false;
		}
	}
	db_reply_reset(&db->got);
	db->setup = false;
	db->connected = true;
	db_session_free(&db->session);
	return true;
}

/* The round trip is over: stop waiting and call back. Nothing of db may
 * be touched after the callback, which may start the next statement or
 * close the connection. */
static void finish(struct db *db, enum db_fail fail)
{
	db_done_fn *done = db->done;
	void *arg = db->arg;

	stop_watchers(db);
	db->connecting = false;
	if (fail == DB_LOST) {
		db_reply_drop_rows(&db->got);
		close_conn(db);
		db_session_free(&db->session);
	}
	db->phase = PH_NONE;
	db->got.reply.fail = fail;
	db->got.reply.err = fail == DB_OK ? NULL : db->err;
	db->got.reply.n = db->got.n;
	db->got.reply.r = db->got.r;
	db->got.reply.sent_at = db->sent_at;
	db->done = NULL;
	if (done)
		done(arg, &db->got.reply);
}

static bool next_step(struct db *db);
static bool start_step(struct db *db, enum phase ph);
static void start_deadline(struct db *db, double seconds);
static int open_host(struct db *db);

/* The round trip ends with fail. A connect that failed moves on to the
 * next server of the list, if there is one, within the same round trip:
 * the caller sees one connect that succeeded on some server, or failed on
 * all (with the last one's error). Returns true when another server is
 * being tried (then like next_step), false when finish() has run. */
static bool end_round(struct db *db, enum db_fail fail)
{
	if (fail == DB_OK && db->setup && !setup_done(db))
		fail = DB_LOST;
	if (fail != DB_OK && db->connecting && db->session.host_at + 1 < db->session.n_hosts) {
		db_reply_drop_rows(&db->got);
		db_reply_reset(&db->got);
		close_conn(db);
		db->session.host_at++;
		if (open_host(db) < 0) {
			finish(db, DB_LOST);
			return false;
		}
		if (db->loop)
			start_deadline(db, db->session.connect_timeout + db->deadline);
		return start_step(db, PH_CONNECT);
	}
	finish(db, fail);
	return false;
}

/* Start the step of the phase just set; returns like next_step. */
static bool start_step(struct db *db, enum phase ph)
{
	db->phase = ph;
	db->wait = call_phase(db, true, 0);
	return db->wait != 0 || next_step(db);
}

/* Drive the current phase until Connector/C has to wait or the round trip
 * is over. Returns true while waiting (flags in db->wait). */
static bool drive(struct db *db, bool first, int ready)
{
	db->wait = call_phase(db, first, ready);
	return db->wait != 0 || next_step(db);
}

static bool statement_done(struct db *db, bool failed)
{
	enum db_fail f;

	if (failed) {
		db_reply_add_error(&db->got, db->my);
		f = classify(db->got.r[db->got.n - 1].err_no);
		set_err_from_mysql(db, NULL);
		/* A node that takes connections but refuses statements would
		 * be first in the list again: the next connect tries the
		 * others before it. */
		if (db->err_no == ER_UNKNOWN_COM_ERROR || db->err_no == ER_ERROR_DURING_COMMIT)
			snprintf(db->session.avoid, sizeof(db->session.avoid), "%s", db->peer);
		if (f == DB_RETRY) {
			db->deadlocks++;
			/* Nothing of a round trip whose first statement failed ran:
			 * sending it again is safe. After a later statement's
			 * failure the earlier ones are done, so that goes back to
			 * the caller. */
			/* A lock wait is re-sent only by a blocking caller: in
			 * the event loop the next one would hold the connection
			 * for as long again, while leases wait behind it. */
			if (db->got.n == 1 && db->retries < DEADLOCK_RETRIES && !db->setup &&
			    (!db->loop || db->err_no != ER_LOCK_WAIT_TIMEOUT)) {
				db->retries++;
				db_reply_reset(&db->got);
				return start_step(db, PH_QUERY);
			}
		}
		return end_round(db, db->setup ? DB_LOST : f);
	}
	if (mysql_field_count(db->my) > 0)
		return start_step(db, PH_STORE);
	db_reply_add(&db->got)->affected = (uint64_t)mysql_affected_rows(db->my);
	if (mysql_more_results(db->my))
		return start_step(db, PH_NEXT);
	return end_round(db, DB_OK);
}

/* Decide what follows a completed step. Returns true when another step
 * was started and waits, false when finish() has run. */
static bool next_step(struct db *db)
{
	switch (db->phase) {
	case PH_CONNECT:
		if (!db->conn_ret) {
			char what[320];
			snprintf(what, sizeof(what), "cannot connect to %s", db->peer);
			set_err_from_mysql(db, what);
			return end_round(db, DB_LOST);
		}
		/* Connector/C opens its socket without close-on-exec: no job
		 * may inherit our authenticated connection. */
		{
			int fd = (int)mysql_get_socket(db->my),
			    fl = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
			if (fl < 0 ||
			    (!(fl & FD_CLOEXEC) && fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0)) {
				db->err_no = CR_UNKNOWN_ERROR;
				snprintf(db->err, sizeof(db->err),
					 "cannot set close-on-exec on the connection to %s: %s",
					 db->peer, fd < 0 ? "no socket" : strerror(errno));
				return end_round(db, DB_LOST);
			}
		}
		db->setup = true;
		sb_reset(&db->sql);
		sb_adds(&db->sql, SETUP_SQL);
		return start_step(db, PH_QUERY);
	case PH_QUERY:
		return statement_done(db, db->iret != 0);
	case PH_NEXT:
		if (db->iret > 0)
			return statement_done(db, true);
		if (db->iret < 0)
			return end_round(db, DB_OK);
		return statement_done(db, false);
	case PH_STORE:
		if (!db->res_ret) {
			/* Announced but unreadable: the link failed mid-way. */
			set_err_from_mysql(db, "reading a result");
			return end_round(db, DB_LOST);
		}
		db_reply_add_rows(&db->got, db->res_ret);
		db->res_ret = NULL;
		if (mysql_more_results(db->my))
			return start_step(db, PH_NEXT);
		return end_round(db, DB_OK);
	case PH_NONE:
		break;
	}
	return false;
}

/* ---- event-loop driving ---------------------------------------------- */

static void arm(struct db *db)
{
	int fd = (int)mysql_get_socket(db->my);
	int ev = 0;

	if (db->wait & (MYSQL_WAIT_READ | MYSQL_WAIT_EXCEPT))
		ev |= EV_READ;
	if (db->wait & MYSQL_WAIT_WRITE)
		ev |= EV_WRITE;
	ev_io_stop(db->loop, &db->io);
	if (ev && fd >= 0) {
		ev_io_set(&db->io, fd, ev);
		ev_io_start(db->loop, &db->io);
	}
	ev_timer_stop(db->loop, &db->tmo);
	if (db->wait & MYSQL_WAIT_TIMEOUT) {
		ev_timer_set(&db->tmo, mysql_get_timeout_value_ms(db->my) / 1000.0, 0.);
		ev_timer_start(db->loop, &db->tmo);
	}
}

static void resume(struct db *db, int ready)
{
	if (drive(db, false, ready))
		arm(db);
}

static void on_io(EV_P_ ev_io *io, int revents)
{
	struct db *db = (struct db *)((char *)io - offsetof(struct db, io));
	int ready = 0;
	(void)EV_A;
	if (revents & EV_READ)
		ready |= MYSQL_WAIT_READ;
	if (revents & EV_WRITE)
		ready |= MYSQL_WAIT_WRITE;
	resume(db, ready);
}

static void on_tmo(EV_P_ ev_timer *t, int revents)
{
	struct db *db = (struct db *)((char *)t - offsetof(struct db, tmo));
	(void)EV_A;
	(void)revents;
	resume(db, MYSQL_WAIT_TIMEOUT);
}

static void set_deadline_err(struct db *db, double seconds)
{
	db->err_no = DB_ERR_NO_ANSWER;
	snprintf(db->err, sizeof(db->err),
		 "no answer from the database within %.0f s; connection abandoned", seconds);
}

static void on_deadline(EV_P_ ev_timer *t, int revents)
{
	struct db *db = (struct db *)((char *)t - offsetof(struct db, dead));
	(void)EV_A;
	(void)revents;
	/* Whatever the server does with the statement now, this session
	 * will never see it: the caller treats it as a lost connection. */
	set_deadline_err(db, db->dead_s);
	if (end_round(db, DB_LOST))
		arm(db);
}

static void start_deadline(struct db *db, double seconds)
{
	ev_timer_stop(db->loop, &db->dead);
	ev_timer_set(&db->dead, seconds, 0.);
	ev_timer_start(db->loop, &db->dead);
	db->dead_s = seconds;
}

/* A new handle for the server at host_at, set up as every kyu session
 * is. */
static int open_host(struct db *db)
{
	db->my = db_session_open(&db->session, db->loop != NULL, db->peer, sizeof(db->peer));
	if (!db->my) {
		snprintf(db->err, sizeof(db->err), "cannot connect: out of memory");
		db->err_no = CR_OUT_OF_MEMORY;
		return -1;
	}
	db->phase = PH_CONNECT;
	db->connecting = true;
	db->sent_at = mono_now();
	return 0;
}

static int begin_connect(struct db *db, const struct kyu_config *cfg, db_done_fn *done, void *arg)
{
	db_close(db);
	db_session_set(&db->session, cfg);
	if (open_host(db) < 0) {
		db_session_free(&db->session);
		return -1;
	}
	db->retries = 0;
	db->done = done;
	db->arg = arg;
	db->round_trips++;
	return 0;
}

int db_connect_async(struct db *db, const struct kyu_config *cfg, db_done_fn *done, void *arg)
{
	if (begin_connect(db, cfg, done, arg) < 0)
		return -1;
	/* Connecting, the session set-up and its first reply share one
	 * deadline. */
	start_deadline(db, db->session.connect_timeout + db->deadline);
	if (drive(db, true, 0))
		arm(db);
	return 0;
}

int db_send(struct db *db, struct strbuf *sb, db_done_fn *done, void *arg)
{
	if (!db_idle(db)) {
		snprintf(db->err, sizeof(db->err), "%s",
			 db->connected ? "a statement is already in flight" : "not connected");
		return -1;
	}
	if (sb->len > db->max_statement) {
		snprintf(
			db->err, sizeof(db->err),
			"statement of %zu bytes exceeds the server's max_allowed_packet (%zu usable)",
			sb->len, db->max_statement);
		return -1;
	}
	sb_free(&db->sql);
	db->sql = *sb;
	memset(sb, 0, sizeof(*sb));
	db->done = done;
	db->arg = arg;
	db->retries = 0;
	db_reply_reset(&db->got);
	db->sent_at = mono_now();
	db->round_trips++;
	if (db->loop) {
		start_deadline(db, db->deadline);
		if (start_step(db, PH_QUERY))
			arm(db);
	}
	return 0;
}

/* ---- blocking driving -------------------------------------------------- */

struct sync_wait {
	bool done;
	enum db_fail fail;
};

static void sync_done(void *arg, const struct db_reply *reply)
{
	struct sync_wait *sw = arg;
	sw->done = true;
	sw->fail = reply->fail;
}

/* Wait in poll() for what Connector/C asks, within the deadline. */
static void run_blocking(struct db *db, double limit, bool waiting, struct sync_wait *sw)
{
	while (waiting && !sw->done) {
		struct pollfd p = { .fd = (int)mysql_get_socket(db->my) };
		/* From the start of the attempt: each server of a connect's list
		 * gets the whole limit. */
		double left = db->sent_at + limit - mono_now();
		int ms = left > 0 ? (int)(left * 1000) + 1 : 0, ready = 0, r;

		if (left <= 0) {
			set_deadline_err(db, limit);
			waiting = end_round(db, DB_LOST);
			continue;
		}
		if (db->wait & (MYSQL_WAIT_READ | MYSQL_WAIT_EXCEPT))
			p.events |= POLLIN | POLLPRI;
		if (db->wait & MYSQL_WAIT_WRITE)
			p.events |= POLLOUT;
		if (db->wait & MYSQL_WAIT_TIMEOUT) {
			int t = (int)mysql_get_timeout_value_ms(db->my);
			if (t < ms)
				ms = t;
		}
		r = poll(&p, 1, ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0 && !(db->wait & MYSQL_WAIT_TIMEOUT))
			continue;
		if (r == 0)
			ready = MYSQL_WAIT_TIMEOUT;
		if (r > 0 && (p.revents & (POLLIN | POLLPRI | POLLHUP | POLLERR)))
			ready |= MYSQL_WAIT_READ;
		if (r > 0 && (p.revents & (POLLOUT | POLLHUP | POLLERR)))
			ready |= MYSQL_WAIT_WRITE;
		waiting = drive(db, false, ready);
	}
}

int db_connect(struct db *db, const struct kyu_config *cfg)
{
	struct sync_wait sw = { 0 };

	if (begin_connect(db, cfg, sync_done, &sw) < 0)
		return -1;
	run_blocking(db, db->session.connect_timeout + db->deadline, drive(db, true, 0), &sw);
	return sw.done && sw.fail == DB_OK ? 0 : -1;
}

enum db_fail db_query(struct db *db, const char *sql, size_t len, const struct db_reply **reply)
{
	struct sync_wait sw = { 0 };
	struct strbuf sb = { 0 };

	*reply = &db->got.reply;
	sb_add(&sb, sql, len);
	if (db_send(db, &sb, sync_done, &sw) < 0) {
		sb_free(&sb);
		db_reply_reset(&db->got);
		db->got.reply.fail = db->connected ? DB_ERROR : DB_LOST;
		db->got.reply.err = db->err;
		return db->got.reply.fail;
	}
	run_blocking(db, db->deadline, start_step(db, PH_QUERY), &sw);
	return sw.fail;
}
