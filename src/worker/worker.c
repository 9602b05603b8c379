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
#include "common/util.h"
#include "conn.h"
#include "job.h"
#include "jobs.h"
#include "lease.h"
#include "live.h"
#include "outcome.h"
#include "parent.h"
#include "prefetch.h"
#include "record.h"
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
/* A worker that has heard nothing from the supervisor for this many poll
 * intervals claims by itself: the supervisor's poll timer fires at most
 * 1.1 intervals apart (its jitter), and tells every worker (KYU_POLLED),
 * so this happens only while the supervisor is stopped or stuck, when
 * wake-up datagrams and polls do not reach the workers. */
#define SELF_POLL 1.5
/* Progress for the operator: one line per STATS_EVERY seconds, only when
 * something happened. */
#define STATS_EVERY 300.
/* After a claim waited for a row lock (lock_waited), claims skip locked
 * rows for this long. */
#define SKIP_LOCKED_SPELL 30.0
/* A lease renewal that waited for a row lock is tried again this soon,
 * not a heartbeat interval later. */
#define BEAT_RETRY 1.0
/* Under load, the queue directory is read again at least this often, so a
 * queue that gains due jobs gets its share within a fraction of a second
 * even while others keep every claim full. */
#define DIR_MAX_AGE 0.25
/* With at most this many queues holding rows, the directory costs a few
 * index dives: it is read with every claim, so a queue that gains due jobs
 * waits for at most one claim per worker planned without it. */
#define DIR_EVERY_CLAIM 64
/* A claim asked for by a wake-up datagram that finds nothing looks again
 * after these delays, each only when the one before found nothing too:
 * the trigger of sql/notify.sql sends its datagram at the INSERT, before
 * the submitter commits, so the claim it causes can come too early to see
 * the rows (an autocommit INSERT's commit, or a transaction that goes on
 * for a second). At most two more claims per wake-up, never a loop; a
 * commit later than that is found by the poll. */
static const double wake_recheck[] = { 0.3, 2.0 };
#define N_WAKE_RECHECK (int)(sizeof(wake_recheck) / sizeof(wake_recheck[0]))
/* The same for the scheduler: a schedule INSERTed in SQL wakes it before
 * its commit; kyu_schedules is read once more this much later. */
#define SCHEDULES_RECHECK 1.0

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

	/* What the statement in flight was. */
	struct {
		uint64_t token;
		double claimed_at;
		int n, n_fin;
		bool cleanup_minutes; /* the retention round trip ends with kyu_minutes' */
		struct claim_layout lay;
		struct qpart parts[QUEUES_MAX_PARTS];
		int n_parts;
	} sent;

	/* Queues: the directory last read and the state of the connection's
	 * claim statements. */
	struct queues dir;
	bool dir_wanted;    /* read the directory with the next claim, if any queue had due rows */
	bool dir_force;     /* read it with the next claim in any case */
	bool prepared;      /* kyu_claim/kyu_reclaim exist on this connection */
	bool txn_dirty;     /* a failed claim may have left a transaction open */
	bool freed_pending; /* a job that held a key or a limited slot ended */
	uint64_t release_token; /* a failed claim whose marked rows are to be given back (0: none) */

	/* The daemon's row of kyu_daemons, kept by worker 1 (registry.h). */
	char daemon_id[REGISTRY_ID_MAX];
	bool reg_on;      /* this worker keeps the row */
	bool reg_remove;  /* stopping: delete the row (once) */
	bool reg_sending_remove;
	struct spell reg_failing; /* writing the row fails (logged at its start and end) */
	double reg_next;  /* monotonic: the next refresh (0: at once) */

	/* A wake-up datagram asked for the next claim (wake_recheck). */
	bool recheck_armed;
	int recheck_step;        /* rechecks made for this wake-up */
	double recheck_at;       /* monotonic: claim again then (0: no) */
	double schedules_recheck_at; /* monotonic: read kyu_schedules again then (0: no) */

	/* Schedules, in worker 1 only (schedules.h). */
	struct schedules sched;
	bool schedules_on;
	bool schedules_txn; /* the statement in flight opened a transaction */

	struct jobs jobs;
	struct record rec;
	struct prefetch held;
	struct lease lease;
	struct live live; /* running jobs' output tails (live.h) */
	double claim_after; /* a claim that deadlocked waits until then */
	double skip_locked_until; /* claims mark with SKIP LOCKED until then */
	struct spell lock_waits; /* claims wait for row locks (logged once per spell) */
	bool cleanup_lockless; /* the server refused GET_LOCK: retention goes without it */

	/* Claim pacing. */
	bool wanted, more, more_sent, cleanup_wanted;
	uint64_t claims;

	/* Loop watchers. */
	ev_io ctl_w;
	ev_prepare prep_w;
	ev_signal term_w;
	ev_timer tick_w;  /* wakes the loop for the next heartbeat, flush or hold expiry */
	ev_timer stats_w;


	uint64_t n_given_back;
	uint64_t stats_started, stats_deadlocks; /* at the last stats line */

	/* This worker's slot of the scoreboard (NULL: none), and what of the
	 * totals kept elsewhere it has counted there. */
	struct board *board;
	struct board_worker *bw;
	uint64_t board_deadlocks, board_fences;
	double beat_due; /* monotonic: when the lease renewal in flight was due */
	double reloaded_at; /* monotonic: the last reload (dropped_by_reload) */
};

