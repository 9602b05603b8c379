/* A worker process: the loop and the rooms it is built of. worker.c sets
 * them up, wires each room to the ones it uses and the hooks by which a
 * lower room tells an upper one (conn_up, jobs' ended, record's
 * recorded, parent's gone), runs the loop and tears it all down.
 *
 * One job from claim to recorded result, and the room of each step
 * (notes/DESIGN.md, "Who owns what"):
 *   pump.c     the statement order picks the claim's row when it is due;
 *   claim.c    builds the claim and reads its reply: the rows (struct
 *              claimed, common/attempt.h);
 *   held.c     starts each at once, or holds it in the prefetch ring for a
 *              slot, or gives it back;
 *   jobs.c     starts it in a slot (job.c: one job's process), reaps it,
 *              turns its end into an outcome (outcome.c) and queues the
 *              result (results.c: struct finish);
 *   lease.c    renews its lease while it runs, or fences it;
 *   record.c   records the result, alone or riding along with the next
 *              claim, and counts it in kyu_minutes; results.c forgets it.
 * Beside them: conn.c (the connection), parent.c (the supervisor's
 * liveness), control.c (its messages, reload, drain, reports), and the
 * chores live.c, retention.c, scheduler.c and daemonrow.c. Every
 * statement goes through db.c's non-blocking driver, one at a time. */
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sysexits.h>
#include <unistd.h>

#include <ev.h>

#include "claim.h"
#include "common/board.h"
#include "common/config.h"
#include "common/db.h"
#include "common/domain.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "conn.h"
#include "control.h"
#include "daemonrow.h"
#include "held.h"
#include "jobs.h"
#include "lease.h"
#include "live.h"
#include "parent.h"
#include "proc.h"
#include "pump.h"
#include "record.h"
#include "retention.h"
#include "scheduler.h"

/* Progress for the operator: one line per STATS_EVERY seconds, only when
 * something happened. */
#define STATS_EVERY 300.

/* What the loop holds: the configuration every room reads, the rooms
 * (bottom up: each uses only rooms listed before it, and tells a later
 * one something only through a hook wired in build), and the loop's own
 * watchers. */
struct worker {
	struct kyu_config cfg;
	int index;
	char host[256];
	struct ev_loop *loop;
	/* The supervisor's scoreboard (NULL: a worker started by hand). */
	struct board *board;
	struct board_worker *bw;

	struct conn conn;
	struct parent parent;
	struct lease lease;
	struct live live;
	struct jobs jobs;
	struct record rec;
	struct held held;
	struct retention ret;
	struct settle settle;
	struct peers peers;
	struct claim claim;
	struct scheduler sched;
	struct daemonrow reg;
	struct pump pump;
	struct control ctl;

	ev_prepare prep_w;
	ev_timer stats_w;
	uint64_t stats_started, stats_deadlocks; /* at the last stats line */
};

/* conn.c's up hook: a new connection is set up. Each room forgets what
 * it knew of the old one. */
static void on_db_up(void *arg)
{
	struct worker *w = arg;

	claim_connected(&w->claim);
	scheduler_connected(&w->sched);
	daemonrow_refresh(&w->reg);
	/* Recorded on the old session, perhaps counted there: unknowable now. */
	record_connected(&w->rec);
	/* Renew at once: leases may have aged while the link was down. */
	w->lease.next_beat = 0;
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
		 " deadlock(s) retried; totals: %" PRIu64 " started, %" PRIu64
		 " late write(s) rejected",
		 STATS_EVERY, w->jobs.n_started - w->stats_started, w->jobs.n_running,
		 deadlocks - w->stats_deadlocks, w->jobs.n_started, w->rec.n_rejected);
	w->stats_started = w->jobs.n_started;
	w->stats_deadlocks = deadlocks;
}

/* Before the loop sleeps, so after every event: send what is due, sweep,
 * report; a drained worker exits here. */
