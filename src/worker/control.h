/* The control channel: what the supervisor tells a worker (proto.h:
 * wake-ups, polls, stop, reload, the schedules' wake-up, how to report)
 * and SIGTERM, the reload itself, the drain that a stop starts, and the
 * worker's reports to the supervisor (report.h) and its scoreboard slot
 * (board.h).
 *
 * Why a room of its own, on top: a message reaches nearly every room (a
 * reload reconfigures jobs, leases, live output, the claim, the scheduler,
 * the registry and maybe the connection), so this is the one module that
 * knows them all, besides worker.c that builds them; the rooms below know
 * nothing of messages. The drain is one entry point (control_drain),
 * whether a stop, SIGTERM or the supervisor's death starts it. Owns no
 * row of a job: a drain gives held rows back through the claim. */
#ifndef KYU_CONTROL_H
#define KYU_CONTROL_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

#include "claim.h"
#include "common/board.h"
#include "common/config.h"
#include "conn.h"
#include "daemonrow.h"
#include "jobs.h"
#include "lease.h"
#include "live.h"
#include "parent.h"
#include "report.h"
#include "scheduler.h"
#include "settle.h"

/* The rooms a message may reach (worker.c's). */
struct control_rooms {
	struct parent *parent;
	struct conn *conn;
	struct jobs *jobs;
	struct lease *lease;
	struct live *live;
	struct claim *claim;
	struct scheduler *sched;
	struct daemonrow *reg;
	struct settle *settle;
};

struct control {
	struct ev_loop *loop;
	struct kyu_config *cfg; /* the worker's: a reload replaces it in place */
	struct control_rooms r;
	struct report rep; /* the worker's state, as the supervisor hears it */
	/* This worker's slot of the scoreboard (NULL: none), and what of the
	 * totals kept elsewhere it has counted there. */
	struct board_worker *bw;
	uint64_t board_deadlocks, board_fences;
	ev_io ctl_w;
	ev_signal term_w;
};

/* Before control_start: the report (conn.c reports through it). */
void control_init(struct control *ctl, struct ev_loop *loop, struct kyu_config *cfg,
		  const struct control_rooms *rooms, struct board_worker *bw);
/* Listen to the supervisor and to SIGTERM. */
void control_start(struct control *ctl);
/* SIGTERM's watcher is stopped (handler back to the default) before the
 * loop is destroyed. */
void control_free(struct control *ctl);
/* parent.c's gone hook (ctx: the control): stop reading, drain. */
void control_parent_gone(void *control);
/* Stop: no new jobs, held ones given back, the registry row deleted
 * (DRAIN_FINISH: once this worker's jobs have ended); running jobs as how
 * says (jobs.h). */
void control_drain(struct control *ctl, enum drain_how how);
/* Totals that other rooms keep, onto the scoreboard (a few loads and
 * stores per loop iteration), and the report if it is time. */
void control_sync(struct control *ctl);

#endif
