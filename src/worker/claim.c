/* Claiming: when the next claim goes out and how many rows it asks of which
 * queues (pacing, the queue directory: queues.c). See claim.h. */
#include "claim.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysqld_error.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "results.h"

/* A worker that has heard nothing from the supervisor for this many poll
 * intervals claims by itself: the supervisor's poll timer fires at most
 * 1.1 intervals apart (its jitter), and tells every worker (KYU_POLLED),
 * so this happens only while the supervisor is stopped or stuck, when
 * wake-up datagrams and polls do not reach the workers. */
#define SELF_POLL 1.5
/* After a claim waited for a row lock (lock_waited), claims skip locked
 * rows for this long. */
#define SKIP_LOCKED_SPELL 30.0
/* Under load, the queue directory is read again at least this often, so a
 * queue that gains due jobs gets its share within a fraction of a second
 * even while others keep every claim full. */
#define DIR_MAX_AGE 0.25
/* With at most this many queues holding rows, the directory costs a few
 * index dives: it is read with every claim, so a queue that gains due jobs
 * waits for at most one claim per worker planned without it. */
#define DIR_EVERY_CLAIM 64
/* With more queues than this due at once, the queue directory (a walk of
 * names that falls back to a GROUP BY over kyu_jobs, store_claim.c) and
 * chunks of QUEUES_QUANTUM rows per queue make every queue wait for a
 * turn that grows with the others' backlog: the fan takes one row of each
 * due queue in turn instead, and leaves when a whole turn over the names
 * found fewer than FAN_LEAVE rows. */
#define FAN_AT 32
#define FAN_LEAVE 16
/* After leaving, the fan is not begun again for this long: queues whose
 * due rows cannot be claimed (busy keys) would make it begin and leave
 * in turn; the directory's claims drain such queues. */
#define FAN_COOLDOWN 5.0
/* The fan reads waiting rows only: expired leases of its queues are
 * looked for this often (a dead worker's jobs). */
#define FAN_RECLAIM_EVERY 5.0
/* While it goes round, the names of all queues with waiting jobs are filed
 * this often (one GROUP BY over the waiting rows): a name noted by a
 * session that then rolled back is noted no more by that session
 * (sql/upgrade/010-fan.sql). */
#define FAN_REFILE_EVERY 300.0
/* A claim asked for by a wake-up datagram that finds nothing looks again
 * after these delays, each only when the one before found nothing too:
 * the trigger of sql/notify.sql sends its datagram at the INSERT, before
 * the submitter commits, so the claim it causes can come too early to see
 * the rows (an autocommit INSERT's commit, or a transaction that goes on
 * for a second). At most two more claims per wake-up, never a loop; a
 * commit later than that is found by the poll. */
static const double wake_recheck[] = { 0.3, 2.0 };
#define N_WAKE_RECHECK (int)(sizeof(wake_recheck) / sizeof(wake_recheck[0]))

void claim_init(struct claim *cl, const struct kyu_config *cfg, int index, const char *host,
		struct conn *conn, struct parent *parent, struct jobs *jobs, struct held *held,
		struct record *rec, struct retention *ret, struct settle *settle,
		struct peers *peers, struct board_worker *bw)
{
	cl->index = index;
	cl->settle = settle;
	cl->peers = peers;
	cl->cfg = cfg;
	cl->host = host;
	cl->conn = conn;
	cl->parent = parent;
	cl->jobs = jobs;
	cl->rec = rec;
	cl->ret = ret;
	cl->bw = bw;
	cl->held = held;
}

/* The part names a claim copied (build): freed with its reply, or when a
 * claim is sent or the worker exits without one (a connection that was
 * dropped calls nothing back). */
static void forget_parts(struct claim *cl)
{
	for (int k = 0; k < cl->sent.n_parts; k++)
		free((char *)(uintptr_t)cl->sent.parts[k].name);
	cl->sent.n_parts = 0;
}