static void on_prepare(EV_P_ ev_prepare *p, int revents)
{
	struct worker *w = p->data;
	int pending;
	(void)revents;

	pump_run(&w->pump);
	/* After pump: the jobs reaped while it started others are counted in. */
	jobs_sweep(&w->jobs);
	control_sync(&w->ctl);
	if (!w->jobs.draining || w->jobs.n_running > 0)
		return;
	pending = results_count(&w->rec.results);
	/* The registry's delete goes out before the exit, unless the
	 * connection is gone (the row then expires by itself). */
	if (pending == 0 && !pump_exit_waits(&w->pump) &&
	    !(w->reg.remove && db_connected(w->conn.db))) {
		ev_break(EV_A_ EVBREAK_ALL);
	} else if (!db_connected(w->conn.db) && mono_now() > w->jobs.drain_deadline) {
		log_err("exiting with %d unrecorded result(s): the database is unreachable; "
			"those jobs run again after their lease",
			pending);
		ev_break(EV_A_ EVBREAK_ALL);
	}
}

/* The supervisor's scoreboard; a worker started by hand has none. */
static void map_board(struct worker *w)
{
	int r = board_map(BOARD_FD, true, &w->board);

	if (r == 0)
		w->bw = &w->board->worker[w->index - 1];
	else if (r != -EBADF)
		log_warn("cannot map the scoreboard (fd %d): %s; counting nothing", BOARD_FD,
			 strerror(-r));
	if (r != -EBADF)
		close(BOARD_FD);
}

/* The rooms, bottom up; each is handed the rooms it uses. */
static void build(struct worker *w, const char *daemon_id)
{
	struct pump_rooms pr = { &w->conn,  &w->held, &w->claim, &w->lease,  &w->reg,  &w->live,
				 &w->sched, &w->rec,  &w->ret,   &w->settle, &w->peers };
	struct control_rooms cr = { &w->parent, &w->conn,  &w->jobs, &w->lease, &w->live,
				    &w->claim,  &w->sched, &w->reg,  &w->settle };

	conn_init(&w->conn, w->loop, &w->cfg, &w->ctl.rep, w->bw, on_db_up, w);
	settle_init(&w->settle, &w->conn, claim_settled, &w->claim);
	record_init(&w->rec, &w->cfg, &w->conn, &w->jobs, w->index, daemon_id, w->host, &w->settle,
		    claim_recorded, &w->claim);
	jobs_init(&w->jobs, w->loop, &w->cfg, &w->rec.results, &w->lease, w->bw, claim_ended,
		  &w->claim);
	lease_init(&w->lease, w->loop, w->jobs.slots, w->cfg.slots, &w->cfg, &w->conn, w->bw);
	live_init(&w->live, w->jobs.slots, w->cfg.slots, &w->cfg, &w->conn);
	held_init(&w->held, &w->cfg, &w->jobs, &w->rec.results, &w->parent, &w->claim.dir, w->bw);
	retention_init(&w->ret, &w->cfg, &w->conn, &w->rec, &w->jobs);
	peers_init(&w->peers, &w->cfg, &w->conn, w->rec.daemon);
	claim_init(&w->claim, &w->cfg, w->index, w->host, &w->conn, &w->parent, &w->jobs, &w->held,
		   &w->rec, &w->ret, &w->settle, &w->peers, w->bw);
	scheduler_init(&w->sched, &w->cfg, w->index, &w->conn, &w->claim, &w->jobs);
	daemonrow_init(&w->reg, &w->cfg, w->index, daemon_id, w->host, &w->conn, &w->parent,
		       &w->jobs, w->board);
	pump_init(&w->pump, w->loop, &pr);
	control_init(&w->ctl, w->loop, &w->cfg, &cr, w->bw);

	ev_timer_init(&w->stats_w, on_stats, STATS_EVERY, STATS_EVERY);
	w->stats_w.data = w;
	ev_timer_start(w->loop, &w->stats_w);
	control_start(&w->ctl);
	ev_prepare_init(&w->prep_w, on_prepare);
	w->prep_w.data = w;
	ev_prepare_start(w->loop, &w->prep_w);
}

