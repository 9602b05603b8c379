/* The metrics process, seen from the supervisor: the listening socket of
 * [kyud] metrics, bound here so that a taken address is an error at start,
 * and kyud-metrics started on it, restarted when it dies, replaced on each
 * reload. The process itself is src/metrics/ (main.c its main, metricsd.c
 * its HTTP server); the text it serves is common/metrics.c's.
 *
 * Kept apart from the supervisor's loop (sup.c) because it is a child unlike the
 * workers: one at most, optional, never woken, and handed the scoreboard
 * read-only and a socket instead of a database's work. */
#ifndef KYU_METRICSPROC_H
#define KYU_METRICSPROC_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include <ev.h>

#include "common/attr.h"
#include "common/config.h"
#include "child.h"

struct metricsproc {
	struct ev_loop *loop;
	const struct kyu_config *cfg; /* the supervisor's, in force */
	struct child child;           /* set up by sup.c (child_init) */
	int fd;                       /* the listening socket; -1: metrics are off */
	bool stopping;                /* not started again; metricsproc_stop */
	char exe[PATH_MAX];
};

/* No socket, no process. */
void metricsproc_init(struct metricsproc *mp, struct ev_loop *loop, const struct kyu_config *cfg);
/* Where kyud-metrics is, from self, kyud's own path. */
void metricsproc_find_exe(struct metricsproc *mp, const char *self);
/* Bind cfg->metrics (nothing when empty), in place of the socket open, if
 * any. Returns 0, or < 0 (logged) when it cannot be bound: metrics are off
 * then. */
KYU_MUSTCHECK int metricsproc_bind(struct metricsproc *mp);
void metricsproc_close(struct metricsproc *mp);

/* Start it, when there is a socket and a scoreboard (board_fd) and none
 * runs; cfg_fd: the sealed bytes of the configuration in force. */
void metricsproc_spawn(struct metricsproc *mp, int cfg_fd, int board_fd);
/* A reload: the running one is stopped and started again on the new
 * configuration once it has exited (metricsproc_exited), or it is started
 * now if none runs. */
void metricsproc_replace(struct metricsproc *mp, int cfg_fd, int board_fd);
/* It exited (reaped already; how is its wait status in words, after ran
 * seconds): logged, and started again as the case may be. True when it
 * is gone for good: the daemon is stopping. */
bool metricsproc_exited(struct metricsproc *mp, pid_t pid, const char *how, double ran, int cfg_fd,
			int board_fd);

/* Tell it to stop, and start it no more. */
void metricsproc_stop(struct metricsproc *mp);
/* The stop took too long: SIGKILL. */
void metricsproc_kill(struct metricsproc *mp);

#endif
