/* A worker process: the event loop, the control channel to the
 * supervisor, the database connection's state, when to claim, and the
 * drain. Each part of a job's life lives elsewhere (notes/DESIGN.md, "Who
 * owns what"): the row from a claim (store.c) waits in the prefetch ring
 * (prefetch.c), runs as a job (job.c), its lease is renewed or fenced by
 * lease.c, its end becomes an outcome (outcome.c) and waits in results.c
 * until a statement records it. Every statement goes through db.c's
 * non-blocking driver, one at a time; pump() decides which is next. */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include <ev.h>
#include <mysqld_error.h>

#include "common/board.h"
#include "common/config.h"
#include "common/db.h"
#include "common/log.h"
#include "common/minutes.h"
#include "common/orphans.h"
#include "common/proto.h"
#include "common/registry.h"
#include "common/schema.h"
#include "common/spell.h"
#include "claim.h"
#include "common/util.h"
#include "conn.h"
#include "daemonrow.h"
#include "held.h"
#include "job.h"
#include "jobs.h"
#include "lease.h"
#include "live.h"
#include "outcome.h"
#include "parent.h"
#include "prefetch.h"
#include "record.h"
#include "retention.h"
#include "scheduler.h"
#include "proc.h"
#include "queues.h"
#include "report.h"
#include "results.h"
#include "schedules.h"
#include "stmt.h"
#include "store.h"

extern char **environ;

/* The soonest the tick fires again for a moment that has passed without
 * pump_once acting on it (arm_tick). */
#define TICK_FLOOR 0.05
/* Progress for the operator: one line per STATS_EVERY seconds, only when
 * something happened. */
#define STATS_EVERY 300.

/* Rows of the statement order (build_order), moments included. */
#define N_ROWS 15

struct worker {
	struct kyu_config cfg;
	int index;
	char host[256];
	struct ev_loop *loop;

	struct conn conn;
	struct parent parent;

	/* The statement order (build_order) and the row whose statement is
	 * in flight (NULL: none). */
	struct stmt_row order[N_ROWS];
	const struct stmt_row *inflight;
	struct report rep;

	struct jobs jobs;
	struct record rec;
	struct held held;
	struct retention ret;
	struct claim claim;
	struct lease lease;
	struct live live; /* running jobs' output tails (live.h) */
	struct scheduler sched;
	struct daemonrow reg;

	/* Loop watchers. */
	ev_io ctl_w;
	ev_prepare prep_w;
	ev_signal term_w;
	ev_timer tick_w;  /* wakes the loop for the next heartbeat, flush or hold expiry */
	ev_timer stats_w;


	uint64_t stats_started, stats_deadlocks; /* at the last stats line */

	/* This worker's slot of the scoreboard (NULL: none), and what of the
	 * totals kept elsewhere it has counted there. */
	struct board *board;
	struct board_worker *bw;
	uint64_t board_deadlocks, board_fences;
};

static void pump(struct worker *w);

/* conn.c's up hook: a new connection is set up. Each room forgets what
 * it knew of the old one. */
static void on_db_up(void *arg)
{
	struct worker *w = arg;

	claim_connected(&w->claim);
	scheduler_connected(&w->sched);
	daemonrow_refresh(&w->reg);
	record_connected(&w->rec);
	/* Renew at once: leases may have aged while the link was down. */
	w->lease.next_beat = 0;
}

/* For the supervisor's readiness, STATUS= and watchdog (report.h). Not
 * connected until conn.c's schema check: a connection whose set-up is still being
 * checked does not count. */
static int64_t worker_state(void *arg)
{
	const struct worker *w = arg;
	struct worker_state st = { .connected = w->conn.usable && db_connected(w->conn.db),
				   .running = (unsigned)w->jobs.n_running };

	if (!st.connected)
		st.db_error = db_error_code(w->conn.db);
	return proto_state_pack(&st);
}