static void pump(struct worker *w);

/* conn.c's up hook: a new connection is set up. Each room forgets what
 * it knew of the old one. */
static void on_db_up(void *arg)
{
	struct worker *w = arg;

	w->wanted = true;
	w->prepared = false;
	w->txn_dirty = false;
	w->dir_wanted = true;
	schedules_reset(&w->sched, mono_now());
	w->reg_next = 0;
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

/* record.c's recorded hook: n results were recorded. */
static void on_recorded(void *arg, int n)
{
	struct worker *w = arg;

	if (w->freed_pending && n > 0) {
		w->freed_pending = false;
		w->wanted = true;
		w->dir_wanted = true;
	}
}

/* jobs.c's ended hook: a job ended; its slot, and its key or limited
 * queue's slot once its result is recorded, are free. */
static void on_job_ended(void *arg, const struct job *j)
{
	struct worker *w = arg;

	if (j->reason == END_NONE)
		prefetch_ran(&w->held, mono_now() - j->spawned_at);
	/* Its key or its queue's slot is free once the result is recorded:
	 * then claim, so that a job waiting on it starts without a poll. */
	if (j->gated)
		w->freed_pending = true;
	/* A free slot is what a restricted queue's rows wait for. */
	if (!w->more && queues_restricted_due(&w->dir, mono_now()))
		w->wanted = true;
}

static void begin_drain(struct worker *w, bool now);

/* parent.c's gone hook: the supervisor went away. */
static void on_parent_gone(void *arg)
{
	struct worker *w = arg;

	ev_io_stop(w->loop, &w->ctl_w);
	begin_drain(w, false);
}

static void give_back(struct worker *w, struct claimed *c);

/* Whether cfg serves queue, as the claim's filter compares (utf8mb4_bin
 * pads with spaces; NULL is in no list). */
static bool serves(const struct kyu_config *cfg, const char *queue)
{
	size_t lq;

	if (cfg->n_queues == 0)
		return true;
	if (!queue)
		return false;
	for (lq = strlen(queue); lq > 0 && queue[lq - 1] == ' '; lq--)
		;
	for (int i = 0; i < cfg->n_queues; i++) {
		size_t l;
		for (l = strlen(cfg->queues[i]); l > 0 && cfg->queues[i][l - 1] == ' '; l--)
			;
		if (l == lq && memcmp(cfg->queues[i], queue, l) == 0)
			return true;
	}
	return false;
}

/* A row claimed under an older configuration (held, or a claim in flight
 * during a reload) of a queue the new one no longer serves has no section
 * to run under any more: it goes back for a daemon that serves it. */
static bool dropped_by_reload(const struct worker *w, const struct claimed *c)
{
	return c->claimed_at < w->reloaded_at && !serves(&w->cfg, c->queue);
}

/* c goes to jobs.c, which takes it (there is a free slot). */
static void start_job(struct worker *w, struct claimed *c)
{
	const struct qentry *q;

	if (dropped_by_reload(w, c)) {
		log_info("gave back job %s of queue %s: the configuration no longer serves it", c->id,
			 c->queue ? c->queue : "(none)");
		give_back(w, c);
		return;
	}
	q = c->queue ? queues_find(&w->dir, c->queue) : NULL;
	jobs_start(&w->jobs, c, c->key != NULL || (q && q->restricted));
}

static void give_back(struct worker *w, struct claimed *c)
{
	struct outcome_out o = { .record = true, .outcome = OUT_RELEASE, .exit_code = -1 };

	prefetch_gave_back(&w->held);
	board_count(w->bw, c->queue, BJ_GIVEN_BACK);
	results_add(&w->rec.results, c->seq, c->token, 0, &o, NULL);
	store_claimed_clear(c);
	w->n_given_back++;
}

static void give_back_all(struct worker *w, const char *why)
{
	struct claimed c;
	int n = 0;

	while (prefetch_pop(&w->held, &c)) {
		give_back(w, &c);
		n++;
	}
	if (n)
		log_info("gave back %d claimed job(s) that had not started: %s", n, why);
}

/* Start held jobs while slots are free; give back those held too long. */
static void start_held(struct worker *w)
{
	double now = mono_now();
	struct claimed c;
	int expired = 0;

	while (w->held.n > 0 && now >= prefetch_expiry(&w->held)) {
		prefetch_pop(&w->held, &c);
		give_back(w, &c);
		expired++;
	}
	if (expired)
		log_info("gave back %d claimed job(s) not started within %.1f s: every slot stayed busy",
			 expired, w->held.hold_limit);
	if (w->held.n == 0)
		return;
	/* A job that has exited frees its slot now, not after the held jobs
	 * started before its SIGCHLD is handled: a spawn waits for the new
	 * process to exec, and meanwhile short jobs end (one wait4 that finds
	 * nothing costs a microsecond). */
	jobs_reap(&w->jobs);
	if (w->jobs.n_running < w->cfg.slots)
		(void)parent_alive(&w->parent);
	/* At most a slot's worth of starts per call: with short jobs each
	 * start may free a slot again, and the loop's other work (replies,
	 * output, fencing) must not wait for the whole prefetch ring.
	 * arm_tick brings the loop straight back for the rest. */
	for (int n = 0; n < w->cfg.slots && w->jobs.n_running < w->cfg.slots && !w->jobs.draining &&
			    prefetch_pop(&w->held, &c);
	     n++) {
		start_job(w, &c);
		jobs_reap(&w->jobs);
	}
}

/* Held jobs that could start now (start_held stopped after its share). */
static bool startable(const struct worker *w)
{
	return w->held.n > 0 && w->jobs.n_running < w->cfg.slots && !w->jobs.draining;
}

/* ---- statements ---------------------------------------------------------- */

/* The part names a claim copied (send_claim): freed with its reply, or
 * when a claim is sent or the worker exits without one (a connection that
 * was dropped calls nothing back). */
static void forget_parts(struct worker *w)
{
	for (int k = 0; k < w->sent.n_parts; k++)
		free((char *)(uintptr_t)w->sent.parts[k].name);
	w->sent.n_parts = 0;
}

/* A claim waited innodb_lock_wait_timeout (1 s) for a row another
 * transaction holds: a submitter's INSERT not committed yet, or a user's
 * UPDATE in an open transaction, which may last for hours. The plain
 * claim scans the (due, priority) index in order and stops at such a row
 * (InnoDB's semi-consistent read does not cover secondary indexes), so
 * every claim would wait behind it. Claims go round locked rows for a
 * while instead, then try the plain shape again: it is the faster one
 * (notes/DESIGN.md), and the lock is usually gone by then. */
static void lock_waited(struct worker *w, double now)
{
	if (spell_begin(&w->lock_waits))
		log_notice("a claim waited for a row lock another transaction holds (an uncommitted "
			   "INSERT or UPDATE of kyu_jobs?): claims skip locked rows for the next %.0f s",
			   SKIP_LOCKED_SPELL);
	else
		log_debug("a claim waited for a row lock again: skipping locked rows for %.0f s",
			  SKIP_LOCKED_SPELL);
	w->skip_locked_until = now + SKIP_LOCKED_SPELL;
	w->claim_after = now;
}

static void claim_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;
	struct claim_reply cr;
	struct db_reply body;
	int got[QUEUES_MAX_PARTS] = { 0 };
	double now = mono_now();
	bool full = true, catch_all;
	int64_t next;

	record_count_read(&w->rec, r, w->sent.lay.n_stmts, &body);
	store_claim_read_plan(&body, &w->sent.lay, w->sent.token, w->sent.claimed_at, &cr);
	record_count_settle(&w->rec, r, w->rec.results.view, w->sent.n_fin, cr.fin_done ? w->sent.n_fin : 0);
	r = &body;
	if (cr.fin_done)
		record_recorded(&w->rec, w->sent.n_fin, cr.fin_rejected);
	if (cr.dir) {
		struct queues nd = { 0 };
		if (queues_read(&w->dir, cr.dir, now, &nd) == 0) {
			queues_free(&w->dir);
			w->dir = nd;
			/* A queue that just got due jobs gets its share with the
			 * next claim, not once half of the room is free again. */
			if (nd.arrived > 0 && cr.got >= 0)
				w->wanted = true;
		}
	}
	if (w->sent.lay.transaction && r->fail != DB_OK && r->fail != DB_LOST)
		w->txn_dirty = true;
	/* A claim that failed part-way may have marked rows it never read:
	 * give them back (by token) rather than leave them to their lease.
	 * Kept across a reconnect: the token stays valid, and rows that
	 * meanwhile passed to another claim are no longer matched. */
	if (cr.got < 0)
		w->release_token = w->sent.token;
	if (cr.got < 0) {
		forget_parts(w);
		conn_failed(&w->conn, r, "acquiring jobs");
		w->dir_wanted = true;
		/* A deadlock of the claim UPDATE behind finishes that rode along
		 * (they are done; it is not re-sent within the round trip), or
		 * one that outlasted db.c's retries (on Galera a certification
		 * conflict with another node's claim): the rows are still there
		 * to claim, so claim again after a short jittered wait. Results
		 * that did not get through stay and ride along again. */
		if (r->fail == DB_RETRY && db_error_code(w->conn.db) == ER_LOCK_WAIT_TIMEOUT) {
			lock_waited(w, now);
			w->wanted = true;
			return;
		}
		if (r->fail == DB_RETRY) {
			w->claim_after = conn_backoff(&w->conn, now);
			w->wanted = true;
			return;
		}
		if (r->fail == DB_BUSY)
			w->rec.flush_after = now + CONN_BUSY_RETRY;
		parent_send(&w->parent, KYU_IDLE, INT64_MAX);
		return;
	}
	if (w->sent.lay.prepares)
		w->prepared = true;
	/* A plain claim went through: the next lock wait is a new spell. */
	if (now >= w->skip_locked_until + SKIP_LOCKED_SPELL)
		spell_end(&w->lock_waits);
	if (w->recheck_armed && cr.got == 0 && w->recheck_step < N_WAKE_RECHECK)
		w->recheck_at = now + wake_recheck[w->recheck_step++];
	else
		w->recheck_armed = false;
	conn_wrote(&w->conn);
	w->claims++;
	board_add(w->bw, BC_CLAIMS, 1);
	board_observe(w->bw, BH_CLAIM, now - w->sent.claimed_at);
	board_observe(w->bw, BH_BATCH, cr.got);
	if (w->claims % (uint64_t)w->cfg.cleanup_every == 0)
		w->cleanup_wanted = true;
	(void)parent_alive(&w->parent);
	for (int i = 0; i < cr.got; i++) {
		struct claimed *c = &cr.rows[i];
		c->got_at = now;
		for (int k = 0; k < w->sent.n_parts; k++) {
			const char *name = w->sent.parts[k].name;
			if (!name || (c->queue && strcmp(name, c->queue) == 0)) {
				got[k]++;
				break;
			}
		}
		if (w->jobs.draining)
			give_back(w, c);
		else if (w->held.n == 0 && w->jobs.n_running < w->cfg.slots)
			start_job(w, c);
		else if (!prefetch_push(&w->held, c))
			/* Claims never ask for more than there is room for;
			 * giving the row back is always safe. */
			give_back(w, c);
	}
	store_claimed_free(cr.rows, cr.got);
	if (cr.got > 0)
		log_debug("acquired %d job(s) (asked for %d)", cr.got, w->sent.n);
	for (int k = 0; k < w->sent.n_parts; k++)
		if (got[k] < w->sent.parts[k].n)
			full = false;
	/* The parts' names point into the directory they were planned from,
	 * which the reply may have replaced: they are only compared by name. */
	queues_claimed(&w->dir, w->sent.parts, w->sent.n_parts, got, now, w->cfg.lease);
	catch_all = w->sent.n_parts == 1 && !w->sent.parts[0].name;
	forget_parts(w);
	if (w->sent.n > 0 && full) {
		/* Under load, queues get fair shares: from the directory. */
		if (catch_all)
			w->dir_force = true;
		w->more = true;
		if (!w->more_sent) {
			parent_send(&w->parent, KYU_MORE, 0);
			w->more_sent = true;
		}
		return;
	}
	w->more = false;
	w->more_sent = false;
	if (cr.dir) {
		next = queues_next_due_us(&w->dir, now);
		/* The directory shows queues this claim did not ask (it was
		 * read in the same round trip): ask them now, not after a poll. */
		if (next <= 0) {
			w->wanted = true;
			return;
		}
	} else if (catch_all) {
		next = cr.next_due_us == INT64_MIN ? INT64_MAX : cr.next_due_us;
		/* Due rows the catch-all did not take (a paused or limited
		 * queue's, a busy key's): the directory says which. */
		if (next <= 0) {
			w->dir_force = true;
			w->wanted = true;
			return;
		}
	} else {
		next = queues_next_due_us(&w->dir, now);
	}
	parent_send(&w->parent, KYU_IDLE, next);
}

