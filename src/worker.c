#include "worker.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ev.h>

#include "capture.h"
#include "config.h"
#include "db.h"
#include "jobspec.h"
#include "log.h"
#include "orphans.h"
#include "proto.h"
#include "jobproc.h"
#include "store.h"
#include "util.h"

extern char **environ;

/* Why kyud itself ends an attempt (END_NONE: the job ended on its own). */
enum end_reason { END_NONE, END_TIMEOUT, END_CANCEL, END_LOST, END_FENCE, END_SHUTDOWN };

struct worker;

struct job {
	struct worker *w;
	int slot;
	uint64_t seq, token;
	char *id, *queue;
	unsigned attempts, tempfails, max_attempts, time_limit;
	pid_t pid;
	bool pid_reported;
	int out_fd;
	ev_io out_w;
	ev_child child_w;
	ev_timer limit_w;
	struct capture cap;
	enum end_reason reason;
	bool term_sent, fenced;
	/* Monotonic time just before the statement that last set the lease:
	 * the server's lease runs at least `lease` seconds from here. */
	double renewed;
	double spawned_at;
};

/* A job claimed ahead of a free slot (prefetch). */
struct held {
	struct claimed c;
	uint64_t token;
	double claimed_at;
};

struct pend {
	struct finish f;
	char *error;
	struct strbuf out;
	char *id;
};

struct worker {
	struct kyu_config cfg;
	int index;
	struct ev_loop *loop;
	struct db db;
	bool db_up;
	bool outage; /* a loss was logged; its end is logged once too */
	ev_timer reconnect_w;
	double reconnect_delay;
	double connect_tried; /* monotonic time of the last connection attempt */
	ev_io ctl_w;
	ev_timer hb_w;
	ev_prepare prep_w;
	ev_signal term_w, hup_w;
	ev_timer grace_w;
	ev_timer fence_w; /* next self-fencing deadline while leases cannot be renewed */
	ev_timer flush_w; /* delayed flush of results, or its retry after a deadlock */
	ev_timer stats_w;
	ev_timer sweep_w; /* repeats the orphan sweep while it finds some */
	double flush_after;
	double pend_since; /* when the oldest unrecorded result arrived */
	struct job **slots;
	int n_running;
	/* Claimed jobs waiting for a slot, oldest first (a ring). */
	struct held *held;
	int held_head, n_held, cap_held;
	ev_timer hold_w;   /* gives back held jobs a busy worker cannot start */
	double avg_run;    /* moving average of recent attempts' run time, s */
	uint64_t n_given_back;
	bool wanted, more, more_sent;
	bool draining, master_gone;
	double drain_deadline;
	struct pend *pend;
	int n_pend, cap_pend;
	uint64_t claims;
	uint64_t n_started, n_rejected, n_finished;
	uint64_t stats_started, stats_deadlocks; /* at the last stats line */
	char host[256];
	char exit_msg[64];
};