void claim_free(struct claim *cl)
{
	queues_free(&cl->dir);
	forget_parts(cl);
	free(cl->fan_cursor);
	cl->fan_cursor = NULL;
}

/* ---- the fan ------------------------------------------------------------- */

static void fan_set_cursor(struct claim *cl, const char *name)
{
	free(cl->fan_cursor);
	cl->fan_cursor = xstrdup(name ? name : "");
}

/* Where in kyu_queue_names this worker's fan begins when the directory
 * stops at the FAN_AT + 1st due queue (store_claim.c, add_directory), in
 * millionths of the way through: the workers of a daemon evenly apart,
 * turned as in fan_begin. */
static int fan_from_ppm(const struct claim *cl)
{
	uint64_t workers = (uint64_t)(cl->cfg->workers > 0 ? cl->cfg->workers : 1);
	uint64_t turn = (uint64_t)getppid() * 2654435761u;
	uint64_t w = (uint64_t)(cl->index > 0 ? cl->index - 1 : 0);

	return (int)((w * 1000000u / workers + turn) % 1000000u);
}

/* d: a directory just read that shows more than FAN_AT queues due; from:
 * where the fan begins when that directory stopped there (NULL: it holds
 * every queue, and the fan begins at one of them). */
static void fan_begin(struct claim *cl, struct queues *d, int n_plain, const char *from, double now)
{
	/* The workers of a daemon begin evenly apart, turned by an amount of
	 * the daemon's own (its supervisor's pid), so that two daemons do not
	 * begin where each other's workers do. Claimers on one page take each
	 * queue's next row twice over; apart, each queue's first turn comes
	 * within one walk of the names. */
	int workers = cl->cfg->workers > 0 ? cl->cfg->workers : 1;
	uint64_t turn = (uint64_t)getppid() * 2654435761u;
	int pick = 0, k = 0;
	const char *start = from ? from : "";

	if (n_plain > 0)
		pick = (int)(((uint64_t)(cl->index > 0 ? cl->index - 1 : 0) * (uint64_t)n_plain /
				      (uint64_t)workers +
			      turn) %
			     (uint64_t)n_plain);
	for (int i = 0; !from && i < d->n; i++) {
		if (queues_special(&d->e[i]) || d->e[i].due_at > now)
			continue;
		if (k++ == pick) {
			start = i > 0 ? d->e[i - 1].name : "";
			break;
		}
	}
	fan_set_cursor(cl, start);
	queues_keep_special(d);
	cl->fan = true;
	cl->fan_cycle_got = 0;
	cl->fan_cycle_whole = false;
	cl->fan_reclaim_at = now + FAN_RECLAIM_EVERY;
	cl->fan_refile_at = now + FAN_REFILE_EVERY;
	cl->dir_force = true;
	if (from)
		log_info("more than %d queues have due jobs: claims take one job of each in turn",
			 FAN_AT);
	else
		log_info("%d queues have due jobs: claims take one job of each in turn", n_plain);
}

static void fan_leave(struct claim *cl, double now)
{
	cl->fan = false;
	cl->fan_not_before = now + FAN_COOLDOWN;
	cl->dir_force = true;
	cl->wanted = true;
	log_info("fewer queues have due jobs: claims share by the directory again");
}

/* After a claim with the fan: where the next page begins. A page shorter
 * than asked reached the last name: the next turn begins at the first. */
static void fan_advance(const struct claim_reply *cr, int page, int got, struct claim *cl,
			double now)
{
	log_debug("fan: %d of %d names after '%s', %d rows", cr->fan_names, page,
		  cl->fan_cursor ? cl->fan_cursor : "", got);
	if (cr->fan_names >= page) {
		cl->fan_cycle_got += got;
		fan_set_cursor(cl, cr->fan_end);
		return;
	}
	/* Only a turn over every name says how many queues are due: the
	 * first one begins part-way (fan_begin). */
	if (cl->fan_cycle_whole && cl->fan_cycle_got + got < FAN_LEAVE) {
		fan_leave(cl, now);
		return;
	}
	cl->fan_cycle_got = 0;
	cl->fan_cycle_whole = true;
	fan_set_cursor(cl, "");
	cl->wanted = true;
}