/* How many rows to claim now (0: not now). */
static int claim_size(const struct worker *w)
{
	int room = w->cfg.slots + prefetch_target(&w->held);
	int want = room - w->jobs.n_running - w->held.n;

	if (w->jobs.draining || want <= 0 || mono_now() < w->claim_after)
		return 0;
	if (w->wanted)
		return want;
	/* Under load, wait until a useful batch is wanted: one claim of k
	 * rows costs about as much as one claim of 1. */
	if (w->more && (want >= (room + 1) / 2 || (w->jobs.n_running == 0 && w->held.n == 0)))
		return want;
	return 0;
}

static int by_share(const void *a, const void *b)
{
	const struct qpart *x = a, *y = b;
	return (x->n > y->n) - (x->n < y->n);
}

static void build_claim(struct worker *w, int n, int n_plain, struct strbuf *sb)
{
	const struct finish *f = NULL;
	struct claim_plan plan = { 0 };
	double now = mono_now();
	int n_res = 0, n_fin = 0;

	/* Plain successes waiting to be recorded ride along in the claim's
	 * round trip. */
	if (n_plain > 0) {
		f = results_batch(&w->rec.results, &n_res, &n_plain);
		n_fin = n_plain;
	}
	forget_parts(w);
	/* Not under load, with a directory old enough that what it calls due
	 * may long be gone (an idle spell after a busy one): read it alone
	 * first rather than claim from every queue it names. */
	if (!w->more && queues_any_due(&w->dir, now) && now - w->dir.read_at >= DIR_MAX_AGE) {
		plan.directory = true;
	} else {
		w->sent.n_parts = queues_plan(&w->dir, now, n, w->sent.parts);
		/* The directory costs one dive per queue: it is read when a claim
		 * found due rows the catch-all cannot take or kept every claim full
		 * (fair shares matter), and then kept fresh while any queue has due
		 * rows. An idle daemon's poll is the catch-all alone. */
		plan.directory = w->dir_force ||
				 (queues_any_due(&w->dir, now) &&
				  (w->dir_wanted || w->dir.n <= DIR_EVERY_CLAIM ||
				   now - w->dir.read_at >= DIR_MAX_AGE));
		/* Nothing known to be due: claim from every queue without
		 * restrictions by due time, unless rows that cannot be claimed now
		 * (a paused queue, a full one) would lie across that scan; then the
		 * directory read in this round trip decides the next claim. */
		if (w->sent.n_parts == 0 && !queues_blocked_backlog(&w->dir, now)) {
			w->sent.parts[0] = (struct qpart){ .name = NULL, .n = n };
			w->sent.n_parts = 1;
		}
		if (w->sent.n_parts == 0)
			plan.directory = true;
	}
	/* Smallest shares first: a queue that just got its share starts its
	 * few jobs before the big queue's batch of the same claim. */
	qsort(w->sent.parts, (size_t)w->sent.n_parts, sizeof(w->sent.parts[0]), by_share);
	/* The names outlive a directory read in this round trip. */
	for (int k = 0; k < w->sent.n_parts; k++)
		if (w->sent.parts[k].name)
			w->sent.parts[k].name = xstrdup(w->sent.parts[k].name);
	plan.parts = w->sent.parts;
	plan.n_parts = w->sent.n_parts;
	plan.prepared = w->prepared;
	plan.skip_locked = now < w->skip_locked_until;
	w->sent.token = random_token();
	w->sent.claimed_at = now;
	w->sent.n_fin = n_fin;
	store_claim_build_plan(sb, &w->cfg, w->sent.token, w->host, &plan, f, n_fin, &w->sent.lay);
	record_count_add(&w->rec, sb, f, n_fin);
	w->sent.n = w->sent.lay.asked;
	w->wanted = false;
	if (plan.directory)
		w->dir_wanted = w->dir_force = false;
}