/* The one reply dispatcher: the row is no longer in flight when its
 * reply runs. */
static void on_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;
	const struct stmt_row *row = w->inflight;

	w->inflight = NULL;
	row->on_reply(row->ctx, r);
}

/* Send the statement of a row that is due. db_send refuses a statement
 * before sending (too large, or the connection is not idle): a bug or a
 * limit, never a lost link. */
static void send_row(struct worker *w, const struct stmt_row *row, struct stmt_turn *t)
{
	struct strbuf sb = { 0 };

	if (!row->send(row->ctx, t, &sb))
		return;
	/* Set first: a reply that is already there completes inside db_send. */
	w->inflight = row;
	if (db_send(w->conn.db, &sb, on_reply, w) < 0) {
		w->inflight = NULL;
		log_err("%s: not sent: %s", row->name, db_error(w->conn.db));
		sb_free(&sb);
		if (row->unsent)
			row->unsent(row->ctx);
	}
}

/* ---- jobs -------------------------------------------------------------- */

static void begin_drain(struct worker *w, bool now);

/* parent.c's gone hook: the supervisor went away. */
static void on_parent_gone(void *arg)
{
	struct worker *w = arg;

	ev_io_stop(w->loop, &w->ctl_w);
	begin_drain(w, false);
}

/* ---- statements ---------------------------------------------------------- */

/* The statement order: the first row that is due is sent (pump_once).
 * Leases first (they keep jobs alive), then results, claims, retention;
 * notes/DESIGN.md, "How a statement travels", says why each is where it
 * is. */
static void build_order(struct worker *w)
{
	const struct stmt_row order[N_ROWS] = {
		/* After every connect, before anything is claimed or written. */
		{ .name = "reading the schema version", .ctx = &w->conn, .due = conn_schema_due,
		  .send = conn_schema_send, .on_reply = conn_schema_reply },
		/* Before anything else: a statement sent into a transaction
		 * left open would not be committed (a lease renewal included). */
		{ .name = "ending a failed claim's transaction", .ctx = &w->claim,
		  .due = claim_rollback_due, .send = claim_rollback_send,
		  .on_reply = claim_rollback_reply },
		{ .name = "giving back the rows of a failed claim", .ctx = &w->claim,
		  .due = claim_release_due, .send = claim_release_send,
		  .on_reply = claim_release_reply, .unsent = claim_release_unsent,
		  .when = claim_release_when },
		{ .name = "extending leases", .ctx = &w->lease, .due = lease_beat_due,
		  .send = lease_beat_send, .on_reply = lease_beat_reply, .when = lease_beat_when },
		{ .name = "the daemon registry", .ctx = &w->reg, .due = daemonrow_due,
		  .send = daemonrow_send, .on_reply = daemonrow_reply, .unsent = daemonrow_unsent,
		  .when = daemonrow_when, .exit_waits = true },
		/* Behind the leases, ahead of claims and results: at most one
		 * round trip per interval, so that a worker busy with short jobs
		 * still shows its long ones' output. */
		{ .name = "writing running jobs' output", .ctx = &w->live, .due = live_write_due,
		  .send = live_write_send, .on_reply = live_write_reply, .when = live_write_when },
		{ .name = "a wake-up's recheck", .ctx = &w->claim, .due = claim_recheck_due,
		  .when = claim_recheck_when },
		{ .name = "a schedules wake-up's recheck", .ctx = &w->sched,
		  .due = scheduler_recheck_due, .when = scheduler_recheck_when },
		{ .name = "schedules", .ctx = &w->sched, .due = scheduler_due, .send = scheduler_send,
		  .on_reply = scheduler_reply, .when = scheduler_when },
		{ .name = "claiming by itself", .ctx = &w->claim, .due = claim_self_poll_due,
		  .when = claim_self_poll_when },
		{ .name = "the claim's size", .ctx = &w->claim, .due = claim_size_due,
		  .when = claim_size_when },
		{ .name = "acquiring jobs", .ctx = &w->claim, .due = claim_with_results_due,
		  .send = claim_with_results_send, .on_reply = claim_reply, .unsent = claim_unsent,
		  .exit_waits = true },
		{ .name = "recording results", .ctx = &w->rec, .due = record_due, .send = record_send,
		  .on_reply = record_reply, .unsent = record_unsent, .when = record_when,
		  .exit_waits = true },
		{ .name = "acquiring jobs", .ctx = &w->claim, .due = claim_due, .send = claim_send,
		  .on_reply = claim_reply, .unsent = claim_unsent, .exit_waits = true },
		{ .name = "retention delete", .ctx = &w->ret, .due = retention_due,
		  .send = retention_send, .on_reply = retention_reply },
	};

	memcpy(w->order, order, sizeof(order));
}