static void send_msg(struct worker *w, uint32_t type, int64_t value)
{
	struct msg m = { .type = type, .value = value };
	if (w->master_gone)
		return;
	/* A full socket means the supervisor is far behind; a lost hint is
	 * covered by its poll timer. */
	(void)send(PROTO_FD, &m, sizeof(m), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static uint64_t new_token(void)
{
	uint64_t t = 0;
	while (t == 0) {
		if (getrandom(&t, sizeof(t), 0) != sizeof(t))
			t = ((uint64_t)getpid() << 32) ^ (uint64_t)(mono_now() * 1e9);
	}
	/* Kept below 2^63 so the token also fits signed 64-bit client code. */
	return t & INT64_MAX ? t & INT64_MAX : 1;
}

/* ---- database connection state ------------------------------------- */

static void fence(struct worker *w);

static void db_lost(struct worker *w)
{
	if (w->db_up) {
		log_warn("database connection lost: %s", w->db.err);
		w->outage = true;
	}
	if (w->n_running)
		fence(w);
	w->db_up = false;
	db_close(&w->db);
	if (!ev_is_active(&w->reconnect_w)) {
		ev_timer_set(&w->reconnect_w, w->reconnect_delay, 0.);
		ev_timer_start(w->loop, &w->reconnect_w);
	}
}

/* Handle the result of a store call: returns true when it succeeded. */
static bool db_ok(struct worker *w, enum db_fail f, const char *what)
{
	switch (f) {
	case DB_OK:
		return true;
	case DB_LOST:
		db_lost(w);
		return false;
	case DB_RETRY:
		log_notice("%s: gave up after repeated deadlocks: %s", what, w->db.err);
		return false;
	case DB_ERROR:
		log_err("%s failed: %s", what, w->db.err);
		return false;
	}
	return false;
}

static void cleanup_finished(struct worker *w)
{
	enum db_fail f;
	int64_t n = store_cleanup(&w->db, &w->cfg, &f);
	if (n > 0)
		log_info("retention: deleted %" PRId64 " finished jobs older than %d s", n, w->cfg.retention);
	else if (n < 0)
		db_ok(w, f, "retention delete");
}

static bool try_connect(struct worker *w)
{
	w->connect_tried = mono_now();
	if (db_connect(&w->db, &w->cfg) < 0) {
		if (!w->outage)
			log_warn("cannot connect to the database: %s", w->db.err);
		w->outage = true;
		w->db_up = false;
		return false;
	}
	if (w->outage)
		log_notice("database connection restored");
	w->outage = false;
	w->db_up = true;
	w->reconnect_delay = 0.5;
	return true;
}

static void heartbeat(struct worker *w);

static void on_reconnect(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	(void)revents;
	if (try_connect(w)) {
		w->wanted = true;
		if (w->n_running)
			heartbeat(w);
		return;
	}
	w->reconnect_delay = w->reconnect_delay * 2 > 10 ? 10 : w->reconnect_delay * 2;
	ev_timer_set(t, w->reconnect_delay, 0.);
	ev_timer_start(EV_A_ t);
}

/* ---- results -------------------------------------------------------- */

static struct pend *pend_add(struct worker *w, const struct job *j, enum outcome o)
{
	struct pend *p;
	if (w->n_pend == w->cap_pend) {
		w->cap_pend = w->cap_pend ? w->cap_pend * 2 : 16;
		w->pend = xrealloc(w->pend, (size_t)w->cap_pend * sizeof(*w->pend));
	}
	if (w->n_pend == 0)
		w->pend_since = mono_now();
	p = &w->pend[w->n_pend++];
	memset(p, 0, sizeof(*p));
	p->f.seq = j->seq;
	p->f.token = j->token;
	p->f.outcome = o;
	p->f.exit_code = -1;
	p->id = xstrdup(j->id);
	return p;
}

static void pend_clear(struct worker *w)
{
	for (int i = 0; i < w->n_pend; i++) {
		free(w->pend[i].error);
		free(w->pend[i].id);
		sb_free(&w->pend[i].out);
	}
	w->n_pend = 0;
}

static void pend_recorded(struct worker *w, int rejected)
{
	if (rejected) {
		w->n_rejected += (uint64_t)rejected;
		log_warn("%d result(s) rejected: the job's lease had passed to another claim "
			 "(late write; %" PRIu64 " so far)",
			 rejected, w->n_rejected);
	}
	w->n_finished += (uint64_t)w->n_pend;
	pend_clear(w);
}

/* The pending results as store.c takes them (pointing into w->pend). */
static struct finish *pend_finishes(struct worker *w)
{
	struct finish *fs = xcalloc((size_t)w->n_pend, sizeof(*fs));
	for (int i = 0; i < w->n_pend; i++) {
		fs[i] = w->pend[i].f;
		fs[i].error = w->pend[i].error;
		fs[i].output = w->pend[i].out.buf;
		fs[i].output_len = w->pend[i].out.len;
	}
	return fs;
}

/* Results wait up to FLUSH_DELAY for the rest of their batch, so that a
 * batch of short jobs costs one UPDATE rather than one per job. */
#define FLUSH_DELAY 0.01

static void flush_pending(struct worker *w)
{
	struct finish *fs;
	enum db_fail f;
	int rejected = 0;
	double now = mono_now();

	if (w->n_pend == 0 || !w->db_up || now < w->flush_after)
		return;
	if (w->n_running > 0 && !w->draining && now < w->pend_since + FLUSH_DELAY) {
		if (!ev_is_active(&w->flush_w)) {
			ev_timer_set(&w->flush_w, w->pend_since + FLUSH_DELAY - now, 0.);
			ev_timer_start(w->loop, &w->flush_w);
		}
		return;
	}
	fs = pend_finishes(w);
	if (store_finish(&w->db, &w->cfg, fs, w->n_pend, &rejected, &f) >= 0) {
		pend_recorded(w, rejected);
	} else if (f == DB_RETRY) {
		/* Deadlocked even after the immediate retries: keep the results
		 * and try again shortly; they are only lost if the lease runs
		 * out first, and then the job simply runs again. */
		log_debug("recording results: %s; retrying", w->db.err);
		w->flush_after = mono_now() + 0.05;
		if (!ev_is_active(&w->flush_w)) {
			ev_timer_set(&w->flush_w, 0.05, 0.);
			ev_timer_start(w->loop, &w->flush_w);
		}
	} else if (!db_ok(w, f, "recording results") && f != DB_LOST) {
		/* A statement error will not heal by retrying. The rows stay
		 * 'running' under a lease nobody renews, so the jobs run again
		 * once it expires: at-least-once still holds. */
		log_err("dropping %d result(s) that could not be recorded; those jobs run again "
			"after their lease",
			w->n_pend);
		pend_clear(w);
	}
	free(fs);
}

static const char *sig_name(int sig)
{
	const char *s = sigabbrev_np(sig);
	return s ? s : "?";
}

static void job_free(struct worker *w, struct job *j)
{
	if (j->out_fd >= 0) {
		ev_io_stop(w->loop, &j->out_w);
		close(j->out_fd);
	}
	ev_timer_stop(w->loop, &j->limit_w);
	ev_child_stop(w->loop, &j->child_w);
	capture_free(&j->cap);
	w->slots[j->slot] = NULL;
	w->n_running--;
	free(j->id);
	free(j->queue);
	free(j);
}

/* Keep children that are running jobs, members of a running job's process
 * group, or processes that left its group (setsid) but carry the job id
 * and attempt of an attempt that is still running: they are re-parented
 * here while their attempt lives and must outlive only the attempt. */
static bool keep_child(void *arg, pid_t pid)
{
	struct worker *w = arg;
	pid_t pgid = getpgid(pid);
	char id[512];
	unsigned long attempt;

	for (int i = 0; i < w->cfg.slots; i++) {
		const struct job *j = w->slots[i];
		if (j && (j->pid == pid || j->pid == pgid))
			return true;
	}
	if (orphans_attempt_of(pid, id, sizeof(id), &attempt) < 0)
		return false;
	for (int i = 0; i < w->cfg.slots; i++) {
		const struct job *j = w->slots[i];
		if (j && strcmp(j->id, id) == 0 && attempt == j->attempts)
			return true;
	}
	return false;
}

/* Killing an orphan re-parents its own children here a moment later, so
 * sweeps repeat until one finds nothing. */
static void kill_orphans(struct worker *w)
{
	int n = orphans_kill(keep_child, w);
	if (n <= 0)
		return;
	log_info("killed %d process(es) left behind by finished jobs", n);
	if (!ev_is_active(&w->sweep_w)) {
		ev_timer_set(&w->sweep_w, 0.02, 0.);
		ev_timer_start(w->loop, &w->sweep_w);
	}
}

static void on_sweep(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	kill_orphans(t->data);
}

/* Attempts that ended in EX_TEMPFAIL do not count against max_attempts. */
static bool retryable(const struct job *j)
{
	return j->attempts - j->tempfails < j->max_attempts;
}

/* Decide how the attempt ended and queue the row update. */
static void job_finished(struct worker *w, struct job *j, int wstatus)
{
	struct pend *p;
	char err[256] = "";
	enum outcome o;
	int code = -1, sig = 0;
	bool tempfail = false;

	if (WIFEXITED(wstatus))
		code = WEXITSTATUS(wstatus);
	else if (WIFSIGNALED(wstatus))
		sig = WTERMSIG(wstatus);

	switch (j->reason) {
	case END_LOST:
		/* Another claim owns the row now; writing would be a late write. */
		log_warn("job %s: attempt %u abandoned: its lease was lost", j->id, j->attempts);
		job_free(w, j);
		return;
	case END_SHUTDOWN:
		o = OUT_RELEASE;
		snprintf(err, sizeof(err), "interrupted: kyud stopped during attempt %u", j->attempts);
		break;
	case END_CANCEL:
		o = OUT_CANCELLED;
		snprintf(err, sizeof(err), "cancelled while running; process group terminated");
		break;
	case END_TIMEOUT:
		o = retryable(j) ? OUT_RETRY : OUT_FAILED;
		snprintf(err, sizeof(err), "timed out after %u s", j->time_limit);
		break;
	case END_FENCE:
		o = retryable(j) ? OUT_RETRY : OUT_FAILED;
		snprintf(err, sizeof(err),
			 "killed by kyud: its lease could not be renewed (database unreachable)");
		break;
	case END_NONE:
	default:
		if (code == 0) {
			o = OUT_SUCCEEDED;
		} else if (code > 0 && config_is_permanent_code(&w->cfg, code)) {
			/* Checked first: an operator who lists 75 means it. */
			o = OUT_FAILED;
			snprintf(err, sizeof(err), "exit code %d (permanent: not retried)", code);
		} else if (code == 75) {
			o = OUT_RETRY;
			tempfail = true;
			snprintf(err, sizeof(err), "temporary failure (exit 75): retrying later");
		} else {
			o = retryable(j) ? OUT_RETRY : OUT_FAILED;
			if (code == 127)
				snprintf(err, sizeof(err), "command not found (exit 127)");
			else if (code == 126)
				snprintf(err, sizeof(err), "command not executable (exit 126)");
			else if (code > 0)
				snprintf(err, sizeof(err), "exit code %d", code);
			else
				snprintf(err, sizeof(err), "killed by signal %d (SIG%s)", sig, sig_name(sig));
		}
		break;
	}
	if (o != OUT_SUCCEEDED && o != OUT_RELEASE && o != OUT_CANCELLED && o == OUT_FAILED &&
	    j->attempts > 1)
		snprintf(err + strlen(err), sizeof(err) - strlen(err), " (attempt %u of %u)",
			 j->attempts - j->tempfails, j->max_attempts);

	p = pend_add(w, j, o);
	p->f.pid = (int)j->pid;
	p->f.exit_code = code;
	p->f.signal = sig;
	p->f.tempfail = tempfail;
	p->error = err[0] ? xstrdup(err) : NULL;
	if (j->cap.total)
		capture_render(&j->cap, &p->out);

	if (o == OUT_SUCCEEDED)
		log_debug("job %s succeeded", j->id);
	else
		log_info("job %s %s: %s", j->id,
			 o == OUT_RETRY	      ? "will retry"
			 : o == OUT_FAILED    ? "failed"
			 : o == OUT_RELEASE   ? "put back"
					      : "cancelled",
			 err);
	job_free(w, j);
}

static void read_output(struct worker *w, struct job *j, int budget)
{
	char buf[65536];
	(void)w;
	while (budget-- > 0) {
		ssize_t n = read(j->out_fd, buf, sizeof(buf));
		if (n > 0) {
			capture_add(&j->cap, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (n < 0 && errno != EAGAIN)) {
			ev_io_stop(w->loop, &j->out_w);
			close(j->out_fd);
			j->out_fd = -1;
		}
		return;
	}
}

static void on_output(EV_P_ ev_io *io, int revents)
{
	struct job *j = io->data;
	(void)EV_A;
	(void)revents;
	/* A bounded number of reads per wake-up keeps one chatty job from
	 * starving the others; the kernel pipe buffer keeps the rest. */
	read_output(j->w, j, 16);
}

static void on_child(EV_P_ ev_child *c, int revents)
{
	struct job *j = c->data;
	struct worker *w = j->w;
	(void)EV_A;
	(void)revents;
	ev_child_stop(w->loop, c);
	if (j->reason == END_NONE) {
		double run = mono_now() - j->spawned_at;
		w->avg_run = w->avg_run > 0 ? w->avg_run + (run - w->avg_run) / 8 : run;
	}
	/* The attempt is over: nothing it started may outlive it. */
	spawn_kill_group(j->pid, SIGKILL);
	if (j->out_fd >= 0)
		read_output(w, j, 1 << 20);
	job_finished(w, j, c->rstatus);
	kill_orphans(w);
}

static void terminate(struct worker *w, struct job *j, enum end_reason why)
{
	if (j->reason == END_NONE || why == END_LOST)
		j->reason = why;
	if (j->term_sent)
		return;
	j->term_sent = true;
	spawn_kill_group(j->pid, SIGTERM);
	ev_timer_stop(w->loop, &j->limit_w);
	ev_timer_set(&j->limit_w, w->cfg.kill_grace > 0 ? w->cfg.kill_grace : 0.001, 0.);
	ev_timer_start(w->loop, &j->limit_w);
}

static void on_limit(EV_P_ ev_timer *t, int revents)
{
	struct job *j = t->data;
	(void)EV_A;
	(void)revents;
	if (!j->term_sent) {
		log_info("job %s: time limit of %u s reached; terminating", j->id, j->time_limit);
		terminate(j->w, j, END_TIMEOUT);
	} else {
		spawn_kill_group(j->pid, SIGKILL);
	}
}

/* ---- starting jobs -------------------------------------------------- */

static void fail_unstarted(struct worker *w, const struct claimed *c, uint64_t token, const char *why,
			   enum outcome o)
{
	struct job tmp = { .seq = c->seq, .token = token, .id = c->id };
	struct pend *p = pend_add(w, &tmp, o);
	p->error = xstrdup(why);
	log_info("job %s failed: %s", c->id, why);
}

static void start_job(struct worker *w, struct claimed *c, uint64_t token, double claimed_at)
{
	struct jobspec_input in = {
		.shell = w->cfg.shell,
		.command = c->command,
		.argv_json = c->argv_json,
		.env_json = c->env_json,
		.base_env = environ,
		.job_id = c->id,
		.queue = c->queue,
		.attempt = c->attempts,
	};
	struct jobspec spec;
	struct job *j;
	char err[512];
	int slot;

	if (c->attempts - c->tempfails > c->max_attempts) {
		snprintf(err, sizeof(err),
			 "lease expired during the last attempt (%u of %u): its worker or host was lost",
			 c->attempts - c->tempfails - 1, c->max_attempts);
		fail_unstarted(w, c, token, err, OUT_FAILED);
		return;
	}
	if (jobspec_build(&in, &spec, err, sizeof(err)) < 0) {
		fail_unstarted(w, c, token, err, OUT_FAILED);
		return;
	}
	for (slot = 0; slot < w->cfg.slots && w->slots[slot]; slot++)
		;
	j = xcalloc(1, sizeof(*j));
	j->w = w;
	j->slot = slot;
	j->seq = c->seq;
	j->token = token;
	j->id = c->id;
	j->queue = c->queue;
	c->id = c->queue = NULL;
	j->attempts = c->attempts;
	j->tempfails = c->tempfails;
	j->max_attempts = c->max_attempts;
	j->time_limit = c->time_limit;
	j->out_fd = -1;
	j->renewed = claimed_at;
	capture_init(&j->cap, (size_t)w->cfg.output_limit);

	if (spawn_job(&spec, c->cwd, &j->pid, &j->out_fd, err, sizeof(err)) < 0) {
		struct claimed tmp = *c;
		jobspec_free(&spec);
		tmp.id = j->id;
		fail_unstarted(w, &tmp, token, err, OUT_FAILED);
		free(j->id);
		free(j->queue);
		capture_free(&j->cap);
		free(j);
		return;
	}
	jobspec_free(&spec);
	j->spawned_at = mono_now();
	w->slots[slot] = j;
	w->n_running++;
	w->n_started++;

	ev_child_init(&j->child_w, on_child, j->pid, 0);
	j->child_w.data = j;
	ev_child_start(w->loop, &j->child_w);
	ev_io_init(&j->out_w, on_output, j->out_fd, EV_READ);
	j->out_w.data = j;
	ev_io_start(w->loop, &j->out_w);
	ev_init(&j->limit_w, on_limit);
	j->limit_w.data = j;
	if (j->time_limit) {
		ev_timer_set(&j->limit_w, j->time_limit, 0.);
		ev_timer_start(w->loop, &j->limit_w);
	}
	log_debug("job %s attempt %u started (pid %d)", j->id, j->attempts, (int)j->pid);
}

/* ---- prefetch ---------------------------------------------------------
 * Claiming ahead of free slots turns a worker of short jobs from claims of
 * a few rows into claims of dozens (tests/bench: batch size is what the
 * database cost per job depends on). A held job is a claimed row whose
 * command has not started: it only pays when it starts soon, so a worker
 * holds about HOLD_HORIZON seconds of work at the rate its slots have been
 * finishing jobs, never more than `prefetch` jobs, and nothing until it
 * has seen a job end. Jobs still held after hold_limit() (every slot
 * stayed busy) are given back, due at once, attempt not counted. */
#define HOLD_HORIZON 0.05
#define HOLD_LIMIT 1.0

static int prefetch_target(const struct worker *w)
{
	double t;

	if (w->cfg.prefetch == 0 || w->avg_run <= 0)
		return 0;
	t = w->cfg.slots * HOLD_HORIZON / w->avg_run;
	return t >= w->cfg.prefetch ? w->cfg.prefetch : (int)t;
}

/* Well inside the self-fencing deadline, which a held job's lease is
 * subject to from its claim on. */
static double hold_limit(const struct worker *w)
{
	double l = (w->cfg.lease - w->cfg.fence_margin) / 2.0;
	return l < HOLD_LIMIT ? l : HOLD_LIMIT;
}

static void give_back(struct worker *w, struct held *h)
{
	struct job tmp = { .seq = h->c.seq, .token = h->token, .id = h->c.id };
	/* Evidence that slots free up slower than the average said: claim no
	 * further ahead until short jobs have pulled the average down again,
	 * rather than claiming and giving back every hold_limit. */
	if (w->avg_run < hold_limit(w))
		w->avg_run = hold_limit(w);
	pend_add(w, &tmp, OUT_RELEASE);
	store_claimed_clear(&h->c);
	w->n_given_back++;
}

static void hold(struct worker *w, struct claimed *c, uint64_t token, double claimed_at)
{
	struct held h = { .c = *c, .token = token, .claimed_at = claimed_at };

	memset(c, 0, sizeof(*c));
	if (w->n_held == w->cap_held) {
		/* Cannot happen (claims never ask for more than there is room
		 * for); giving the row back is always safe. */
		give_back(w, &h);
		return;
	}
	w->held[(w->held_head + w->n_held) % w->cap_held] = h;
	w->n_held++;
	if (!ev_is_active(&w->hold_w)) {
		ev_timer_set(&w->hold_w, hold_limit(w), 0.);
		ev_timer_start(w->loop, &w->hold_w);
	}
}

static void unhold(struct worker *w, struct held *out)
{
	*out = w->held[w->held_head];
	w->held_head = (w->held_head + 1) % w->cap_held;
	w->n_held--;
}

static void start_held(struct worker *w)
{
	struct held h;
	double now = mono_now();
	bool started = false;

	while (w->n_held > 0 && w->n_running < w->cfg.slots && !w->draining) {
		unhold(w, &h);
		if (now >= h.claimed_at + hold_limit(w)) {
			give_back(w, &h);
		} else {
			start_job(w, &h.c, h.token, h.claimed_at);
			started = true;
		}
		store_claimed_clear(&h.c);
	}
	/* Their leases run from their claim, which may be older than the
	 * renewals the pending self-fencing deadline was computed from. */
	if (started && !w->db_up)
		fence(w);
}

static void give_back_all(struct worker *w, const char *why)
{
	struct held h;
	int n = w->n_held;

	while (w->n_held > 0) {
		unhold(w, &h);
		give_back(w, &h);
	}
	if (n)
		log_info("gave back %d claimed job(s) that had not started: %s", n, why);
}

static void on_hold(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	double now = mono_now(), limit = hold_limit(w);
	struct held h;
	int n = 0;

	(void)revents;
	while (w->n_held > 0 && now >= w->held[w->held_head].claimed_at + limit) {
		unhold(w, &h);
		give_back(w, &h);
		n++;
	}
	if (n)
		log_info("gave back %d claimed job(s) not started within %.1f s: every slot stayed busy",
			 n, limit);
	if (w->n_held > 0) {
		ev_timer_set(t, w->held[w->held_head].claimed_at + limit - now, 0.);
		ev_timer_start(EV_A_ t);
	}
}

static void do_claim(struct worker *w, int n)
{
	struct claimed *rows = NULL;
	uint64_t token = new_token();
	double claimed_at = mono_now();
	int64_t due_us = INT64_MIN;
	enum db_fail f;
	struct finish *fs = NULL;
	struct claim_finish fin = { 0 };
	int got;

	/* Plain successes waiting to be recorded ride along in the claim's
	 * round trip (results with output or errors keep their own). */
	if (w->n_pend > 0 && mono_now() >= w->flush_after) {
		fs = pend_finishes(w);
		for (fin.n = 0; fin.n < w->n_pend && store_finish_plain(&fs[fin.n]); fin.n++)
			;
		if (fin.n < w->n_pend)
			fin.n = 0;
		fin.f = fs;
	}
	got = store_claim(&w->db, &w->cfg, token, w->host, n, fin.n ? &fin : NULL, &rows, &due_us, &f);
	free(fs);
	if (fin.done)
		pend_recorded(w, fin.rejected);
	w->wanted = false;
	if (got < 0) {
		db_ok(w, f, "acquiring jobs");
		send_msg(w, KYU_IDLE, INT64_MAX);
		return;
	}
	w->claims++;
	for (int i = 0; i < got; i++) {
		if (w->n_held == 0 && w->n_running < w->cfg.slots)
			start_job(w, &rows[i], token, claimed_at);
		else
			hold(w, &rows[i], token, claimed_at);
	}
	store_claimed_free(rows, got);
	if (got > 0)
		log_debug("acquired %d job(s) (asked for %d)", got, n);
	if (got && !ev_is_active(&w->hb_w)) {
		ev_timer_set(&w->hb_w, config_heartbeat(&w->cfg), config_heartbeat(&w->cfg));
		ev_timer_start(w->loop, &w->hb_w);
	}

	if (w->claims % (uint64_t)w->cfg.cleanup_every == 0)
		cleanup_finished(w);

	if (got == n) {
		w->more = true;
		if (!w->more_sent) {
			send_msg(w, KYU_MORE, 0);
			w->more_sent = true;
		}
	} else {
		w->more = false;
		w->more_sent = false;
		send_msg(w, KYU_IDLE, due_us == INT64_MIN ? INT64_MAX : due_us);
	}
}

static void maybe_claim(struct worker *w)
{
	int room = w->cfg.slots + prefetch_target(w);
	int want = room - w->n_running - w->n_held;

	if (w->draining || !w->db_up || want <= 0)
		return;
	if (w->wanted) {
		do_claim(w, want);
		return;
	}
	/* Under load, wait until a useful batch is wanted: one claim of k rows
	 * costs about as much as one claim of 1. */
	if (w->more && (want >= (room + 1) / 2 || (w->n_running == 0 && w->n_held == 0)))
		do_claim(w, want);
}

/* ---- heartbeat, cancel and lease checks ---------------------------- */

static struct job *find_job(struct worker *w, uint64_t seq)
{
	for (int i = 0; i < w->cfg.slots; i++)
		if (w->slots[i] && w->slots[i]->seq == seq)
			return w->slots[i];
	return NULL;
}

struct inspect_ctx {
	struct worker *w;
	bool *seen;
};

static void on_inspect(void *arg, uint64_t seq, uint64_t owner, const char *status)
{
	struct inspect_ctx *ctx = arg;
	struct job *j = find_job(ctx->w, seq);
	if (!j)
		return;
	ctx->seen[j->slot] = true;
	if (owner != j->token) {
		log_warn("job %s: lease lost to another claim; killing attempt %u", j->id, j->attempts);
		ctx->w->n_rejected++;
		terminate(ctx->w, j, END_LOST);
		spawn_kill_group(j->pid, SIGKILL);
	} else if (strcmp(status, "cancelled") == 0) {
		log_info("job %s: cancelled; terminating its process group", j->id);
		terminate(ctx->w, j, END_CANCEL);
	}
}

/* While leases cannot be renewed: kill every job whose lease is within
 * fence_margin of running out (another claim may take the row over when
 * it does), and wake up again at the next such deadline. */
static void fence(struct worker *w)
{
	double now = mono_now(), limit = w->cfg.lease - w->cfg.fence_margin, next = 0;

	ev_timer_stop(w->loop, &w->fence_w);
	if (w->cfg.fence_margin == 0)
		return;
	for (int i = 0; i < w->cfg.slots; i++) {
		struct job *j = w->slots[i];
		if (!j || j->fenced || j->reason == END_LOST)
			continue;
		if (now < j->renewed + limit) {
			if (next == 0 || j->renewed + limit < next)
				next = j->renewed + limit;
			continue;
		}
		log_warn("job %s: lease not renewed for %.1f s (lease %d s, fence_margin %d s); "
			 "killing it before another worker may take it over",
			 j->id, now - j->renewed, w->cfg.lease, w->cfg.fence_margin);
		/* No grace: the deadline is already the safety margin. */
		j->fenced = true;
		if (j->reason == END_NONE)
			j->reason = END_FENCE;
		j->term_sent = true;
		spawn_kill_group(j->pid, SIGKILL);
	}
	if (next > 0) {
		ev_timer_set(&w->fence_w, next - now, 0.);
		ev_timer_start(w->loop, &w->fence_w);
	}
}

static void on_fence(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	fence(t->data);
}

static void heartbeat(struct worker *w)
{
	uint64_t seqs[1024], tokens[1024];
	int pids[1024];
	int n = 0;
	enum db_fail f;
	int64_t got;

	for (int i = 0; i < w->cfg.slots && n < 1024; i++) {
		struct job *j = w->slots[i];
		if (j && j->reason != END_LOST) {
			seqs[n] = j->seq;
			pids[n] = j->pid_reported ? 0 : (int)j->pid;
			tokens[n++] = j->token;
		}
	}
	if (n == 0)
		return;
	if (!w->db_up) {
		fence(w);
		return;
	}
	double sent_at = mono_now();
	got = store_heartbeat(&w->db, &w->cfg, seqs, tokens, pids, n, &f);
	if (got < 0) {
		db_ok(w, f, "extending leases");
		fence(w);
		return;
	}
	ev_timer_stop(w->loop, &w->fence_w);
	for (int i = 0; i < w->cfg.slots; i++) {
		if (w->slots[i]) {
			w->slots[i]->renewed = sent_at;
			w->slots[i]->pid_reported = true;
		}
	}
	if (got < n) {
		bool seen[1024] = { false };
		struct inspect_ctx ctx = { w, seen };
		if (store_inspect(&w->db, seqs, n, on_inspect, &ctx, &f) < 0) {
			db_ok(w, f, "checking leases");
			return;
		}
		for (int i = 0; i < w->cfg.slots; i++) {
			struct job *j = w->slots[i];
			if (j && !seen[i] && j->reason != END_LOST) {
				log_warn("job %s: its row is gone; killing attempt %u", j->id, j->attempts);
				terminate(w, j, END_LOST);
				spawn_kill_group(j->pid, SIGKILL);
			}
		}
	}
}

static void on_heartbeat(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	(void)revents;
	if (w->n_running == 0) {
		ev_timer_stop(EV_A_ t);
		return;
	}
	heartbeat(w);
}

static void on_flush(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	flush_pending(t->data);
}

/* Progress for the operator: one line per STATS_EVERY seconds, only when
 * something happened. */
#define STATS_EVERY 300.

static void on_stats(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	(void)EV_A;
	(void)revents;
	if (w->n_started == w->stats_started && w->db.deadlocks == w->stats_deadlocks)
		return;
	log_info("last %.0f s: %" PRIu64 " job(s) started, %d running; %" PRIu64
		 " deadlock(s) retried; totals: %" PRIu64 " started, %" PRIu64 " late write(s) rejected",
		 STATS_EVERY, w->n_started - w->stats_started, w->n_running,
		 w->db.deadlocks - w->stats_deadlocks, w->n_started, w->n_rejected);
	w->stats_started = w->n_started;
	w->stats_deadlocks = w->db.deadlocks;
}

/* ---- stopping ------------------------------------------------------- */

static void interrupt_all(struct worker *w)
{
	for (int i = 0; i < w->cfg.slots; i++)
		if (w->slots[i])
			terminate(w, w->slots[i], END_SHUTDOWN);
}

static void on_grace(EV_P_ ev_timer *t, int revents)
{
	struct worker *w = t->data;
	(void)EV_A;
	(void)revents;
	if (w->n_running)
		log_notice("shutdown grace over: interrupting %d running job(s)", w->n_running);
	interrupt_all(w);
}

static void begin_drain(struct worker *w, bool now)
{
	give_back_all(w, "kyud is stopping");
	if (!w->draining) {
		w->draining = true;
		w->drain_deadline = mono_now() + w->cfg.shutdown_grace + w->cfg.kill_grace + 10;
		ev_timer_set(&w->grace_w, now ? 0. : w->cfg.shutdown_grace, 0.);
		ev_timer_start(w->loop, &w->grace_w);
	} else if (now) {
		interrupt_all(w);
	}
}

static void on_ctl(EV_P_ ev_io *io, int revents)
{
	struct worker *w = io->data;
	struct msg m;
	(void)revents;

	for (;;) {
		ssize_t n = recv(PROTO_FD, &m, sizeof(m), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			/* The supervisor is gone: finish what we hold, then exit. */
			log_warn("supervisor went away; draining");
			w->master_gone = true;
			ev_io_stop(EV_A_ io);
			begin_drain(w, false);
			return;
		}
		if ((size_t)n != sizeof(m))
			continue;
		switch (m.type) {
		case KYU_WAKE:
			w->wanted = true;
			/* Someone has work: try the database now rather than at the
			 * end of a backoff of up to 10 s (at most twice a second). */
			if (!w->db_up && mono_now() - w->connect_tried >= 0.5) {
				ev_timer_stop(EV_A_ & w->reconnect_w);
				on_reconnect(EV_A_ & w->reconnect_w, 0);
			}
			/* Still unreachable: answer, so that the supervisor's next
			 * hint is not held back waiting for this claim. */
			if (!w->db_up)
				send_msg(w, KYU_IDLE, INT64_MAX);
			break;
		case KYU_STOP:
			begin_drain(w, false);
			break;
		case KYU_STOP_NOW:
			begin_drain(w, true);
			break;
		case KYU_RELOAD: {
			struct kyu_config nc;
			char err[512];
			if (config_load(w->cfg.path, &nc, err, sizeof(err)) < 0) {
				log_err("reload failed, keeping old config: %s", err);
				break;
			}
			/* Slots are sized at start-up; a new slot count applies when
			 * the supervisor restarts the worker. */
			nc.slots = w->cfg.slots;
			nc.prefetch = w->cfg.prefetch;
			config_free(&w->cfg);
			w->cfg = nc;
			log_set_level((enum log_level)w->cfg.log_level);
			db_close(&w->db);
			w->db_up = false;
			try_connect(w);
			if (!w->db_up)
				db_lost(w);
			break;
		}
		}
	}
}

static void on_term(EV_P_ ev_signal *s, int revents)
{
	(void)EV_A;
	(void)revents;
	begin_drain(s->data, false);
}

static void on_prepare(EV_P_ ev_prepare *p, int revents)
{
	struct worker *w = p->data;
	(void)revents;

	start_held(w);
	flush_pending(w);
	maybe_claim(w);
	/* Jobs refused at start (bad JSON...) are results too. */
	flush_pending(w);
	if (w->draining && w->n_running == 0 &&
	    (w->n_pend == 0 || (!w->db_up && mono_now() > w->drain_deadline))) {
		if (w->n_pend)
			log_err("exiting with %d unrecorded result(s): the database is unreachable; "
				"those jobs run again after their lease",
				w->n_pend);
		ev_break(EV_A_ EVBREAK_ALL);
	}
}

int worker_main(int index, const char *config_path)
{
	struct worker w = { .index = index, .reconnect_delay = 0 };
	char role[32], err[512];
	int rc = 0;

	snprintf(role, sizeof(role), "worker %d", index);
	log_set_role(role);
	if (config_load(config_path, &w.cfg, err, sizeof(err)) < 0) {
		log_err("%s", err);
		return 78;
	}
	log_set_level((enum log_level)w.cfg.log_level);
	if (gethostname(w.host, sizeof(w.host)) < 0)
		snprintf(w.host, sizeof(w.host), "unknown");
	/* Orphans of a job (double forks) are re-parented to us, not to init,
	 * so that they can be found and killed. */
	(void)prctl(PR_SET_CHILD_SUBREAPER, 1);
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor decides when to stop; a terminal's ^C reaches the
	 * whole process group, so only the supervisor acts on it. */
	signal(SIGINT, SIG_IGN);

	w.loop = EV_DEFAULT;
	w.slots = xcalloc((size_t)w.cfg.slots, sizeof(*w.slots));
	w.cap_held = w.cfg.slots + w.cfg.prefetch;
	w.held = xcalloc((size_t)w.cap_held, sizeof(*w.held));
	ev_init(&w.hold_w, on_hold);
	w.hold_w.data = &w;
	ev_init(&w.reconnect_w, on_reconnect);
	w.reconnect_w.data = &w;
	ev_init(&w.hb_w, on_heartbeat);
	w.hb_w.data = &w;
	ev_init(&w.grace_w, on_grace);
	w.grace_w.data = &w;
	ev_init(&w.fence_w, on_fence);
	w.fence_w.data = &w;
	ev_init(&w.sweep_w, on_sweep);
	w.sweep_w.data = &w;
	ev_init(&w.flush_w, on_flush);
	w.flush_w.data = &w;
	ev_timer_init(&w.stats_w, on_stats, STATS_EVERY, STATS_EVERY);
	w.stats_w.data = &w;
	ev_timer_start(w.loop, &w.stats_w);
	ev_io_init(&w.ctl_w, on_ctl, PROTO_FD, EV_READ);
	w.ctl_w.data = &w;
	ev_io_start(w.loop, &w.ctl_w);
	ev_prepare_init(&w.prep_w, on_prepare);
	w.prep_w.data = &w;
	ev_prepare_start(w.loop, &w.prep_w);
	ev_signal_init(&w.term_w, on_term, SIGTERM);
	w.term_w.data = &w;
	ev_signal_start(w.loop, &w.term_w);

	if (try_connect(&w))
		cleanup_finished(&w);
	else
		db_lost(&w);
	w.reconnect_delay = 0.5;
	send_msg(&w, KYU_READY, 0);

	ev_run(w.loop, 0);

	log_info("exiting: %" PRIu64 " job(s) started, %" PRIu64 " result(s) recorded, %" PRIu64
		 " given back unstarted, %" PRIu64 " deadlock(s) retried, %" PRIu64
		 " late write(s) rejected",
		 w.n_started, w.n_finished, w.n_given_back, w.db.deadlocks, w.n_rejected);
	pend_clear(&w);
	free(w.held);
	free(w.pend);
	free(w.slots);
	db_close(&w.db);
	config_free(&w.cfg);
	return rc;
}