/* ---- what the other rooms tell the claim ----------------------------------- */

void claim_ended(void *claim, const struct job *j)
{
	struct claim *cl = claim;
	double now = mono_now();

	if (j->reason == END_NONE)
		prefetch_ran(&cl->held->ring, now - j->spawned_at);
	prefetch_ended(&cl->held->ring, now);
	/* Its key or its queue's slot is free once the result is recorded:
	 * then claim, so that a job waiting on it starts without a poll. */
	if (j->gated) {
		cl->freed_pending = true;
		peers_ended(cl->peers, j->seq, j->queue);
	}
	/* A free slot is what a restricted queue's rows wait for. */
	if (!cl->more && queues_restricted_due(&cl->dir, now))
		cl->wanted = true;
}

void claim_recorded(void *claim, const struct finish *f, int n, bool retried)
{
	struct claim *cl = claim;

	/* The other daemons may have the next job of a slot freed here (if
	 * this worker's next claim does not take it, or none follows). */
	peers_recorded(cl->peers, f, n, cl->jobs->draining);
	/* A retry is due at the end of its backoff, a moment only the
	 * statement that recorded it knows (RAND() in SQL): the claim that
	 * follows reads it as the next due time, and the supervisor wakes the
	 * workers then, instead of at the next poll. */
	if (retried)
		cl->wanted = true;
	if (cl->freed_pending && n > 0) {
		cl->freed_pending = false;
		cl->wanted = true;
		cl->dir_wanted = true;
		queues_undrain(&cl->dir);
	}
}

void claim_connected(struct claim *cl)
{
	queues_undrain(&cl->dir);
	cl->wanted = true;
	cl->prepared = false;
	cl->txn_dirty = false;
	cl->dir_wanted = true;
}

void claim_wake(struct claim *cl, bool hinted)
{
	/* A datagram, the poll, or the supervisor bringing in another worker:
	 * what the drained queues wait for may be there now. */
	queues_undrain(&cl->dir);
	cl->wanted = true;
	cl->dir_wanted = true;
	/* A new wake-up's claim is later than any recheck of the last one:
	 * the sequence starts again from it. */
	if (hinted) {
		cl->recheck_armed = true;
		cl->recheck_step = 0;
		cl->recheck_at = 0;
	}
}

void claim_want(struct claim *cl)
{
	cl->wanted = true;
}

void claim_settled(void *claim)
{
	struct claim *cl = claim;

	queues_undrain(&cl->dir);
	claim_want(cl);
}

void claim_txn_left_open(struct claim *cl)
{
	cl->txn_dirty = true;
}

void claim_drain(struct claim *cl)
{
	held_give_back_all(cl->held, "kyud is stopping");
	/* Out of the wake-ups' way at once: a stopping daemon takes no new
	 * jobs. */
	if (!cl->jobs->draining)
		cl->recheck_at = 0;
}

void claim_reload(struct claim *cl)
{
	/* The prepared claims carry the lease; the directory, the served
	 * queues. */
	cl->prepared = false;
	queues_free(&cl->dir);
	cl->dir.read_at = 0;
	cl->fan = false;
	held_reload(cl->held);
}

/* ---- pacing: the moments before the claim ---------------------------------- */

/* How many rows to claim now (0: not now). */
static int claim_size(const struct claim *cl)
{
	double now = mono_now();
	int room = cl->cfg->slots + prefetch_room(&cl->held->ring);
	int want = room - cl->jobs->n_running - cl->held->ring.n;

	if (cl->jobs->draining || want <= 0 || now < cl->claim_after)
		return 0;
	if (cl->wanted)
		return want;
	/* Under load, wait until a useful batch is wanted: one claim of k
	 * rows costs about as much as one claim of 1. */
	if (cl->more &&
	    (want >= (room + 1) / 2 || (cl->jobs->n_running == 0 && cl->held->ring.n == 0)))
		return want;
	return 0;
}