/* A claim carries the plain successes waiting to be recorded, as long as
 * no other result waits (those go first, alone: finish_due). */
static bool claim_finish_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	return t->want > 0 && w->rec.results.n_other == 0 && t->now >= w->rec.flush_after;
}

static bool claim_finish_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;

	build_claim(w, t->want, w->rec.results.n_plain, sb);
	return true;
}

static bool claim_due(void *arg, struct stmt_turn *t)
{
	(void)arg;
	return t->want > 0;
}

static bool claim_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	build_claim(arg, t->want, 0, sb);
	return true;
}

static void claim_unsent(void *arg)
{
	struct worker *w = arg;

	forget_parts(w);
	parent_send(&w->parent, KYU_IDLE, INT64_MAX);
}

static void release_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;

	if (r->fail == DB_OK) {
		if (r->n > 0 && r->r[0].affected > 0)
			log_info("gave back %llu job(s) marked by a claim that failed",
				 (unsigned long long)r->r[0].affected);
		w->release_token = 0;
		return;
	}
	conn_failed(&w->conn, r, "giving back the rows of a failed claim");
	if (r->fail == DB_ERROR)
		w->release_token = 0; /* as it is, it would fail again: the leases end it */
	else
		w->rec.flush_after = mono_now() + (r->fail == DB_BUSY ? CONN_BUSY_RETRY : 0.05);
}