static void block_async_signals(void)
{
	sigset_t set;

	sigfillset(&set);
	for (int sig = 1; sig < NSIG; sig++)
		if (proc_synchronous_signal(sig))
			sigdelset(&set, sig);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/* libev reads the signals of its watchers from a signalfd when it can
 * make one, and otherwise installs a handler for them, which a blocked
 * signal never reaches: then unblock what has a handler, and proc_start
 * blocks everything around each clone instead. */
static void settle_signals(void)
{
	sigset_t handled;

	if (proc_settle_signals(&handled))
		return;
	log_notice(
		"signals are handled without a signalfd: each job's start blocks them around its clone");
	sigprocmask(SIG_UNBLOCK, &handled, NULL);
}

int worker_main(int index, struct kyu_config *cfg, const char *daemon_id)
{
	struct worker w = { .index = index };
	char role[32], err[512];

	parent_init(&w.parent, control_parent_gone, &w.ctl);
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
	/* And the jobs die with us, however we die (proc.c, the life line). */
	if (proc_life_init(err, sizeof(err)) < 0)
		log_warn(
			"%s: if every kyud process is killed at once, its jobs run on until they end",
			err);
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor decides when to stop and relays reloads; a terminal's
	 * ^C or a HUP sent to the process group reaches us too. */
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);

	/* Jobs get no capability of ours across exec, whoever they run as. */
	domain_privs_seal();
	if (domain_resolve(NULL, &w.jobs.self, err, sizeof(err)) < 0) {
		log_err("%s", err);
		config_free(&w.cfg);
		return EX_OSERR;
	}
	/* Every asynchronous signal stays blocked for the worker's whole
	 * life, and the two it handles (SIGTERM, SIGCHLD) are read from a
	 * signalfd: no handler of ours can then run in a job's child before
	 * its exec, so proc_start need not block and unblock them around
	 * every clone (two system calls per job), and an exit costs a read
	 * of the signalfd per loop turn instead of a signal frame per job
	 * (notes/DESIGN.md, "Where a worker's time goes"). Jobs get an empty
	 * mask and default dispositions from proc_start.
	 *
	 * Not the default loop: that one reaps every child with waitpid in
	 * its own SIGCHLD handler, and the worker reaps with wait4
	 * (jobs_reap). */
	block_async_signals();
	w.loop = ev_loop_new(EVFLAG_AUTO | EVFLAG_SIGNALFD);
	if (!w.loop) {
		log_err("cannot create the event loop");
		domain_ids_free(&w.jobs.self);
		config_free(&w.cfg);
		return EX_OSERR;
	}
	map_board(&w);
	build(&w, daemon_id);
	settle_signals();

	w.parent.heard_at = mono_now();
	conn_start(&w.conn);
	parent_send(&w.parent, KYU_READY, 0);

	ev_run(w.loop, 0);

	log_info("exiting: %" PRIu64 " job(s) started, %" PRIu64 " result(s) recorded, %" PRIu64
		 " given back unstarted, %" PRIu64 " deadlock(s) retried, %" PRIu64
		 " late write(s) rejected, %u loop iteration(s)",
		 w.jobs.n_started, w.rec.n_finished, w.held.n_given_back, db_deadlocks(w.conn.db),
		 w.rec.n_rejected, ev_iteration(w.loop));
	record_free(&w.rec);
	held_free(&w.held);
	claim_free(&w.claim);
	peers_free(&w.peers);
	scheduler_free(&w.sched);
	lease_free(&w.lease);
	live_free(&w.live);
	conn_free(&w.conn);
	if (w.bw)
		board_set(w.bw, BG_RUNNING, 0);
	board_unmap(w.board);
	/* Signal watchers install process-wide handlers that point at the
	 * loop: stopped (handlers back to the default) before it is
	 * destroyed. */
	control_free(&w.ctl);
	jobs_free(&w.jobs);
	ev_loop_destroy(w.loop);
	config_free(&w.cfg);
	return w.conn.exit_status;
}
