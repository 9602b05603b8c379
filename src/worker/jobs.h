/* The jobs a worker runs: its slots, starting a claimed row as a job,
 * reaping every child (wait4, for the attempt's cost), the end of each
 * attempt turned into a result, the sweep of what finished jobs left
 * behind, and the drain (no new starts; the grace, then interrupting
 * what still runs).
 *
 * Who owns the row here: jobs_start takes a struct claimed from the claim
 * (claim.c) and moves it into a struct job (job.c, one process); from then
 * on the slot array owns the job, until its end, when the attempt's result
 * goes to results.c (struct finish, kept until recorded: record.c) and the
 * job is freed. A row that never started becomes a result here too.
 *
 * Why the cut: everything that touches a process. job.c stays the module
 * of one job's process (spawn, output, time limit, kill); this one holds
 * the set of them and the worker's part of their lives, which job.c's
 * callback contract (the caller reaps and frees) leaves to its caller.
 * What an end means to the claim (a slot and a key are free) is the claim's
 * business, told through the ended hook. */
#ifndef KYU_JOBS_H
#define KYU_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "common/attempt.h"
#include "common/board.h"
#include "common/config.h"
#include "common/domain.h"
#include "idcache.h"
#include "job.h"
#include "lease.h"
#include "results.h"

struct jobs {
	struct ev_loop *loop;
	const struct kyu_config *cfg;
	struct job **slots; /* cfg->slots long; NULL: free */
	int n_running;
	struct job_params params;
	struct domain_ids self;  /* kyud's own user */
	struct idcache idcache;  /* the users of the queues' sections */
	struct results *results; /* where each attempt's end goes (record.c's) */
	struct lease *lease;
	struct board_worker *bw;
	/* A job ended, first of all (claim.c: its run time, its slot and
	 * its key are free); then its result is queued and it is freed. */
	void (*ended)(void *ctx, const struct job *j);
	void *ended_ctx;

	/* The orphan sweeps under way kill what started at or after this
	 * (keep_child); ULLONG_MAX between sweeps. */
	unsigned long long sweep_from;
	bool sweep_wanted; /* a job ended: sweep before the loop sleeps */
	double swept_at;   /* the last sweep (mono_now) */
	/* the sweep put off until JOBS_SWEEP_GAP after the last, or repeated
	 * while it finds some */
	ev_timer sweep_w;
	/* the earliest deadline of a job's process that has not executed
	 * yet (proc.h: killed past it) */
	ev_timer start_w;
	ev_signal chld_w; /* reaps jobs and their orphans (on_sigchld) */

	bool draining;
	bool finishing;        /* a drain without a grace: the jobs run to their end */
	double drain_deadline; /* monotonic: past it, a drain without a database gives up */
	ev_timer grace_w;

	uint64_t n_started;
};

/* Before jobs_init: self (domain_resolve). The slots, the params and the
 * watchers; SIGCHLD is watched from now on. */
void jobs_init(struct jobs *js, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct results *results, struct lease *lease, struct board_worker *bw,
	       void (*ended)(void *ctx, const struct job *j), void *ended_ctx);
void jobs_free(struct jobs *js);
/* What starting a job needs from the configuration; after every load. */
void jobs_configure(struct jobs *js);
/* Start c's attempt in a free slot (there is one). Takes c: it runs, or
 * its failure to start is queued as its result. gated: it holds a
 * concurrency key or a limited queue's slot (said at its end). */
void jobs_start(struct jobs *js, struct claimed *c, bool gated);
/* Reap every child that has exited (one wait4 that finds nothing costs a
 * microsecond). */
void jobs_reap(struct jobs *js);
/* Once per loop iteration: kill what the jobs that ended left behind (at
 * most every JOBS_SWEEP_GAP, 50 ms: jobs.c). */
void jobs_sweep(struct jobs *js);
/* How a drain treats the running jobs: the shutdown grace, then
 * interrupted (TERM); interrupted at once (INT, a second TERM); left to
 * finish, bounded by their time limits only (kyu_daemons.drain). A
 * stronger one may follow a weaker one. */
enum drain_how { DRAIN_GRACE, DRAIN_NOW, DRAIN_FINISH };
/* Stop starting jobs, and treat the running ones as how says. */
void jobs_drain(struct jobs *js, enum drain_how how);

#endif