static bool release_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	return w->release_token && w->rec.flush_after <= t->now;
}

static bool release_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	const struct worker *w = arg;

	(void)t;
	store_release_build(sb, w->release_token);
	return true;
}

static void release_unsent(void *arg)
{
	struct worker *w = arg;

	w->release_token = 0;
}

static double release_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return w->release_token ? w->rec.flush_after : 0;
}

static void rollback_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;

	if (r->fail == DB_OK || r->fail == DB_LOST)
		w->txn_dirty = false;
	if (r->fail != DB_OK)
		conn_failed(&w->conn, r, "ending a failed claim's transaction");
}

static bool rollback_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	(void)t;
	return w->txn_dirty;
}

static bool rollback_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	(void)arg;
	(void)t;
	sb_adds(sb, "ROLLBACK");
	return true;
}

static void beat_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;

	if (r->fail != DB_OK)
		conn_failed(&w->conn, r, "extending leases");
	else
		board_observe(w->bw, BH_HEARTBEAT, mono_now() - w->beat_due);
	lease_reply(&w->lease, r);
	if ((r->fail == DB_RETRY || r->fail == DB_BUSY) && w->lease.next_beat > mono_now() + BEAT_RETRY)
		w->lease.next_beat = mono_now() + BEAT_RETRY;
}

static bool beat_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	return lease_due(&w->lease, t->now);
}

static bool beat_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;
	double now = mono_now();

	(void)t;
	/* Due at next_beat; 0 means "at once" (after a reconnect). */
	w->beat_due = w->lease.next_beat > 0 && w->lease.next_beat < now ? w->lease.next_beat : now;
	return lease_build(&w->lease, &w->cfg, sb);
}

static double beat_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return lease_renewing(&w->lease) ? w->lease.next_beat : 0;
}