/* The moment a wake-up's claim is made again (wake_recheck). */
bool claim_recheck_due(void *claim, struct stmt_turn *t)
{
	struct claim *cl = claim;

	if (cl->recheck_at > 0 && t->now >= cl->recheck_at) {
		cl->recheck_at = 0;
		cl->wanted = true;
		cl->dir_wanted = true;
	}
	return false;
}

double claim_recheck_when(void *claim, double now)
{
	const struct claim *cl = claim;

	(void)now;
	return cl->recheck_at;
}

/* The moment a worker that has not heard from the supervisor claims by
 * itself (SELF_POLL). */
bool claim_self_poll_due(void *claim, struct stmt_turn *t)
{
	struct claim *cl = claim;
	struct parent *p = cl->parent;
	double now = t->now;

	if (!cl->jobs->draining && now >= p->heard_at + SELF_POLL * cl->cfg->poll_interval) {
		if (spell_begin(&p->self_polling))
			log_warn(
				"no word from the supervisor for %.0f s (stopped?): looking for jobs "
				"every %.0f s by itself",
				now - p->heard_at, SELF_POLL * cl->cfg->poll_interval);
		p->heard_at = now;
		cl->wanted = true;
	}
	return false;
}

double claim_self_poll_when(void *claim, double now)
{
	const struct claim *cl = claim;

	(void)now;
	return cl->jobs->draining ? 0 : cl->parent->heard_at + SELF_POLL * cl->cfg->poll_interval;
}

/* The claim's size, for the rows after it: asked of claim_size and of
 * the kernel (parent_alive) once per walk. */
bool claim_size_due(void *claim, struct stmt_turn *t)
{
	struct claim *cl = claim;

	t->want = claim_size(cl);
	if (t->want > 0 && !parent_alive(cl->parent))
		t->want = 0;
	return false;
}

/* A claim that deadlocked waits until claim_after. */
double claim_size_when(void *claim, double now)
{
	const struct claim *cl = claim;

	return cl->wanted && cl->claim_after > now ? cl->claim_after : 0;
}

/* ---- the claim's round trip ------------------------------------------------ */

static int by_share(const void *a, const void *b)
{
	const struct qpart *x = a, *y = b;
	return (x->n > y->n) - (x->n < y->n);
}

