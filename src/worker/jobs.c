/* The jobs a worker runs: its slots, starting a claimed row as a job,
 * reaping every child (wait4, for the attempt's cost). See jobs.h. */
#include "jobs.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/orphans.h"
#include "common/util.h"
#include "outcome.h"
#include "proc.h"
#include "store.h"

extern char **environ;

/* An attempt's end on the scoreboard, by its queue. */
static void count_outcome(struct jobs *js, const char *queue, const struct outcome_out *o,
			  enum end_reason reason)
{
	static const int by_outcome[] = {
		[OUT_SUCCEEDED] = BJ_SUCCEEDED, [OUT_RETRY] = BJ_RETRIED,
		[OUT_FAILED] = BJ_FAILED,       [OUT_RELEASE] = -1,
		[OUT_CANCELLED] = BJ_CANCELLED,
	};
	if (!o->record)
		return;
	if (by_outcome[o->outcome] >= 0)
		board_count(js->bw, queue, (enum board_job)by_outcome[o->outcome]);
	if (reason == END_TIMEOUT)
		board_count(js->bw, queue, BJ_TIMED_OUT);
}

/* A row whose attempt could not start: its result all the same. */
static void never_started(struct jobs *js, const char *id, const char *queue, uint64_t seq,
			  uint64_t token, bool downstream, const struct outcome_out *o)
{
	count_outcome(js, queue, o, END_NONE);
	results_add(js->results, seq, token, downstream, 0, o, NULL);
	if (o->outcome != OUT_RELEASE)
		log_info("job %s %s: %s", id, o->outcome == OUT_RETRY ? "will retry" : "failed",
			 o->error);
}

static void log_end(const struct job *j, const struct outcome_out *o)
{
	if (!o->record)
		log_warn("job %s: attempt %u abandoned: its lease was lost", j->id, j->attempts);
	else if (o->outcome == OUT_SUCCEEDED)
		log_debug("job %s succeeded", j->id);
	else
		log_info("job %s %s: %s", j->id,
			 o->outcome == OUT_RETRY     ? "will retry"
			 : o->outcome == OUT_FAILED  ? "failed"
			 : o->outcome == OUT_RELEASE ? "put back"
						     : "cancelled",
			 o->error);
}

/* job.c's end callback: the attempt is over and its process reaped. */
static void on_job_end(void *ctx, struct job *j)
{
	struct jobs *js = ctx;
	struct outcome_in in = {
		.reason = j->reason,
		.wstatus = j->wstatus,
		.rusage = &j->rusage,
		.attempts = j->attempts,
		.tempfails = j->tempfails,
		.max_attempts = j->max_attempts,
		.time_limit = j->time_limit,
		.permanent_codes = js->cfg->perm_codes,
		.n_permanent_codes = js->cfg->n_perm_codes,
	};
	struct outcome_out o;
	char said[CAPTURE_LINE_MAX + 4]; /* the line, and "…" when it was cut */

	js->ended(js->ended_ctx, j);
	if (j->start_fail) {
		/* Its process failed before its exec (proc.h): an attempt
		 * that never started, as if the spawn had failed at once. */
		never_started(js, j->id, j->queue, j->seq, j->token, j->downstream, j->start_fail);
		goto free;
	}
	if (capture_line_get(&j->last_line, &j->cap, said, sizeof(said)))
		in.said = said;
	outcome_decide(&in, &o);
	log_end(j, &o);
	count_outcome(js, j->queue, &o, j->reason);
	if (o.record)
		results_add_status(js->results, j->seq, j->token, j->downstream, (int)j->pid, &o,
				   &j->cap, &j->status);
free:
	for (int i = 0; i < js->cfg->slots; i++)
		if (js->slots[i] == j)
			js->slots[i] = NULL;
	js->n_running--;
	/* The sweep kills what started no earlier than the earliest job
	 * that ended before it (keep_child). */
	if (j->start_ticks < js->sweep_from)
		js->sweep_from = j->start_ticks;
	job_free(j);
	/* Once per loop iteration (jobs_sweep), however many jobs ended in
	 * it: a sweep reads /proc and asks every child's process group. */
	js->sweep_wanted = true;
}

/* Settle the starts of jobs whose process has not executed yet (their
 * stacks go back to the pool), kill those past their deadline, and have
 * start_w look again at the earliest deadline left. No system call. Run
 * before each start and before the loop sleeps (jobs_sweep), so a new
 * start's deadline is armed before the loop waits. */
static void check_starts(struct jobs *js)
{
	double now = 0, next = 0, dl;
	bool any = false;

	for (int i = 0; i < js->cfg->slots; i++) {
		struct job *j = js->slots[i];
		if (!j || !j->start)
			continue;
		if (!now)
			now = mono_now();
		if (job_starting(j, now, &dl) && (!any || dl < next)) {
			next = dl;
			any = true;
		}
	}
	if (any && !ev_is_active(&js->start_w)) {
		ev_timer_set(&js->start_w, next - now > 0.001 ? next - now : 0.001, 0.);
		ev_timer_start(js->loop, &js->start_w);
	}
}