static void live_reply_(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;
	int n;

	n = live_reply(&w->live, r);
	switch (r->fail) {
	case DB_OK:
		log_debug("wrote the output tail of %d running job(s)", n);
		if (spell_end(&w->live.failing))
			log_notice("running jobs' output is written again");
		break;
	case DB_LOST:
		conn_failed(&w->conn, r, "writing running jobs' output");
		break;
	case DB_RETRY:
	case DB_BUSY:
		/* Tried again at the next interval; the results and the
		 * claims that matter say so if it lasts. */
		log_debug("writing running jobs' output: %s; next time", r->err);
		break;
	case DB_ERROR:
		/* Once per spell: it would repeat every interval. */
		if (spell_begin(&w->live.failing))
			log_warn("writing running jobs' output failed: %s; trying again every %.0f s",
				 r->err, w->live.interval);
		break;
	}
}

static bool live_due_(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	return live_due(&w->live, t->now);
}

static bool live_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;

	return live_build(&w->live, t->now, db_max_statement(w->conn.db), sb);
}

static double live_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return live_next(&w->live);
}

static void cleanup_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;
	struct db_reply body = *r;
	int64_t n;

	/* The delete of old kyu_minutes rows, last: its failure is the
	 * count's business (it fails the same way), not retention's. */
	if (w->sent.cleanup_minutes &&
	    minutes_split(r, STORE_CLEANUP_STMTS, &body) == MINUTES_FAILED)
		log_debug("retention of kyu_minutes: %s", r->err);
	r = &body;
	n = store_cleanup_read(r);
	if (n > 0)
		log_info("retention: deleted %" PRId64 " finished jobs older than %d s", n,
			 w->cfg.retention);
	else if (!w->cleanup_lockless && store_cleanup_lock_refused(r)) {
		/* The lock only keeps two cleaners from doing the same work
		 * (store.c): retention must not stop for want of it. Said once
		 * per worker; the server's answer will not change. */
		log_notice("retention: the server refuses GET_LOCK (%s); deleting without the lock "
			   "from now on",
			   r->err);
		w->cleanup_lockless = true;
		w->cleanup_wanted = true;
	} else if (n < 0)
		conn_failed(&w->conn, r, "retention delete");
}

static bool cleanup_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	(void)t;
	return w->cleanup_wanted && !w->jobs.draining;
}

static bool cleanup_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;

	(void)t;
	w->cleanup_wanted = false;
	store_cleanup_build_lock(sb, &w->cfg, !w->cleanup_lockless);
	w->sent.cleanup_minutes = record_counting(&w->rec);
	if (w->sent.cleanup_minutes)
		minutes_cleanup_build(sb, w->cfg.cleanup_batch);
	return true;
}

static void sched_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;

	/* A step is a transaction: one that failed part-way is ended before
	 * anything else is sent (a lost connection ends it by itself). */
	if (r->fail != DB_OK && r->fail != DB_LOST && w->schedules_txn)
		w->txn_dirty = true;
	if (r->fail == DB_LOST || r->fail == DB_RETRY || r->fail == DB_BUSY)
		conn_failed(&w->conn, r, "schedules");
	schedules_read(&w->sched, r, mono_now());
	if (w->sched.fired_new) {
		/* The job may be ours to run; with no wake-up trigger nothing
		 * else would tell us before the poll. */
		w->sched.fired_new = false;
		w->wanted = true;
	}
}

/* A step is rare and short; before claims, so that a busy worker
 * still fires on time. */
static bool sched_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	return w->schedules_on && !w->jobs.draining && schedules_ready(&w->sched, t->now);
}

static bool sched_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;

	w->schedules_txn = schedules_build(&w->sched, sb, t->now);
	return true;
}

static double sched_when(void *arg, double now)
{
	const struct worker *w = arg;

	return w->schedules_on && !w->jobs.draining ? schedules_wake_time(&w->sched, now) : 0;
}

/* The moment a wake-up of the scheduler is looked at again
 * (SCHEDULES_RECHECK). */
static bool sched_recheck_due(void *arg, struct stmt_turn *t)
{
	struct worker *w = arg;

	if (w->schedules_recheck_at > 0 && t->now >= w->schedules_recheck_at) {
		w->schedules_recheck_at = 0;
		if (w->schedules_on)
			schedules_poke(&w->sched, t->now);
	}
	return false;
}

static double sched_recheck_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return w->schedules_recheck_at;
}

static void registry_reply(void *arg, const struct db_reply *r)
{
	struct worker *w = arg;
	double now = mono_now();
	char msg[256];
	enum registry_result res;

	if (r->fail == DB_LOST) {
		/* The next connection refreshes at once (on_connected); a
		 * stopping daemon's row is left to expire. */
		conn_failed(&w->conn, r, "the daemon registry");
		w->reg_remove = false;
		return;
	}
	res = registry_read(r, msg, sizeof(msg));
	if (w->reg_sending_remove) {
		w->reg_remove = false;
		if (res == REG_DONE)
			log_debug("removed this daemon's row of kyu_daemons");
		else if (res != REG_MISSING)
			log_warn("cannot remove this daemon's row of kyu_daemons (%s): it is skipped "
				 "once its live_until has passed, and deleted by another daemon",
				 msg);
		return;
	}
	switch (res) {
	case REG_DONE:
		if (spell_end(&w->reg_failing))
			log_notice("the daemon registry is written again");
		else
			log_debug("registered in kyu_daemons as %s", w->daemon_id);
		w->reg_next = now + registry_interval(&w->cfg);
		break;
	case REG_LOCKED:
		/* A submitter's open transaction holds the row: never wait. */
		log_debug("kyu_daemons: row locked (%s); trying again in %.0f s", msg, REGISTRY_RETRY);
		w->reg_next = now + REGISTRY_RETRY;
		break;
	case REG_MISSING:
		if (spell_begin(&w->reg_failing))
			log_notice("no kyu_daemons table (%s): this daemon is not registered, and wake-ups "
				   "reach it only at its listen address; run `kyu schema upgrade` (kyu(1))",
				   msg);
		w->reg_next = now + registry_interval(&w->cfg);
		break;
	case REG_FAILED:
		if (spell_begin(&w->reg_failing))
			log_warn("writing this daemon's row of kyu_daemons failed: %s; wake-ups from "
				 "other hosts may miss it until it is written (kyud(8), grants)",
				 msg);
		w->reg_next = now + registry_interval(&w->cfg);
		break;
	}
}