static void build(struct claim *cl, int n, int n_plain, struct strbuf *sb)
{
	const struct finish *f = NULL;
	struct claim_plan plan = { 0 };
	double now = mono_now();
	int n_res = 0, n_fin = 0;

	/* Plain successes waiting to be recorded ride along in the claim's
	 * round trip. */
	if (n_plain > 0) {
		f = results_batch(&cl->rec->results, &n_res, &n_plain);
		n_fin = n_plain;
	}
	forget_parts(cl);
	if (cl->fan && !cl->conn->fan)
		cl->fan = false;
	if (cl->fan) {
		int special = 0;

		/* The queues the fan leaves out share up to half of the claim by
		 * the directory (a claim of one row: every other claim); the fan
		 * takes the rest. */
		cl->sent.n_parts =
			queues_plan(&cl->dir, now, (n + (int)(cl->claims & 1)) / 2, cl->sent.parts);
		for (int k = 0; k < cl->sent.n_parts; k++)
			special += cl->sent.parts[k].n;
		plan.fan_n = n - special;
		if (plan.fan_n <= 0)
			plan.fan_n = 0;
		plan.fan_cursor = cl->fan_cursor;
		plan.fan_reclaim = now >= cl->fan_reclaim_at;
		if (plan.fan_reclaim)
			cl->fan_reclaim_at = now + FAN_RECLAIM_EVERY;
		plan.fan_refile = now >= cl->fan_refile_at;
		if (plan.fan_refile)
			cl->fan_refile_at = now + FAN_REFILE_EVERY;
		plan.directory = cl->dir_force || now - cl->dir.read_at >= DIR_MAX_AGE;
		plan.dir_special = true;
	} else if (!cl->more && queues_any_due(&cl->dir, now) &&
		   now - cl->dir.read_at >= DIR_MAX_AGE) {
		plan.directory = true;
	} else {
		cl->sent.n_parts = queues_plan(&cl->dir, now, n, cl->sent.parts);
		/* The directory costs one dive per queue: it is read when a claim
		 * found due rows the catch-all cannot take or kept every claim full
		 * (fair shares matter), and then kept fresh while any queue has due
		 * rows. An idle daemon's poll is the catch-all alone. */
		plan.directory =
			cl->dir_force || (queues_any_due(&cl->dir, now) &&
					  (cl->dir_wanted || cl->dir.n <= DIR_EVERY_CLAIM ||
					   now - cl->dir.read_at >= DIR_MAX_AGE));
		/* Nothing known to be due: claim from every queue without
		 * restrictions by due time, unless rows that cannot be claimed now
		 * (a paused queue, a full one) would lie across that scan; then the
		 * directory read in this round trip decides the next claim. */
		if (cl->sent.n_parts == 0 && !queues_blocked_backlog(&cl->dir, now)) {
			cl->sent.parts[0] = (struct qpart){ .name = NULL, .n = n };
			cl->sent.n_parts = 1;
		}
		if (cl->sent.n_parts == 0)
			plan.directory = true;
	}
	/* Smallest shares first: a queue that just got its share starts its
	 * few jobs before the big queue's batch of the same claim. */
	qsort(cl->sent.parts, (size_t)cl->sent.n_parts, sizeof(cl->sent.parts[0]), by_share);
	/* The names outlive a directory read in this round trip. */
	for (int k = 0; k < cl->sent.n_parts; k++)
		if (cl->sent.parts[k].name)
			cl->sent.parts[k].name = xstrdup(cl->sent.parts[k].name);
	/* A directory that may begin the fan need not read every queue. */
	if (plan.directory && !plan.dir_special && !cl->fan && cl->conn->fan &&
	    now >= cl->fan_not_before && now >= cl->fan_probe_at) {
		plan.dir_fan_at = FAN_AT;
		plan.dir_fan_from_ppm = fan_from_ppm(cl);
	}
	plan.parts = cl->sent.parts;
	plan.n_parts = cl->sent.n_parts;
	plan.prepared = cl->prepared;
	plan.skip_locked = now < cl->skip_locked_until;
	/* Which expired leases may be taken over: none right after a step of
	 * the server's clock (lease.h). */
	plan.lease_cut_us = lease_takeover_before(cl->jobs->lease, now);
	cl->sent.token = random_token();
	cl->sent.claimed_at = now;
	cl->sent.n_fin = n_fin;
	store_claim_build_plan(sb, cl->cfg, cl->sent.token, cl->host, &plan, f, n_fin,
			       &cl->sent.lay);
	record_count_add(cl->rec, sb, f, n_fin);
	cl->sent.n = cl->sent.lay.asked;
	cl->wanted = false;
	if (plan.directory)
		cl->dir_wanted = cl->dir_force = false;
}

/* A claim carries the plain successes waiting to be recorded, as long as
 * no other result waits (those go first, alone: record_due). */
bool claim_with_results_due(void *claim, struct stmt_turn *t)
{
	const struct claim *cl = claim;

	return t->want > 0 && cl->rec->results.n_other == 0 && t->now >= cl->rec->flush_after;
}

bool claim_with_results_send(void *claim, struct stmt_turn *t, struct strbuf *sb)
{
	struct claim *cl = claim;

	build(cl, t->want, cl->rec->results.n_plain, sb);
	return true;
}

bool claim_due(void *claim, struct stmt_turn *t)
{
	(void)claim;
	return t->want > 0;
}

bool claim_send(void *claim, struct stmt_turn *t, struct strbuf *sb)
{
	build(claim, t->want, 0, sb);
	return true;
}

void claim_unsent(void *claim)
{
	struct claim *cl = claim;

	forget_parts(cl);
	parent_send(cl->parent, KYU_IDLE, INT64_MAX);
}

