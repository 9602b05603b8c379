/* The pool of worker processes: `kyud --worker N` for each of [kyud]
 * workers, started with the configuration's bytes and the scoreboard,
 * restarted with a backoff when one dies (at least 1 s later, doubling up
 * to 60 s while it keeps dying young; one that refuses its configuration
 * is not: the daemon stops), told to reload or retired when a reload
 * changes the pool, told to stop and killed when they do not.
 *
 * Kept apart from the supervisor's loop (sup.c) so that the lifecycle of a worker
 * process reads in one place; which worker is woken when is the fan-out's
 * (fanout.h). The table of workers is this room's: liveness.h keeps each
 * one's life in it and kills a worker that stops reporting; sdnotify.h
 * reads it to tell systemd. */
#ifndef KYU_POOL_H
#define KYU_POOL_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <ev.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/registry.h"
#include "child.h"
#include "liveness.h"
#include "sdnotify.h"

#define POOL_MAX_WORKERS 256

struct pool {
	struct ev_loop *loop;
	const struct kyu_config *cfg; /* the supervisor's, in force */
	struct sdnotify *sdn;
	/* The one table of workers: each slot's process, its messages and
	 * its life (child.h); liveness.h kills the silent ones. */
	struct liveness live;
	struct child children[POOL_MAX_WORKERS];
	int n;              /* slots in use: >= cfg->workers after a shrinking reload */
	bool stopping;      /* no more restarts; pool_stop */
	char exe[PATH_MAX]; /* kyud itself: a worker is kyud --worker N */
	/* This daemon's token in kyu_daemons (registry.h), for worker 1. */
	char id[REGISTRY_ID_MAX];
	/* The scoreboard every worker counts into (board.h); the metrics
	 * process serves it. NULL and -1: none. */
	struct board *board;
	int board_fd;
};

/* What became of a worker that exited (pool_exited). */
enum pool_exit {
	POOL_EXIT_RESTARTING, /* it died: started again after its backoff */
	POOL_EXIT_GONE,       /* stopped or retired: not started again */
	POOL_EXIT_REFUSED,    /* it refused its configuration (EX_CONFIG): the daemon must stop */
};

/* An empty pool (no slot, no scoreboard); cfg and sdn are the supervisor's
 * and outlive it. The liveness rule starts with it. */
void pool_init(struct pool *p, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct sdnotify *sdn);
/* Setup, in sup_main's order. The path of our own executable: -1
 * (logged) when it cannot be found. */
KYU_MUSTCHECK int pool_find_exe(struct pool *p);
/* This daemon's token, from the host name and our pid. */
void pool_make_id(struct pool *p);
/* The scoreboard; without one (logged) the workers run uncounted. */
void pool_create_board(struct pool *p);
void pool_free(struct pool *p);
/* Worker c reported (KYU_STATE's value): its life, then systemd's view. */
void pool_report(struct pool *p, struct child *c, int64_t value);
/* Worker c's process was reaped. */
void pool_reaped(struct pool *p, struct child *c);
/* A new configuration's lease is in force (before the workers hear it). */
void pool_configure(struct pool *p);
/* Start the worker of slot c, handing it cfg_fd (the sealed bytes of the
 * configuration in force); if it cannot be started, try again later. */
void pool_spawn(struct pool *p, struct child *c, int cfg_fd);
/* c's restart delay is over: start it, unless stopping or retired. */
void pool_restart(struct pool *p, struct child *c, int cfg_fd);
/* Every slot's worker, at start. */
void pool_start(struct pool *p, int cfg_fd);
/* A new configuration is in force (cfg_fd its bytes) and the pool has a
 * slot for each of its workers (sup.c adds them): the running workers are
 * handed it, missing ones started, those beyond cfg->workers retired. */
void pool_reload(struct pool *p, int cfg_fd);

/* The worker of c exited with wait status st after running `ran` seconds
 * (c is reaped already; how is st in words). Logged here. */
enum pool_exit pool_exited(struct pool *p, struct child *c, pid_t pid, int st, const char *how,
			   double ran);

/* Tell every worker to stop (KYU_STOP_NOW: interrupting its jobs); the
 * first time, nothing is restarted any more. */
void pool_stop(struct pool *p, bool now);
/* The same for an operator's drain (kyu_daemons.drain): KYU_STOP with
 * KYU_STOP_FINISH, the jobs run to their end. */
void pool_drain(struct pool *p);
/* The stop took too long: SIGKILL every worker left (logged). */
void pool_kill(struct pool *p);

bool pool_has(const struct pool *p, pid_t pid);
bool pool_all_exited(const struct pool *p);

#endif