static bool registry_due(void *arg, struct stmt_turn *t)
{
	const struct worker *w = arg;

	if (!w->reg_on)
		return false;
	if (w->jobs.draining)
		return w->reg_remove;
	return t->now >= w->reg_next;
}

static bool registry_send(void *arg, struct stmt_turn *t, struct strbuf *sb)
{
	struct worker *w = arg;

	(void)t;
	w->reg_sending_remove = w->jobs.draining;
	if (w->jobs.draining)
		registry_remove_build(sb, w->daemon_id);
	else
		registry_refresh_build(sb, &w->cfg, w->daemon_id, w->host, w->parent.pid);
	return true;
}

static void registry_unsent(void *arg)
{
	struct worker *w = arg;

	w->reg_remove = false;
	w->reg_next = mono_now() + registry_interval(&w->cfg);
}

static double registry_when(void *arg, double now)
{
	const struct worker *w = arg;

	if (!w->reg_on || w->jobs.draining)
		return 0;
	return w->reg_next > 0 ? w->reg_next : now;
}

/* The moment a wake-up's claim is made again (wake_recheck). */
static bool recheck_due(void *arg, struct stmt_turn *t)
{
	struct worker *w = arg;

	if (w->recheck_at > 0 && t->now >= w->recheck_at) {
		w->recheck_at = 0;
		w->wanted = true;
		w->dir_wanted = true;
	}
	return false;
}

static double recheck_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return w->recheck_at;
}

/* The moment a worker that has not heard from the supervisor claims by
 * itself (SELF_POLL). */
static bool self_poll_due(void *arg, struct stmt_turn *t)
{
	struct worker *w = arg;
	double now = t->now;

	if (!w->jobs.draining && now >= w->parent.heard_at + SELF_POLL * w->cfg.poll_interval) {
		if (spell_begin(&w->parent.self_polling))
			log_warn("no word from the supervisor for %.0f s (stopped?): looking for jobs "
				 "every %.0f s by itself",
				 now - w->parent.heard_at, SELF_POLL * w->cfg.poll_interval);
		w->parent.heard_at = now;
		w->wanted = true;
	}
	return false;
}

static double self_poll_when(void *arg, double now)
{
	const struct worker *w = arg;

	(void)now;
	return w->jobs.draining ? 0 : w->parent.heard_at + SELF_POLL * w->cfg.poll_interval;
}

/* The claim's size, for the rows after it: asked of claim_size and of
 * the kernel (supervisor_alive) once per walk. */
static bool claim_size_due(void *arg, struct stmt_turn *t)
{
	struct worker *w = arg;

	t->want = claim_size(w);
	if (t->want > 0 && !parent_alive(&w->parent))
		t->want = 0;
	return false;
}