/* A claim waited innodb_lock_wait_timeout (1 s) for a row another
 * transaction holds: a submitter's INSERT not committed yet, or a user's
 * UPDATE in an open transaction, which may last for hours. The plain
 * claim scans the (due, priority) index in order and stops at such a row
 * (InnoDB's semi-consistent read does not cover secondary indexes), so
 * every claim would wait behind it. Claims go round locked rows for a
 * while instead, then try the plain shape again: it is the faster one
 * (notes/DESIGN.md), and the lock is usually gone by then. */
static void lock_waited(struct claim *cl, double now)
{
	if (spell_begin(&cl->lock_waits))
		log_notice(
			"a claim waited for a row lock another transaction holds (an uncommitted "
			"INSERT or UPDATE of kyu_jobs?): claims skip locked rows for the next %.0f s",
			SKIP_LOCKED_SPELL);
	else
		log_debug("a claim waited for a row lock again: skipping locked rows for %.0f s",
			  SKIP_LOCKED_SPELL);
	cl->skip_locked_until = now + SKIP_LOCKED_SPELL;
	cl->claim_after = now;
}

/* A claim that failed: what it left behind is repaired, and it is tried
 * again when that is worth it. */
static void failed(struct claim *cl, const struct db_reply *r, double now)
{
	forget_parts(cl);
	conn_failed(cl->conn, r, "acquiring jobs");
	cl->dir_wanted = true;
	/* A deadlock of the claim UPDATE behind finishes that rode along
	 * (they are done; it is not re-sent within the round trip), or one
	 * that outlasted db.c's retries (on Galera a certification conflict
	 * with another node's claim): the rows are still there to claim, so
	 * claim again after a short jittered wait. Results that did not get
	 * through stay and ride along again. */
	if (r->fail == DB_RETRY && db_error_code(cl->conn->db) == ER_LOCK_WAIT_TIMEOUT) {
		lock_waited(cl, now);
		cl->wanted = true;
		return;
	}
	if (r->fail == DB_RETRY) {
		cl->claim_after = conn_backoff(cl->conn, now);
		cl->wanted = true;
		return;
	}
	if (r->fail == DB_BUSY)
		cl->rec->flush_after = now + CONN_BUSY_RETRY;
	parent_send(cl->parent, KYU_IDLE, INT64_MAX);
}

/* What the claim found tells the supervisor when to ask again: at once
 * (under load: KYU_MORE), or when the next row falls due. */
static void paced(struct claim *cl, const struct claim_reply *cr, bool full, bool catch_all,
		  double now)
{
	int64_t next;

	if (cl->sent.n > 0 && full) {
		/* Under load, queues get fair shares: from the directory. */
		if (catch_all)
			cl->dir_force = true;
		cl->more = true;
		if (!cl->more_sent) {
			parent_send(cl->parent, KYU_MORE, 0);
			cl->more_sent = true;
		}
		return;
	}
	cl->more = false;
	cl->more_sent = false;
	if (cr->dir) {
		next = queues_next_due_us(&cl->dir, now);
		/* The directory shows queues this claim did not ask (it was
		 * read in the same round trip): ask them now, not after a poll. */
		if (next <= 0) {
			cl->wanted = true;
			return;
		}
	} else if (catch_all) {
		next = cr->next_due_us == INT64_MIN ? INT64_MAX : cr->next_due_us;
		/* Due rows the catch-all did not take (a paused or limited
		 * queue's, a busy key's): the directory says which. */
		if (next <= 0) {
			cl->dir_force = true;
			cl->wanted = true;
			return;
		}
	} else {
		next = queues_next_due_us(&cl->dir, now);
	}
	/* The claim's own SELECT read MIN(due) over every served queue after
	 * its marks: when that is later than now, nothing at all is due (none
	 * blocked either), and it is the next moment, also when the directory
	 * is older than this claim or calls a queue drained (a retry's
	 * backoff in a queue whose claim came back short). */
	if (cr->next_due_us > 0 && cr->next_due_us != INT64_MAX && cr->next_due_us < next)
		next = cr->next_due_us;
	parent_send_found(cl->parent, KYU_IDLE, next, cr->got > 0 ? (uint32_t)cr->got : 0);
}

