/* One running attempt: from a claimed row to the end of its process
 * group. This module owns struct job: it builds the command from the row
 * (jobspec), spawns it, captures its output, enforces its time limit
 * (TERM to the group, KILL after kill_grace), and when the caller has
 * reaped the process (job_reaped) and the group is killed, calls back once
 * with the job. The callback decides what the end means (outcome.c) and
 * frees the job. Reaping is the caller's: one wait4 loop serves every job
 * of a process, and the orphans re-parented to it. */
#ifndef KYU_JOB_H
#define KYU_JOB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include <ev.h>

#include "common/capture.h"
#include "common/domain.h"
#include "idcache.h"
#include "outcome.h"
#include "status.h"
#include "store.h"

struct job;
typedef void job_end_fn(void *ctx, struct job *j);

/* What a worker's configuration says about starting jobs. */
struct job_params {
	const char *shell;
	bool direct_exec;
	char *const *kyud_env; /* what env_pass and LANG are copied from */
	size_t output_limit;
	size_t result_max; /* [kyud] result_max: a status channel's result */
	int kill_grace;
	/* [queue.NAME] and [queue.*]: what each queue's jobs run as */
	const struct domain *domains;
	int n_domains;
	/* kyud's own user, looked up once: for queues that name no user */
	const struct domain_ids *self;
	/* the users and groups of the sections that name one (idcache.h) */
	struct idcache *ids;
};

/* How long a job runs before its pipes are watched (s). */
#define JOB_WATCH_DELAY 0.02

struct job {
	/* The row, taken over from its claim. */
	uint64_t seq, token;
	bool downstream; /* jobs wait for this one (has_downstream at its claim) */
	char *id, *queue;
	unsigned attempts, tempfails, max_attempts, time_limit;

	pid_t pid; /* also its process group, once it has its session */
	/* Until its process has executed (proc.h): what proc_settle needs.
	 * A start that failed there leaves start_fail, the outcome of an
	 * attempt that never started, recorded when its process is reaped. */
	struct proc_start *start;
	struct outcome_out *start_fail;
	bool pid_reported; /* the pid rode along with a heartbeat */
	enum end_reason reason;
	bool term_sent;
	bool fenced; /* killed by self-fencing (lease.c) */
	bool gated;  /* held a concurrency key or a limited queue's slot */
	/* Monotonic time just before the statement that last set the lease
	 * was sent: the server's lease runs at least `lease` s from here. */
	double renewed;
	double spawned_at;
	/* When its process started, in /proc's clock ticks (orphans.h); 0 if
	 * unknown, which makes the orphan sweep at its end kill every
	 * re-parented process that belongs to no running job. */
	unsigned long long start_ticks;
	int wstatus;          /* once ended */
	struct rusage rusage; /* once ended: wait4's, the process and what it waited for */
	struct capture cap;
	/* The last line of its output: what its error names when it fails
	 * with a bare exit code (outcome.h). */
	struct capture_line last_line;
	uint64_t live_total; /* cap.total when its live tail was last written (live.c) */
	/* What it wrote to its status channel (status.h), and status.gen
	 * when its progress was last written (live.c). */
	struct status_chan status;
	uint64_t live_status_gen;

	/* private */
	struct ev_loop *loop;
	int out_fd;
	int status_fd;
	int kill_grace;
	ev_io out_w;
	ev_io status_w;
	ev_timer limit_w;
	ev_timer watch_w; /* starts out_w and status_w (job.c: on_watch) */
	job_end_fn *end;
	void *ctx;
};

/* Start c's attempt. On success returns the job, running, and c's
 * strings are taken (c is cleared). On failure returns NULL, c is left to
 * the caller, and *fail says how the attempt ended (never started, or for
 * a command line run directly, what the shell would have reported). */
struct job *job_start(struct ev_loop *loop, struct claimed *c, const struct job_params *p,
		      job_end_fn *end, void *ctx, struct outcome_out *fail);
/* j's process was reaped with this status and usage: the attempt is
 * over. Kills what is left of its group, reads the rest of its output and
 * calls the end callback, which frees j. */
void job_reaped(struct job *j, int wstatus, const struct rusage *ru);
/* Whether j's process has not executed yet (job.start): settles it when
 * it has, kills it when it is past the deadline (*deadline: the moment to
 * ask again). */
bool job_starting(struct job *j, double now, double *deadline);
/* End the attempt for why: TERM to its group now, KILL after kill_grace.
 * The first reason given is kept, except that END_LOST overrides. */
void job_terminate(struct job *j, enum end_reason why);
/* SIGKILL the group now, no grace (fencing, lost lease). */
void job_kill(struct job *j, enum end_reason why);
void job_free(struct job *j);

#endif