static void on_start_deadline(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	check_starts(t->data);
}

void jobs_start(struct jobs *js, struct claimed *c, bool gated)
{
	struct outcome_out fail;
	struct job *j;
	int slot;

	check_starts(js);

	for (slot = 0; slot < js->cfg->slots && js->slots[slot]; slot++)
		;
	j = job_start(js->loop, c, &js->params, on_job_end, js, &fail);
	if (!j) {
		never_started(js, c->id, c->queue, c->seq, c->token, c->downstream, &fail);
		store_claimed_clear(c);
		return;
	}
	js->slots[slot] = j;
	j->gated = gated;
	/* The first job after an idle spell: its claim just set the lease, so
	 * the first renewal is due an interval from now, not at once. */
	if (js->n_running == 0 && js->lease->next_beat < mono_now())
		js->lease->next_beat = mono_now() + js->lease->interval;
	js->n_running++;
	js->n_started++;
	board_count(js->bw, j->queue, BJ_STARTED);
	/* Due to claimed by the database's clock, claimed to started by ours. */
	if (c->waited_us >= 0)
		board_observe(js->bw, BH_START,
			      (double)c->waited_us / 1e6 + (mono_now() - c->got_at));
	/* Its lease runs from its claim, which may be older than the renewal
	 * the armed fencing deadline was computed from. */
	lease_check(js->lease);
}

/* ---- reaping ------------------------------------------------------------- */

static struct job *job_of_pid(const struct jobs *js, pid_t pid)
{
	for (int i = 0; i < js->cfg->slots; i++)
		if (js->slots[i] && js->slots[i]->pid == pid)
			return js->slots[i];
	return NULL;
}

/* Every child of ours is reaped here, with wait4 for the attempt's cost
 * (libev's child watchers reap with waitpid and lose it; this loop has
 * none). Signals coalesce, so one SIGCHLD may stand for many exits: reap
 * until none is left. A child that is no job's process is an orphan a job
 * left behind, re-parented to us (a subreaper): its status means nothing.
 * A job's exit can raise SIGCHLD before jobs_start has put it in a slot,
 * but this runs from the loop, never inside jobs_start, so by then every
 * started job is in its slot. */
void jobs_reap(struct jobs *js)
{
	struct rusage ru;
	int status;
	pid_t pid;

	while ((pid = wait4(-1, &status, WNOHANG, &ru)) != 0) {
		struct job *j;
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			if (errno != ECHILD)
				log_err("wait4: %s", strerror(errno));
			return;
		}
		j = job_of_pid(js, pid);
		if (j)
			job_reaped(j, status, &ru);
	}
}

static void on_sigchld(EV_P_ ev_signal *s, int revents)
{
	(void)EV_A;
	(void)revents;
	jobs_reap(s->data);
}

/* ---- the orphan sweep ---------------------------------------------------- */

/* Keep children that are running jobs, members of a running job's process
 * group, or processes that started before every job whose end this sweep
 * follows: none of those jobs can be theirs (orphans.h says why nothing a
 * process can set about itself is asked; issue 25, item 10). */
static bool keep_child(void *arg, pid_t pid)
{
	struct jobs *js = arg;
	pid_t pgid;
	unsigned long long started;

	/* Most children are jobs: found without a system call. */
	if (job_of_pid(js, pid))
		return true;
	pgid = getpgid(pid);
	for (int i = 0; i < js->cfg->slots; i++) {
		const struct job *j = js->slots[i];
		if (j && j->pid == pgid)
			return true;
	}
	return orphans_start_ticks(pid, &started) == 0 && started < js->sweep_from;
}

/* Killing an orphan re-parents its own children here a moment later, so
 * sweeps repeat until one finds nothing, with the same sweep_from; the
 * next job's end sets it anew. */
static void kill_orphans(struct jobs *js)
{
	int n;

	js->sweep_wanted = false;
	js->swept_at = mono_now();
	n = orphans_kill(keep_child, js);
	if (n <= 0) {
		js->sweep_from = ULLONG_MAX;
		return;
	}
	log_info("killed %d process(es) left behind by finished jobs", n);
	if (!ev_is_active(&js->sweep_w)) {
		ev_timer_set(&js->sweep_w, 0.02, 0.);
		ev_timer_start(js->loop, &js->sweep_w);
	}
}

static void on_sweep(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	kill_orphans(t->data);
}

/* A sweep opens and reads /proc: once per loop turn with an ended job
 * was 3 % of a busy worker's CPU (strace: 0.12 per job with /bin/true
 * jobs). Not more often than every JOBS_SWEEP_GAP then: a leftover lives
 * that much longer at most, and what it may kill is the same (orphans.h:
 * all that started no earlier than the earliest job ended since the last
 * sweep). */
