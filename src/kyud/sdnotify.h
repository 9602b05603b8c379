/* What the supervisor tells systemd (sd_notify(3)), from what its workers
 * report (KYU_STATE, report.h):
 * - READY=1 once every worker has started and one has a working database
 *   connection; until then STATUS= says what it waits for;
 * - RELOADING=1 (with MONOTONIC_USEC=) and READY=1 around a reload, once
 *   ready; STOPPING=1 on stop;
 * - STATUS= with the jobs running, the workers and the database's state,
 *   when it changes, at most about once a second;
 * - WATCHDOG=1 every half of WATCHDOG_USEC, but only while every worker
 *   process has reported within that half (its loop turns).
 * It reads the pool's table of workers (child.h); which worker is killed
 * for its silence is liveness.h's rule, not systemd's. Without
 * NOTIFY_SOCKET nothing is sent to systemd. */
#ifndef KYU_SDNOTIFY_H
#define KYU_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <ev.h>

#include "child.h"
#include "common/config.h"

struct sdnotify {
	struct ev_loop *loop;
	bool notify;          /* NOTIFY_SOCKET is set */
	uint64_t watchdog_us; /* WATCHDOG_USEC for us; 0: no watchdog */
	ev_timer ping_w, status_w;
	struct child *children; /* the pool's table of workers */
	const int *n;           /* its slots in use */
	int workers;            /* configured */
	bool started, ready, reloading, stopping, waiting_logged;
	time_t down_since; /* wall clock; 0: connected, or not known yet */
	unsigned down_err; /* the error that keeps it down */
	char status[512];  /* the last STATUS= sent */
	double status_at;  /* monotonic */
};

/* Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID (watchdog_us); starts
 * the pings. children and n: the pool's table, which outlives it. */
void sdnotify_init(struct sdnotify *n, struct ev_loop *loop, const struct kyu_config *cfg,
		   struct child *children, const int *n_children);
void sdnotify_free(struct sdnotify *n);

/* Worker c got a process, lost it, or reported (after liveness.h saw it). */
void sdnotify_spawned(struct sdnotify *n);
void sdnotify_exited(struct sdnotify *n);
void sdnotify_report(struct sdnotify *n, struct child *c);
/* Every one of the `workers` configured workers has started. */
void sdnotify_started(struct sdnotify *n, int workers);
void sdnotify_reloading(struct sdnotify *n);
/* The reload is over (applied or refused); cfg is what is in force. */
void sdnotify_reloaded(struct sdnotify *n, const struct kyu_config *cfg);
void sdnotify_stopping(struct sdnotify *n);

/* The STATUS= text for the state in n (pure but for the local time of
 * down_since). */
void sdnotify_status_text(const struct sdnotify *n, char *buf, size_t cap);

#endif