/* The tick wakes the loop for the next moment something is due that the
 * loop can act on now. Every statement needs the connection: while one is
 * in flight (or the connection is down) its reply, its deadline or the
 * reconnect timer wakes the loop, and pump_once sends what fell due
 * meanwhile. Arming for a moment already past while the connection is busy
 * would make the loop spin (a zero timeout, again and again, for as long as
 * the statement takes: seconds of CPU with the database stopped). Only the
 * prefetch's hold limit needs no connection. */
static void arm_tick(struct worker *w, double now)
{
	double next = 0;
	bool idle = db_idle(w->conn.db) && !w->conn.exit_status;

	next = held_expiry(&w->held);
	for (int i = 0; idle && i < N_ROWS; i++) {
		const struct stmt_row *row = &w->order[i];
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
	if (held_startable(&w->held))
		next = now;
	ev_timer_stop(w->loop, &w->tick_w);
	if (next > 0) {
		ev_timer_set(&w->tick_w, next > now ? next - now : 0., 0.);
		ev_timer_start(w->loop, &w->tick_w);
	}
}

/* One statement, if one is due and the connection is free: the first due
 * row of the order. Returns true when a row was due (whether or not it
 * had anything to send after all). */
static bool pump_once(struct worker *w)
{
	struct stmt_turn t = { .now = mono_now() };

	held_start(&w->held);
	conn_reconnect_if_wanted(&w->conn);
	if (!db_idle(w->conn.db) || w->conn.exit_status)
		return false;
	for (int i = 0; i < N_ROWS; i++) {
		const struct stmt_row *row = &w->order[i];

		/* A moment's due is called for what it does; it sends nothing. */
		if (!row->due(row->ctx, &t) || !row->send)
			continue;
		send_row(w, row, &t);
		return true;
	}
	return false;
}

/* A reply can complete inside db_send (a local server answers before
 * Connector/C would wait), and its callback may want the next statement
 * at once: with nothing left to wake the loop, that would wait for the
 * next event. So go on while statements complete synchronously (bounded,
 * in case each of them asks for another). */
static void pump(struct worker *w)
{
	for (int i = 0; i < 16; i++)
		if (!pump_once(w) || !db_idle(w->conn.db))
			break;
	arm_tick(w, mono_now());
}

static void on_tick(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)t;
	(void)revents;
	/* Nothing to do here: waking the loop runs on_prepare, which pumps. */
}

static void on_stats(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	uint64_t deadlocks = db_deadlocks(w->conn.db);
	(void)EV_A;
	(void)revents;
	if (w->jobs.n_started == w->stats_started && deadlocks == w->stats_deadlocks)
		return;
	log_info("last %.0f s: %" PRIu64 " job(s) started, %d running; %" PRIu64
		 " deadlock(s) retried; totals: %" PRIu64 " started, %" PRIu64 " late write(s) rejected",
		 STATS_EVERY, w->jobs.n_started - w->stats_started, w->jobs.n_running,
		 deadlocks - w->stats_deadlocks, w->jobs.n_started, w->rec.n_rejected);
	w->stats_started = w->jobs.n_started;
	w->stats_deadlocks = deadlocks;
}

