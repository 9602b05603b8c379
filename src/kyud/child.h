/* One child process of the supervisor, a worker (pool.h) or the metrics
 * process (metricsproc.h): fork and exec with its descriptors in place, the
 * control socket to it (proto.h), and the libev watchers of its messages,
 * its exit and its restart.
 *
 * A room of its own because both kinds are started the same way, and the
 * code between fork and exec (async-signal-safe calls only) is the most
 * delicate of the supervisor. What a child's messages and exit mean is not
 * decided here: the watchers call the supervisor's handlers (sup.c), which
 * hand each event to the room that owns the child. */
#ifndef KYU_CHILD_H
#define KYU_CHILD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <ev.h>

#include "common/attr.h"
#include "common/proto.h"

struct sup;

/* Where a worker stands, as its reports show (liveness.h moves it; the
 * other rooms read it). */
enum child_life {
	CHILD_DOWN,    /* no process */
	CHILD_STARTED, /* started, not reported yet: it has claimed nothing */
	CHILD_ALIVE,   /* reported within the limit */
	CHILD_OVERDUE, /* silent past the limit once: killed if still so a loop turn later */
	CHILD_KILLED,  /* silent too long: SIGKILL sent, its exit awaited */
};

/* The handlers of every child's watchers (sup.c's); each watcher's data is
 * the struct child. */
struct child_ops {
	void (*msg)(EV_P_ ev_io *w, int revents);        /* its control socket is readable */
	void (*exit)(EV_P_ ev_child *w, int revents);    /* it exited */
	void (*restart)(EV_P_ ev_timer *w, int revents); /* its restart delay is over */
};

struct child {
	struct sup *s; /* the supervisor, for the handlers */
	const struct child_ops *ops;
	int index; /* worker N (1-based); 0: the metrics process */
	pid_t pid; /* 0: not running */
	int fd;    /* the control socket; -1: none */
	ev_io io;
	ev_child cw;
	ev_timer restart_w;
	double started;
	double backoff;
	/* Where the wake fan-out stands with it (fanout.h). */
	bool ready, idle, wake_inflight;
	/* Stopped on purpose (a reload shrank the pool, or replaces the
	 * metrics process): not restarted as a death. */
	bool retired;
	/* A worker's life (liveness.h): its state, its last report or its
	 * start (monotonic), and what that report said. */
	enum child_life life;
	double seen;
	struct worker_state st;
	/* sdnotify.h's: watchdog pings are withheld while it is silent (said
	 * once). */
	bool ping_withheld;
	bool metrics; /* the metrics process, not a worker */
	bool watcher; /* the watcher process (watchproc.h), not a worker */
};

/* A slot with no process: worker index (1-based), or the metrics process. */
void child_init(struct child *c, struct sup *s, const struct child_ops *ops, int index,
		bool metrics);

/* Fork and exec exe (kyud itself, or kyud-metrics) as a child process with
 * argv, the control socket on fd 3 and fds[1..nfds-1] after it (fds[0] is
 * set to the child's end of the socket; -1 leaves that descriptor closed);
 * c records it and its watchers start. Returns 0, or -1 (logged, "what:
 * ...") when it could not be started. */
KYU_MUSTCHECK int child_spawn(struct ev_loop *loop, struct child *c, const char *what,
			      const char *exe, char *const argv[], int *fds, int nfds);

/* A message of this type (no value), if it runs; a child that does not
 * read it is ending, and its exit says how. */
void child_send(const struct child *c, uint32_t type);

/* Its process was reaped: the watchers stop, the socket closes, and the
 * slot has no process. */
void child_reaped(struct ev_loop *loop, struct child *c);

/* Start it again after c->backoff seconds (ops->restart). */
void child_restart_later(struct ev_loop *loop, struct child *c);

#endif