/* A claim that deadlocked waits until claim_after. */
static double claim_when(void *arg, double now)
{
	const struct worker *w = arg;

	return w->wanted && w->claim_after > now ? w->claim_after : 0;
}

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
		{ .name = "ending a failed claim's transaction", .ctx = w, .due = rollback_due,
		  .send = rollback_send, .on_reply = rollback_reply },
		{ .name = "giving back the rows of a failed claim", .ctx = w, .due = release_due,
		  .send = release_send, .on_reply = release_reply, .unsent = release_unsent,
		  .when = release_when },
		{ .name = "extending leases", .ctx = w, .due = beat_due, .send = beat_send,
		  .on_reply = beat_reply, .when = beat_when },
		{ .name = "the daemon registry", .ctx = w, .due = registry_due, .send = registry_send,
		  .on_reply = registry_reply, .unsent = registry_unsent, .when = registry_when,
		  .exit_waits = true },
		/* Behind the leases, ahead of claims and results: at most one
		 * round trip per interval, so that a worker busy with short jobs
		 * still shows its long ones' output. */
		{ .name = "writing running jobs' output", .ctx = w, .due = live_due_, .send = live_send,
		  .on_reply = live_reply_, .when = live_when },
		{ .name = "a wake-up's recheck", .ctx = w, .due = recheck_due, .when = recheck_when },
		{ .name = "a schedules wake-up's recheck", .ctx = w, .due = sched_recheck_due,
		  .when = sched_recheck_when },
		{ .name = "schedules", .ctx = w, .due = sched_due, .send = sched_send,
		  .on_reply = sched_reply, .when = sched_when },
		{ .name = "claiming by itself", .ctx = w, .due = self_poll_due, .when = self_poll_when },
		{ .name = "the claim's size", .ctx = w, .due = claim_size_due, .when = claim_when },
		{ .name = "acquiring jobs", .ctx = w, .due = claim_finish_due, .send = claim_finish_send,
		  .on_reply = claim_reply, .unsent = claim_unsent, .exit_waits = true },
		{ .name = "recording results", .ctx = &w->rec, .due = record_due, .send = record_send,
		  .on_reply = record_reply, .unsent = record_unsent, .when = record_when,
		  .exit_waits = true },
		{ .name = "acquiring jobs", .ctx = w, .due = claim_due, .send = claim_send,
		  .on_reply = claim_reply, .unsent = claim_unsent, .exit_waits = true },
		{ .name = "retention delete", .ctx = w, .due = cleanup_due, .send = cleanup_send,
		  .on_reply = cleanup_reply },
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

	if (w->held.n > 0)
		next = prefetch_expiry(&w->held);
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
	if (startable(w))
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

	start_held(w);
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
	give_back_all(w, "kyud is stopping");
	if (!w->jobs.draining) {
		/* Out of the wake-ups' way at once: a stopping daemon takes no
		 * new jobs. */
		w->reg_remove = w->reg_on;
		w->recheck_at = 0;
	}
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
	/* The prepared claims carry the lease; the directory, the served
	 * queues. */
	w->prepared = false;
	queues_free(&w->dir);
	w->dir.read_at = 0;
	/* New database settings apply from a new connection, opened once the
	 * statement in flight (if any) is back. */
	if (db_changed)
		w->conn.reconnect_wanted = true;
	/* A step in flight finishes; turning schedules off ends them after it. */
	w->schedules_on = w->index == 1 && w->cfg.schedules;
	if (w->schedules_on)
		schedules_poke(&w->sched, mono_now());
	/* The queues or the wake-up address may have changed. */
	w->reg_next = 0;
	w->reloaded_at = mono_now();
	{
		/* Held rows of queues no longer served go back now rather than
		 * wait for a slot; the others keep their order. */
		struct claimed c;
		int n = w->held.n, back = 0;

		while (n-- > 0 && prefetch_pop(&w->held, &c)) {
			if (dropped_by_reload(w, &c)) {
				give_back(w, &c);
				back++;
			} else if (!prefetch_push(&w->held, &c)) {
				give_back(w, &c);
			}
		}
		if (back)
			log_info("gave back %d claimed job(s) of queues the configuration no longer serves",
				 back);
	}
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
			w->wanted = true;
			w->dir_wanted = true;
			/* A new wake-up's claim is later than any recheck of
			 * the last one: the sequence starts again from it. */
			if (m.value == KYU_WAKE_HINTED) {
				w->recheck_armed = true;
				w->recheck_step = 0;
				w->recheck_at = 0;
			}
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
			if (w->schedules_on) {
				schedules_poke(&w->sched, mono_now());
				w->schedules_recheck_at = mono_now() + SCHEDULES_RECHECK;
			}
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
	    !(w->reg_remove && db_connected(w->conn.db))) {
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
	record_init(&w.rec, &w.cfg, &w.conn, &w.jobs, w.index, daemon_id, w.host, on_recorded, &w);
	jobs_init(&w.jobs, w.loop, &w.cfg, &w.rec.results, &w.lease, w.bw, on_job_ended, &w);
	prefetch_init(&w.held, w.cfg.slots, w.cfg.prefetch, w.cfg.lease, w.cfg.fence_margin);
	lease_init(&w.lease, w.loop, w.jobs.slots, w.cfg.slots, &w.cfg);
	live_init(&w.live, w.jobs.slots, w.cfg.slots, &w.cfg);
	build_order(&w);
	init_watchers(&w);
	report_init(&w.rep, w.loop, PROTO_FD, worker_state, &w);
	schedules_init(&w.sched);
	w.schedules_on = w.index == 1 && w.cfg.schedules;
	if (w.index == 1 && daemon_id) {
		snprintf(w.daemon_id, sizeof(w.daemon_id), "%s", daemon_id);
		w.reg_on = true;
	}

	w.cleanup_wanted = true;
	w.parent.heard_at = mono_now();
	conn_start(&w.conn);
	parent_send(&w.parent, KYU_READY, 0);

	ev_run(w.loop, 0);

	log_info("exiting: %" PRIu64 " job(s) started, %" PRIu64 " result(s) recorded, %" PRIu64
		 " given back unstarted, %" PRIu64 " deadlock(s) retried, %" PRIu64
		 " late write(s) rejected, %u loop iteration(s)",
		 w.jobs.n_started, w.rec.n_finished, w.n_given_back, db_deadlocks(w.conn.db), w.rec.n_rejected,
		 ev_iteration(w.loop));
	record_free(&w.rec);
	prefetch_free(&w.held);
	queues_free(&w.dir);
	schedules_free(&w.sched);
	forget_parts(&w);
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
