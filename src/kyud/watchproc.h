/* The watcher process, seen from the supervisor: kyud --watcher
 * (src/watch/watch.h) started once every worker is ready, restarted when
 * it dies, replaced on each reload, stopped with the daemon; its KYU_HINT
 * messages become wake-ups through the fan-out (fanout.h) as a datagram's
 * do, less the rechecks a datagram needs (what the watcher reports is
 * committed).
 *
 * Kept apart from the supervisor's loop (sup.c) as the metrics process is: a
 * child unlike the workers, one at most, which reads the database but
 * claims nothing. */
#ifndef KYU_WATCHPROC_H
#define KYU_WATCHPROC_H

#include <stdbool.h>
#include <sys/types.h>

#include <ev.h>

#include "common/config.h"
#include "common/proto.h"
#include "child.h"
#include "fanout.h"

struct watchproc {
	struct ev_loop *loop;
	const struct kyu_config *cfg; /* the supervisor's, in force */
	struct fanout *fan;
	struct child child; /* set up by sup.c (child_init) */
	const char *exe;    /* kyud itself */
	int board_fd;       /* the scoreboard (-1: none), where it writes its figures */
	char *id;           /* the daemon's id (its replica server id comes from it) */
	bool stopping;
	unsigned long hints;
};

void watchproc_init(struct watchproc *wp, struct ev_loop *loop, const struct kyu_config *cfg,
		    struct fanout *fan);
/* Start it, if it is wanted ([kyud] wake_binlog or wake_poll) and none
 * runs; cfg_fd: the sealed bytes of the configuration in force. */
void watchproc_spawn(struct watchproc *wp, int cfg_fd);
/* A reload: the running one is stopped and started again on the new
 * configuration once it has exited. */
void watchproc_replace(struct watchproc *wp, int cfg_fd);
/* A message from it. */
void watchproc_msg(struct watchproc *wp, const struct msg *m);
/* It exited (reaped already). Returns true when it is gone for good (the
 * daemon is stopping); *refused: it exited 78 (wake_binlog = on, and the
 * log cannot be read), which stops the daemon. */
bool watchproc_exited(struct watchproc *wp, pid_t pid, int status, const char *how, double ran,
		      int cfg_fd, bool *refused);
void watchproc_stop(struct watchproc *wp);
void watchproc_kill(struct watchproc *wp);

#endif