void claim_reply(void *claim, const struct db_reply *r)
{
	struct claim *cl = claim;
	struct claim_reply cr;
	struct db_reply body;
	int got[QUEUES_MAX_PARTS] = { 0 }, got_fan = 0;
	double now = mono_now(), sent = r->sent_at;
	bool full = true, catch_all;

	record_count_read(cl->rec, r, cl->sent.lay.n_stmts, &body);
	store_claim_read_plan(&body, &cl->sent.lay, cl->sent.token, cl->sent.claimed_at, &cr);
	/* The server's clock, read by the claim's SELECT: a step seen here has
	 * the leases renewed before the next claim (lease.h). */
	if (cr.db_now_us > 0)
		lease_clock_read(cl->jobs->lease, cr.db_now_us, sent, now);
	record_count_settle(cl->rec, r, cl->rec->results.view, cl->sent.n_fin,
			    cr.fin_done ? cl->sent.n_fin : 0);
	r = &body;
	if (cr.fin_done)
		record_recorded(cl->rec, cl->sent.n_fin, cr.fin_rejected);
	if (cr.settle)
		settle_want(cl->settle);
	if (cr.dir) {
		struct queues nd = { 0 };
		if (queues_read(&cl->dir, cr.dir, now, &nd) == 0) {
			int n_plain = queues_count_plain(&nd, now);

			if (!cl->fan && !cl->sent.lay.fan_page && cl->conn->fan &&
			    (n_plain > FAN_AT || cr.fan_from) && now >= cl->fan_not_before)
				fan_begin(cl, &nd, n_plain, cr.fan_from, now);
			/* A directory that could have stopped for the fan and read
			 * every queue after all: many queues, few due. Not tried
			 * again for a while, since it reads their waiting rows
			 * twice; the whole directory still begins the fan. */
			else if (cl->sent.lay.dir_cut && nd.n > FAN_AT)
				cl->fan_probe_at = now + FAN_COOLDOWN;
			queues_free(&cl->dir);
			cl->dir = nd;
			/* A queue that just got due jobs gets its share with the
			 * next claim, not once half of the room is free again. */
			if (nd.arrived > 0 && cr.got >= 0)
				cl->wanted = true;
		}
	}
	if (cl->sent.lay.transaction && r->fail != DB_OK && r->fail != DB_LOST)
		cl->txn_dirty = true;
	/* Slots freed here that this claim did not take are announced. */
	peers_claimed(cl->peers, cr.rows, cr.got > 0 ? cr.got : 0);
	/* A claim that failed part-way may have marked rows it never read:
	 * give them back (by token) rather than leave them to their lease.
	 * Kept across a reconnect: the token stays valid, and rows that
	 * meanwhile passed to another claim are no longer matched. */
	if (cr.got < 0) {
		cl->release_token = cl->sent.token;
		failed(cl, r, now);
		return;
	}
	if (cl->sent.lay.prepares)
		cl->prepared = true;
	/* A plain claim went through: the next lock wait is a new spell. */
	if (now >= cl->skip_locked_until + SKIP_LOCKED_SPELL)
		spell_end(&cl->lock_waits);
	if (cl->recheck_armed && cr.got == 0 && cl->recheck_step < N_WAKE_RECHECK)
		cl->recheck_at = now + wake_recheck[cl->recheck_step++];
	else
		cl->recheck_armed = false;
	conn_wrote(cl->conn);
	cl->claims++;
	board_add(cl->bw, BC_CLAIMS, 1);
	board_observe(cl->bw, BH_CLAIM, now - cl->sent.claimed_at);
	board_observe(cl->bw, BH_BATCH, cr.got);
	if (cl->claims % (uint64_t)cl->cfg->cleanup_every == 0)
		cl->ret->wanted = true;
	(void)parent_alive(cl->parent);
	for (int i = 0; i < cr.got; i++) {
		struct claimed *c = &cr.rows[i];
		bool counted = false;
		c->got_at = now;
		for (int k = 0; k < cl->sent.n_parts && !counted; k++) {
			const char *name = cl->sent.parts[k].name;
			if (!name || (c->queue && strcmp(name, c->queue) == 0)) {
				got[k]++;
				counted = true;
			}
		}
		if (!counted)
			got_fan++;
		held_take(cl->held, c);
	}
	store_claimed_free(cr.rows, cr.got);
	if (cr.got > 0)
		log_debug("acquired %d job(s) (asked for %d)", cr.got, cl->sent.n);
	for (int k = 0; k < cl->sent.n_parts; k++)
		if (got[k] < cl->sent.parts[k].n)
			full = false;
	/* The parts' names point into the directory they were planned from,
	 * which the reply may have replaced: they are only compared by name. */
	queues_claimed(&cl->dir, cl->sent.parts, cl->sent.n_parts, got, cl->sent.claimed_at, now,
		       cl->cfg->lease);
	catch_all = cl->sent.n_parts == 1 && !cl->sent.parts[0].name;
	forget_parts(cl);
	if (cl->sent.lay.fan_page > 0) {
		/* A page full of names says more may wait past it, whatever it
		 * found. */
		full = full && cr.fan_names >= cl->sent.lay.fan_page;
		if (cl->fan)
			fan_advance(&cr, cl->sent.lay.fan_page, got_fan, cl, now);
	}
	paced(cl, &cr, full, catch_all, now);
}