/* ---- stopping and control ------------------------------------------------ */

static void begin_drain(struct worker *w, bool now)
{
	claim_drain(&w->claim);
	daemonrow_drain(&w->reg);
	jobs_drain(&w->jobs, now);
}

static bool db_settings_changed(const struct kyu_config *a, const struct kyu_config *b);

static void reload(struct worker *w, int fd)
{
	struct kyu_config nc;
	char err[512];
	bool db_changed;
	int r;

	if (fd < 0) {
		log_err("reload without a configuration attached; keeping the old one");
		return;
	}
	/* The bytes the supervisor validated, not the file: every worker ends
	 * up on the same configuration whatever happens to the file. */
	r = config_load_fd(fd, w->cfg.path, &nc, err, sizeof(err));
	close(fd);
	if (r < 0) {
		log_err("reload failed, keeping old config: %s", err);
		return;
	}
	config_keep_restart_keys(&nc, &w->cfg);
	db_changed = db_settings_changed(&nc, &w->cfg);
	config_free(&w->cfg);
	w->cfg = nc;
	log_set_level((enum log_level)w->cfg.log_level);
	jobs_configure(&w->jobs);
	lease_configure(&w->lease, &w->cfg);
	live_configure(&w->live, &w->cfg);
	/* New database settings apply from a new connection, opened once the
	 * statement in flight (if any) is back. */
	if (db_changed)
		w->conn.reconnect_wanted = true;
	scheduler_reload(&w->sched);
	/* The queues or the wake-up address may have changed. */
	daemonrow_refresh(&w->reg);
	claim_reload(&w->claim);
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool db_settings_changed(const struct kyu_config *a, const struct kyu_config *b)
{
	return !same(a->db_host, b->db_host) || a->db_port != b->db_port ||
	       !same(a->db_socket, b->db_socket) || !same(a->db_user, b->db_user) ||
	       !same(a->db_password, b->db_password) || !same(a->db_name, b->db_name) ||
	       a->db_connect_timeout != b->db_connect_timeout;
}

static void on_ctl(EV_P_ ev_io *io, int revents)
{
	struct worker *w = io->data;
	struct msg m;
	int fd;
	(void)EV_A;
	(void)revents;

	for (;;) {
		ssize_t n = proto_recv(PROTO_FD, &m, &fd);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			/* The supervisor is gone: finish what we hold, then exit. */
			if (!w->parent.gone)
				parent_gone(&w->parent);
			return;
		}
		if ((size_t)n != sizeof(m) || m.type != KYU_RELOAD) {
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if ((size_t)n != sizeof(m))
			continue;
		parent_heard(&w->parent, mono_now());
		switch (m.type) {
		case KYU_POLLED:
			break;
		case KYU_WAKE:
			claim_wake(&w->claim, m.value == KYU_WAKE_HINTED);
			conn_wake(&w->conn);
			/* Still unreachable: answer, so that the supervisor's next
			 * hint is not held back waiting for this claim. */
			if (!db_connected(w->conn.db))
				parent_send(&w->parent, KYU_IDLE, INT64_MAX);
			break;
		case KYU_STOP:
			begin_drain(w, false);
			break;
		case KYU_STOP_NOW:
			begin_drain(w, true);
			break;
		case KYU_RELOAD:
			reload(w, fd);
			break;
		case KYU_SCHEDULES:
			scheduler_wake(&w->sched);
			break;
		case KYU_REPORT:
			report_configure(&w->rep, m.value);
			break;
		}
	}
}

static void on_term(EV_P_ ev_signal *s, int revents)
{
	(void)EV_A;
	(void)revents;
	begin_drain(s->data, false);
}

/* Totals that other modules keep, onto the scoreboard (a few loads and
 * stores per loop iteration). */
static void sync_board(struct worker *w)
{
	uint64_t d = db_deadlocks(w->conn.db);

	if (!w->bw)
		return;
	board_add(w->bw, BC_DEADLOCKS, d - w->board_deadlocks);
	w->board_deadlocks = d;
	board_add(w->bw, BC_FENCES, w->lease.fenced - w->board_fences);
	w->board_fences = w->lease.fenced;
	board_set(w->bw, BG_RUNNING, (uint64_t)w->jobs.n_running);
}

static void on_prepare(EV_P_ ev_prepare *p, int revents)
{
	struct worker *w = p->data;
	int pending;
	(void)revents;

	pump(w);
	/* After pump: the jobs reaped while it started others are counted in. */
	jobs_sweep(&w->jobs);
	sync_board(w);
	report_check(&w->rep);
	if (!w->jobs.draining || w->jobs.n_running > 0)
		return;
	pending = results_count(&w->rec.results);
	/* The registry's delete goes out before the exit, unless the
	 * connection is gone (the row then expires by itself). */
	if (pending == 0 && !(w->inflight && w->inflight->exit_waits) &&
	    !(w->reg.remove && db_connected(w->conn.db))) {
		ev_break(EV_A_ EVBREAK_ALL);
	} else if (!db_connected(w->conn.db) && mono_now() > w->jobs.drain_deadline) {
		log_err("exiting with %d unrecorded result(s): the database is unreachable; "
			"those jobs run again after their lease",
			pending);
		ev_break(EV_A_ EVBREAK_ALL);
	}
}

static void init_watchers(struct worker *w)
{
	ev_init(&w->tick_w, on_tick);
	w->tick_w.data = w;
	ev_timer_init(&w->stats_w, on_stats, STATS_EVERY, STATS_EVERY);
	w->stats_w.data = w;
	ev_timer_start(w->loop, &w->stats_w);
	ev_io_init(&w->ctl_w, on_ctl, PROTO_FD, EV_READ);
	w->ctl_w.data = w;
	ev_io_start(w->loop, &w->ctl_w);
	ev_prepare_init(&w->prep_w, on_prepare);
	w->prep_w.data = w;
	ev_prepare_start(w->loop, &w->prep_w);
	ev_signal_init(&w->term_w, on_term, SIGTERM);
	w->term_w.data = w;
	ev_signal_start(w->loop, &w->term_w);
}

/* Signal watchers install process-wide handlers that point at the loop:
 * stopped (handlers back to the default) before it is destroyed. */
static void stop_signals(struct worker *w)
{
	ev_signal_stop(w->loop, &w->term_w);
}

int worker_main(int index, struct kyu_config *cfg, const char *daemon_id)
{
	struct worker w = { .index = index };
	char role[32], err[512];

	parent_init(&w.parent, on_parent_gone, &w);
	snprintf(role, sizeof(role), "worker %d", index);
	log_set_role(role);
	w.cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	log_set_level((enum log_level)w.cfg.log_level);
	if (gethostname(w.host, sizeof(w.host)) < 0)
		snprintf(w.host, sizeof(w.host), "unknown");
	/* The descriptors the supervisor placed for us (the control socket
	 * above all) are open across exec for our own exec; no job may
	 * inherit them, whatever becomes of proc.c's closing (issue 25,
	 * item 8). */
	for (int fd = PROTO_FD; fd <= BOARD_FD; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl >= 0 && !(fl & FD_CLOEXEC) && fcntl(fd, F_SETFD, fl | FD_CLOEXEC) < 0) {
			log_err("cannot set close-on-exec on fd %d: %s", fd, strerror(errno));
			config_free(&w.cfg);
			return EX_OSERR;
		}
	}
	/* Orphans of a job (double forks) are re-parented to us, not to init,
	 * so that they can be found and killed. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor decides when to stop and relays reloads; a terminal's
	 * ^C or a HUP sent to the process group reaches us too. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	/* Jobs get no capability of ours across exec, whoever they run as. */
	domain_seal_caps();
	if (domain_resolve(NULL, &w.jobs.self, err, sizeof(err)) < 0) {
		log_err("%s", err);
		config_free(&w.cfg);
		return EX_OSERR;
	}
	/* Not the default loop: that one reaps every child with waitpid in
	 * its own SIGCHLD handler, and the worker reaps with wait4
	 * (on_sigchld). Jobs get an empty signal mask and default
	 * dispositions from proc_spawn whatever this loop installs. */
	w.loop = ev_loop_new(EVFLAG_AUTO);
	if (!w.loop) {
		log_err("cannot create the event loop");
		domain_ids_free(&w.jobs.self);
		config_free(&w.cfg);
		return EX_OSERR;
	}
	/* The supervisor's scoreboard; a worker started by hand has none. */
	{
		int r = board_map(BOARD_FD, true, &w.board);
		if (r == 0)
			w.bw = &w.board->worker[index - 1];
		else if (r != -EBADF)
			log_warn("cannot map the scoreboard (fd %d): %s; counting nothing", BOARD_FD,
				 strerror(-r));
		if (r != -EBADF)
			close(BOARD_FD);
	}
	conn_init(&w.conn, w.loop, &w.cfg, &w.rep, w.bw, on_db_up, &w);
	record_init(&w.rec, &w.cfg, &w.conn, &w.jobs, w.index, daemon_id, w.host, claim_recorded,
		    &w.claim);
	jobs_init(&w.jobs, w.loop, &w.cfg, &w.rec.results, &w.lease, w.bw, claim_ended, &w.claim);
	held_init(&w.held, &w.cfg, &w.jobs, &w.rec.results, &w.parent, &w.claim.dir, w.bw);
	retention_init(&w.ret, &w.cfg, &w.conn, &w.rec, &w.jobs);
	claim_init(&w.claim, &w.cfg, w.host, &w.conn, &w.parent, &w.jobs, &w.held, &w.rec, &w.ret,
		   w.bw);
	lease_init(&w.lease, w.loop, w.jobs.slots, w.cfg.slots, &w.cfg, &w.conn, w.bw);
	live_init(&w.live, w.jobs.slots, w.cfg.slots, &w.cfg, &w.conn);
	build_order(&w);
	init_watchers(&w);
	report_init(&w.rep, w.loop, PROTO_FD, worker_state, &w);
	scheduler_init(&w.sched, &w.cfg, w.index, &w.conn, &w.claim, &w.jobs);
	daemonrow_init(&w.reg, &w.cfg, w.index, daemon_id, w.host, &w.conn, &w.parent, &w.jobs);

	w.parent.heard_at = mono_now();
	conn_start(&w.conn);
	parent_send(&w.parent, KYU_READY, 0);

	ev_run(w.loop, 0);

	log_info("exiting: %" PRIu64 " job(s) started, %" PRIu64 " result(s) recorded, %" PRIu64
		 " given back unstarted, %" PRIu64 " deadlock(s) retried, %" PRIu64
		 " late write(s) rejected, %u loop iteration(s)",
		 w.jobs.n_started, w.rec.n_finished, w.held.n_given_back, db_deadlocks(w.conn.db), w.rec.n_rejected,
		 ev_iteration(w.loop));
	record_free(&w.rec);
	held_free(&w.held);
	claim_free(&w.claim);
	scheduler_free(&w.sched);
	lease_free(&w.lease);
	live_free(&w.live);
	conn_free(&w.conn);
	if (w.bw)
		board_set(w.bw, BG_RUNNING, 0);
	board_unmap(w.board);
	stop_signals(&w);
	jobs_free(&w.jobs);
	ev_loop_destroy(w.loop);
	config_free(&w.cfg);
	return w.conn.exit_status;
}
