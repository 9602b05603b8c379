/* One running attempt: from a claimed row to the end of its process group.
 * See job.h. */
#include "job.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/orphans.h"
#include "common/util.h"
#include "jobspec.h"
#include "proc.h"

static void close_output(struct job *j)
{
	if (j->out_fd < 0)
		return;
	ev_io_stop(j->loop, &j->out_w);
	proc_close(j->out_fd);
	j->out_fd = -1;
}

static void read_output(struct job *j, int budget)
{
	char buf[65536];

	while (budget-- > 0) {
		ssize_t n = read(j->out_fd, buf, sizeof(buf));
		if (n > 0) {
			capture_line_add(&j->last_line, buf, (size_t)n, j->cap.total);
			capture_add(&j->cap, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN)
			close_output(j);
		return;
	}
}

static void close_status(struct job *j)
{
	if (j->status_fd < 0)
		return;
	ev_io_stop(j->loop, &j->status_w);
	proc_close(j->status_fd);
	j->status_fd = -1;
	status_end(&j->status);
}

/* Like the output, in chunks; status.c keeps at most a line of them. A
 * job that closes the descriptor at once costs one read. */
static void read_status(struct job *j, int budget)
{
	char buf[16384];

	while (budget-- > 0) {
		ssize_t n = read(j->status_fd, buf, sizeof(buf));
		if (n > 0) {
			status_add(&j->status, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || errno != EAGAIN)
			close_status(j);
		return;
	}
}

static void on_status(EV_P_ ev_io *io, int revents)
{
	(void)EV_A;
	(void)revents;
	/* Fewer bytes per wake-up than the output: a job that floods its
	 * status channel blocks on its own pipe while the loop serves the
	 * other jobs, the leases and the results. */
	read_status(io->data, 4);
}

static void on_output(EV_P_ ev_io *io, int revents)
{
	(void)EV_A;
	(void)revents;
	/* A bounded number of reads per wake-up keeps one chatty job from
	 * starving the others; the pipe buffer holds the rest. */
	read_output(io->data, 16);
}

/* The outcome of an attempt whose process could not be started (r, err:
 * proc_start's or proc_settle's). */
static void start_failed(const char *queue, unsigned tempfails, int r, const char *err,
			 struct outcome_out *out)
{
	char ruled[600];

	/* A rule of the queue's section could not be applied: say which
	 * queue's. */
	if (strncmp(err, "rule ", 5) == 0)
		snprintf(ruled, sizeof(ruled), "queue %s: %s", queue, err);
	else
		snprintf(ruled, sizeof(ruled), "%s", err);
	/* The machine's trouble is not the job's (issue 25, item 3). */
	if (proc_temporary(-r))
		outcome_unstarted_temporary(ruled, tempfails, out);
	else
		outcome_unstarted(ruled, out);
}

/* Settle j's start (proc_settle); false once it is settled. A failure
 * is kept for the end: the process exits by itself. */
static bool settle(struct job *j)
{
	char err[512];
	int exec_errno, r;

	if (!j->start)
		return false;
	r = proc_settle(&j->start, &exec_errno, err, sizeof(err));
	if (r >= 0)
		return r > 0;
	if (!j->start_fail)
		j->start_fail = xmalloc(sizeof(*j->start_fail));
	start_failed(j->queue, j->tempfails, r, err, j->start_fail);
	return false;
}

bool job_starting(struct job *j, double now, double *deadline)
{
	if (!settle(j))
		return false;
	*deadline = proc_start_deadline(j->start);
	if (now < *deadline)
		return true;
	log_warn("job %s: its process did not reach exec within %.0f s: killing it", j->id,
		 PROC_EXEC_TIMEOUT);
	proc_start_kill(j->start);
	/* Settled when it is reaped (or by a later call). */
	*deadline = now + 1;
	return true;
}

/* The pipes are watched once the job has run JOB_WATCH_DELAY: a job that
 * ends sooner is known from its SIGCHLD and its pipes are read then, so
 * most short jobs cost the event loop's epoll set nothing (an ADD per
 * pipe, and its removal at the close, two fifths of a busy worker's
 * system calls per job otherwise). A job that fills a pipe (64 KiB)
 * before then waits that long at most. */
static void on_watch(EV_P_ ev_timer *t, int revents)
{
	struct job *j = t->data;
	(void)revents;
	if (j->out_fd >= 0)
		ev_io_start(EV_A_ & j->out_w);
	if (j->status_fd >= 0)
		ev_io_start(EV_A_ & j->status_w);
}

void job_reaped(struct job *j, int wstatus, const struct rusage *ru)
{
	/* A reaped child is off our memory: settled now. */
	(void)settle(j);
	ev_timer_stop(j->loop, &j->limit_w);
	ev_timer_stop(j->loop, &j->watch_w);
	j->wstatus = wstatus;
	j->rusage = *ru;
	/* The attempt is over: nothing it started may outlive it. */
	proc_kill_group(j->pid, SIGKILL);
	/* What is still in the pipe, up to what the capture keeps anyway; a
	 * grandchild holding the pipe open cannot stall us (non-blocking). */
	if (j->out_fd >= 0)
		read_output(j, 1 << 20);
	close_output(j);
	/* What is left in its pipe (a pipe holds at most 1 MiB): its last
	 * lines count, even one without its '\n'. */
	if (j->status_fd >= 0)
		read_status(j, 64);
	close_status(j);
	j->end(j->ctx, j);
}

static void on_limit(EV_P_ ev_timer *t, int revents)
{
	struct job *j = t->data;
	(void)EV_A;
	(void)revents;
	if (!j->term_sent) {
		log_info("job %s: time limit of %u s reached; terminating", j->id, j->time_limit);
		job_terminate(j, END_TIMEOUT);
	} else {
		if (settle(j))
			(void)kill(j->pid, SIGKILL);
		proc_kill_group(j->pid, SIGKILL);
	}
}

static void take_row(struct job *j, struct claimed *c)
{
	j->seq = c->seq;
	j->token = c->token;
	j->downstream = c->downstream;
	j->id = c->id;
	j->queue = c->queue;
	c->id = c->queue = NULL;
	j->attempts = c->attempts;
	j->tempfails = c->tempfails;
	j->max_attempts = c->max_attempts;
	j->time_limit = c->time_limit;
	j->renewed = c->claimed_at;
}

/* Who the job runs as: for a queue that names a user or a group, looked
 * up at most a second ago (idcache.h: a user removed since kyud started is
 * this job's error), else kyud's own, looked up once. *temporary: the
 * failure was the name service's, not "no such user". */
static const struct domain_ids *job_ids(const struct domain *d, const struct job_params *p,
					const char *queue, char *err, size_t errlen,
					bool *temporary)
{
	const struct domain_ids *ids;
	char why[256];
	int r;

	*temporary = false;
	/* Never kyud's own identity when that is root: the configuration
	 * check gives every queue a root kyud serves a section that names its
	 * user, so a row that comes here without one belongs to a queue the
	 * configuration no longer serves (claimed before a reload). */
	if ((!d || !d->user) && p->self->uid == 0) {
		snprintf(err, errlen,
			 "queue %s: no [queue.%s] or [queue.*] section names a user, and "
			 "kyud runs as root: not running the job as root",
			 queue ? queue : "(none)", queue ? queue : "NAME");
		return NULL;
	}
	if (!d || (!d->user && !d->group))
		return p->self;
	if (!(ids = idcache_get(p->ids, d, mono_now(), &r, why, sizeof(why)))) {
		*temporary = r != -ENOENT;
		snprintf(err, errlen, "queue %s: rule %s: %s", queue,
			 strncmp(why, "group", 5) == 0 ? "group" : "user", why);
		return NULL;
	}
	/* Checked at load, and again here: the name service may map a user
	 * to uid 0 since. Root only where the section says user = root. */
	if (ids->uid == 0 && !(p->self->uid == 0 && d->user && strcmp(d->user, "root") == 0)) {
		snprintf(err, errlen,
			 "queue %s: rule user: user '%s' is uid 0 (root), and the section "
			 "does not say user = root",
			 queue, ids->name);
		return NULL;
	}
	return ids;
}

/* The directory a job starts in: its row's, its section's, or for a
 * queue with a section its user's home (/ if the home was missing at the
 * lookup, at most a second ago: system users often have none); without a
 * section, kyud's own. */
static const char *job_cwd(const struct claimed *c, const struct domain *d,
			   const struct domain_ids *ids)
{
	if (c->cwd && *c->cwd)
		return c->cwd;
	if (!d)
		return NULL;
	if (d->cwd)
		return d->cwd;
	return ids->home_is_dir ? ids->home : "/";
}

/* Look spec's program up in its own PATH (never kyud's), then start it;
 * fallback: what proc_start runs when it cannot be executed. *exec_errno:
 * the lookup found no program to run. */
static int start_spec(const struct jobspec *spec, const char *path, const char *cwd,
		      const struct proc_creds *cr, const char *const *fallback, struct job *j,
		      int *exec_errno, char *err, size_t errlen)
{
	char *found = path ? NULL : domain_env_find_program(spec->argv[0], spec->envp);
	int r;

	*exec_errno = 0;
	if (!path && !found) {
		*exec_errno = errno;
		snprintf(err, errlen, "cannot execute %s: %s", spec->argv[0],
			 errno == EACCES ? "permission denied" : "not found");
		return -*exec_errno;
	}
	r = proc_start(spec, path ? path : found, cwd, cr, fallback, &j->start, &j->pid, &j->out_fd,
		       &j->status_fd, err, errlen);
	free(found);
	return r;
}

struct job *job_start(struct ev_loop *loop, struct claimed *c, const struct job_params *p,
		      job_end_fn *end, void *ctx, struct outcome_out *fail)
{
	const struct domain *d = domain_for(p->domains, p->n_domains, c->queue);
	struct jobspec_input in = {
		.shell = p->shell,
		.direct_exec = p->direct_exec,
		.command = c->command,
		.argv_json = c->argv_json,
		.env_json = c->env_json,
		.job_id = c->id,
		.queue = c->queue,
		.after_json = c->after_json,
		.traceparent = c->traceparent,
		.attempt = c->attempts,
	};
	const struct domain_ids *ids;
	struct proc_creds cr;
	struct jobspec spec;
	struct job *j = NULL;
	char *path = NULL;
	const char *fallback[4];
	char err[512];
	unsigned long long start_ticks;
	int exec_errno, r;
	bool temporary;

	if (outcome_bad_row(c, fail))
		goto out;
	if (outcome_exhausted(c->attempts, c->tempfails, c->max_attempts, fail))
		goto out;
	ids = job_ids(d, p, c->queue, err, sizeof(err), &temporary);
	if (!ids) {
		if (temporary)
			outcome_unstarted_temporary(err, c->tempfails, fail);
		else
			outcome_unstarted(err, fail);
		goto out;
	}
	in.base_env = idcache_env(p->ids, d, ids, p->kyud_env);
	if (jobspec_build(&in, &spec, err, sizeof(err)) < 0) {
		outcome_unstarted(err, fail);
		goto out;
	}
	/* An argv row's program is found before the rules see it, and run by
	 * that very path. */
	if (c->argv_json)
		path = domain_env_find_program(spec.argv[0], spec.envp);
	if (domain_check_row(d, c->queue, !c->argv_json, spec.env_foreign,
			     path ? path : spec.argv[0], err, sizeof(err)) < 0) {
		outcome_unstarted(err, fail);
		jobspec_free(&spec);
		goto out;
	}
	cr = (struct proc_creds){
		.ids = ids,
		.umask = d ? d->umask : -1,
		.set_nice = d && d->key_line[DK_NICE],
		.nice = d ? d->nice : 0,
		.limit = d ? d->limit : NULL,
		.limit_set = d ? d->limit_set : NULL,
	};
	j = xcalloc(1, sizeof(*j));
	j->loop = loop;
	j->out_fd = -1;
	j->status_fd = -1;
	j->kill_grace = d && d->kill_grace >= 0 ? d->kill_grace : p->kill_grace;
	j->end = end;
	j->ctx = ctx;
	capture_init(&j->cap,
		     d && d->output_limit >= 0 ? (size_t)d->output_limit : p->output_limit);
	status_init(&j->status, p->result_max);
	/* Taken before the process exists, so at or before its start time
	 * in /proc (orphans.h): what the leftover rule compares with, without
	 * reading /proc for every job. */
	start_ticks = orphans_now_ticks();
	/* A line run without the shell that cannot be executed goes to the
	 * shell, so that a missing program, a script without #! or a file
	 * without x permission ends exactly as it would have (127, run as a
	 * script, 126, with the shell's message): here when no program is
	 * found, in the child when its exec fails (proc.c). */
	fallback[0] = p->shell;
	fallback[1] = "-c";
	fallback[2] = c->command;
	fallback[3] = NULL;
	r = start_spec(&spec, path, job_cwd(c, d, ids), &cr, spec.direct ? fallback : NULL, j,
		       &exec_errno, err, sizeof(err));
	if (r < 0 && exec_errno && spec.direct) {
		jobspec_use_shell(&in, &spec);
		r = start_spec(&spec, NULL, job_cwd(c, d, ids), &cr, NULL, j, &exec_errno, err,
			       sizeof(err));
	}
	if (r < 0) {
		start_failed(c->queue, c->tempfails, r, err, fail);
		jobspec_free(&spec);
		capture_free(&j->cap);
		free(j);
		j = NULL;
		goto out;
	}
	jobspec_free(&spec);
	take_row(j, c);
	j->spawned_at = mono_now();
	j->start_ticks = start_ticks;

	ev_io_init(&j->out_w, on_output, j->out_fd, EV_READ);
	j->out_w.data = j;
	ev_io_init(&j->status_w, on_status, j->status_fd, EV_READ);
	j->status_w.data = j;
	ev_timer_init(&j->watch_w, on_watch, JOB_WATCH_DELAY, 0.);
	j->watch_w.data = j;
	ev_timer_start(loop, &j->watch_w);
	ev_init(&j->limit_w, on_limit);
	j->limit_w.data = j;
	if (j->time_limit) {
		ev_timer_set(&j->limit_w, j->time_limit, 0.);
		ev_timer_start(loop, &j->limit_w);
	}
	log_debug("job %s attempt %u started (pid %d)", j->id, j->attempts, (int)j->pid);
	store_claimed_clear(c);
out:
	free(path);
	return j;
}

void job_terminate(struct job *j, enum end_reason why)
{
	if (j->reason == END_NONE || why == END_LOST)
		j->reason = why;
	if (j->term_sent)
		return;
	j->term_sent = true;
	/* Before its exec it may have no group of its own yet: the process
	 * itself (its signals are blocked until just before the exec). */
	if (settle(j))
		(void)kill(j->pid, SIGTERM);
	proc_kill_group(j->pid, SIGTERM);
	ev_timer_stop(j->loop, &j->limit_w);
	ev_timer_set(&j->limit_w, j->kill_grace > 0 ? j->kill_grace : 0.001, 0.);
	ev_timer_start(j->loop, &j->limit_w);
}

void job_kill(struct job *j, enum end_reason why)
{
	if (j->reason == END_NONE || why == END_LOST)
		j->reason = why;
	j->term_sent = true;
	ev_timer_stop(j->loop, &j->limit_w);
	if (settle(j))
		(void)kill(j->pid, SIGKILL);
	proc_kill_group(j->pid, SIGKILL);
}

void job_free(struct job *j)
{
	if (!j)
		return;
	close_output(j);
	close_status(j);
	status_free(&j->status);
	ev_timer_stop(j->loop, &j->limit_w);
	ev_timer_stop(j->loop, &j->watch_w);
	capture_free(&j->cap);
	/* Still starting (the worker is going away): its copy stays, it may
	 * still be reading it. */
	(void)settle(j);
	free(j->start_fail);
	free(j->id);
	free(j->queue);
	free(j);
}