/* ---- repairs after a failed claim ------------------------------------------ */

/* A statement sent into a transaction left open would not be committed (a
 * lease renewal included): first of all, once the connection is checked. */
bool claim_rollback_due(void *claim, struct stmt_turn *t)
{
	const struct claim *cl = claim;

	(void)t;
	return cl->txn_dirty || cl->rec->txn_open;
}

bool claim_rollback_send(void *claim, struct stmt_turn *t, struct strbuf *sb)
{
	(void)claim;
	(void)t;
	sb_adds(sb, "ROLLBACK");
	return true;
}

void claim_rollback_reply(void *claim, const struct db_reply *r)
{
	struct claim *cl = claim;

	if (r->fail == DB_OK || r->fail == DB_LOST)
		cl->txn_dirty = cl->rec->txn_open = false;
	if (r->fail != DB_OK)
		conn_failed(cl->conn, r, "ending a failed claim's transaction");
}

bool claim_release_due(void *claim, struct stmt_turn *t)
{
	const struct claim *cl = claim;

	return cl->release_token && cl->rec->flush_after <= t->now;
}

bool claim_release_send(void *claim, struct stmt_turn *t, struct strbuf *sb)
{
	const struct claim *cl = claim;

	(void)t;
	store_release_build(sb, cl->release_token);
	return true;
}

void claim_release_unsent(void *claim)
{
	struct claim *cl = claim;

	cl->release_token = 0;
}

double claim_release_when(void *claim, double now)
{
	const struct claim *cl = claim;

	(void)now;
	return cl->release_token ? cl->rec->flush_after : 0;
}

void claim_release_reply(void *claim, const struct db_reply *r)
{
	struct claim *cl = claim;

	if (r->fail == DB_OK) {
		if (r->n > 0 && r->r[0].affected > 0)
			log_info("gave back %llu job(s) marked by a claim that failed",
				 (unsigned long long)r->r[0].affected);
		cl->release_token = 0;
		return;
	}
	conn_failed(cl->conn, r, "giving back the rows of a failed claim");
	if (r->fail == DB_ERROR)
		cl->release_token = 0; /* as it is, it would fail again: the leases end it */
	else
		cl->rec->flush_after = mono_now() + (r->fail == DB_BUSY ? CONN_BUSY_RETRY : 0.05);
}