#define JOBS_SWEEP_GAP 0.05

void jobs_sweep(struct jobs *js)
{
	double wait;

	/* Before the loop sleeps: the starts whose child has executed since
	 * free their stacks, and the descriptors put off until then close
	 * (proc_close). */
	check_starts(js);

	if (!js->sweep_wanted)
		return;
	wait = js->swept_at + JOBS_SWEEP_GAP - mono_now();
	if (wait <= 0) {
		kill_orphans(js);
		return;
	}
	if (!ev_is_active(&js->sweep_w)) {
		ev_timer_set(&js->sweep_w, wait, 0.);
		ev_timer_start(js->loop, &js->sweep_w);
	}
}

/* ---- the drain ----------------------------------------------------------- */

static void interrupt_all(struct jobs *js)
{
	for (int i = 0; i < js->cfg->slots; i++)
		if (js->slots[i])
			job_terminate(js->slots[i], END_SHUTDOWN);
}

static void on_grace(EV_P_ ev_timer *t, int revents)
{
	struct jobs *js = t->data;
	(void)EV_A;
	(void)revents;
	if (js->n_running)
		log_notice("shutdown grace over: interrupting %d running job(s)", js->n_running);
	interrupt_all(js);
}

static void start_grace(struct jobs *js, bool now)
{
	js->drain_deadline =
		mono_now() + js->cfg->shutdown_grace + config_max_kill_grace(js->cfg) + 10;
	ev_timer_set(&js->grace_w, now ? 0. : js->cfg->shutdown_grace, 0.);
	ev_timer_start(js->loop, &js->grace_w);
}

void jobs_drain(struct jobs *js, enum drain_how how)
{
	if (!js->draining) {
		js->draining = true;
		js->finishing = how == DRAIN_FINISH;
		if (js->finishing)
			/* Only a drain that has lost its database gives up,
			 * after the longest a job may still take to end. */
			js->drain_deadline = mono_now() + js->cfg->time_limit +
					     config_max_kill_grace(js->cfg) + 10;
		else
			start_grace(js, how == DRAIN_NOW);
	} else if (how == DRAIN_NOW) {
		interrupt_all(js);
	} else if (how == DRAIN_GRACE && js->finishing) {
		/* A TERM during an operator's drain: the grace from now on. */
		js->finishing = false;
		start_grace(js, false);
	}
}

/* ---- set-up -------------------------------------------------------------- */

void jobs_configure(struct jobs *js)
{
	js->params = (struct job_params){
		.shell = js->cfg->shell,
		.direct_exec = js->cfg->direct_exec,
		.kyud_env = environ,
		.output_limit = (size_t)js->cfg->output_limit,
		.result_max = (size_t)js->cfg->result_max,
		.kill_grace = js->cfg->kill_grace,
		.domains = js->cfg->domains,
		.n_domains = js->cfg->n_domains,
		.self = &js->self,
		.ids = &js->idcache,
	};
	/* The sections the entries point to may be gone (a reload). */
	idcache_clear(&js->idcache);
}

void jobs_init(struct jobs *js, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct results *results, struct lease *lease, struct board_worker *bw,
	       void (*ended)(void *ctx, const struct job *j), void *ended_ctx)
{
	js->loop = loop;
	js->cfg = cfg;
	js->results = results;
	js->lease = lease;
	js->bw = bw;
	js->ended = ended;
	js->ended_ctx = ended_ctx;
	js->sweep_from = ULLONG_MAX;
	js->swept_at = -JOBS_SWEEP_GAP;
	js->slots = xcalloc((size_t)cfg->slots, sizeof(struct job *));
	jobs_configure(js);
	ev_init(&js->grace_w, on_grace);
	js->grace_w.data = js;
	ev_init(&js->sweep_w, on_sweep);
	js->sweep_w.data = js;
	ev_init(&js->start_w, on_start_deadline);
	js->start_w.data = js;
	ev_signal_init(&js->chld_w, on_sigchld, SIGCHLD);
	js->chld_w.data = js;
	/* Ahead of the timers due in the same iteration: a job that exited
	 * just as its time limit or fencing deadline came ends with its own
	 * status, not as killed by kyud. */
	ev_set_priority(&js->chld_w, EV_MAXPRI);
	ev_signal_start(loop, &js->chld_w);
}

/* Signal watchers install process-wide handlers that point at the loop:
 * stopped (handlers back to the default) before it is destroyed. */
void jobs_free(struct jobs *js)
{
	ev_signal_stop(js->loop, &js->chld_w);
	idcache_free(&js->idcache);
	free(js->slots);
	js->slots = NULL;
	domain_ids_free(&js->self);
}
