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
 * Whatever systemd does, workers report at least four times per
 * lease - fence_margin - heartbeat, and one silent that long is killed with
 * its jobs (and restarted): a stopped worker must not leave its jobs
 * running past their leases. Without NOTIFY_SOCKET nothing is sent to
 * systemd. */
#ifndef KYU_SDNOTIFY_H
#define KYU_SDNOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <ev.h>

#include "common/config.h"
#include "common/proto.h"

#define SDNOTIFY_MAX_WORKERS 256

struct sdnotify_worker {
	pid_t pid;   /* 0: no process (not started, or waiting to be restarted) */
	double seen; /* monotonic: its last report, or its start */
	bool silent; /* pings withheld for it; said once */
	bool killed; /* silent too long: SIGKILL sent */
	bool reported; /* it reported once: its loop runs, it may hold leases */
	bool overdue;  /* found silent too long once: killed if still so a loop turn later */
	struct worker_state st;
};

struct sdnotify {
	struct ev_loop *loop;
	bool notify;          /* NOTIFY_SOCKET is set */
	uint64_t watchdog_us; /* WATCHDOG_USEC for us; 0: no watchdog */
	ev_timer ping_w, kill_w, status_w;
	struct sdnotify_worker w[SDNOTIFY_MAX_WORKERS];
	int workers;                    /* configured */
	double kill_after;              /* s: lease - fence_margin - heartbeat (check_kill) */
	bool started, ready, reloading, stopping, waiting_logged;
	time_t down_since;              /* wall clock; 0: connected, or not known yet */
	unsigned down_err;              /* the error that keeps it down */
	char status[512];               /* the last STATUS= sent */
	double status_at;               /* monotonic */
};

/* Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID; starts the pings. */
void sdnotify_init(struct sdnotify *n, struct ev_loop *loop, const struct kyu_config *cfg);
void sdnotify_free(struct sdnotify *n);
/* The KYU_REPORT value for a worker: µs between reports, a quarter of the
 * silence that gets it killed (or of the watchdog's interval, if shorter). */
int64_t sdnotify_report_us(const struct sdnotify *n);
/* A copy of environ without NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID,
 * for a worker: only the supervisor speaks to systemd. The array is the
 * caller's to free(); the strings are environ's. */
char **sdnotify_worker_env(void);

/* Worker slot i (0-based) got a process, lost it, or reported. */
void sdnotify_spawned(struct sdnotify *n, int i, pid_t pid);
void sdnotify_exited(struct sdnotify *n, int i);
void sdnotify_report(struct sdnotify *n, int i, int64_t value);
/* Every one of the `workers` configured workers has started. */
void sdnotify_started(struct sdnotify *n, int workers);
void sdnotify_reloading(struct sdnotify *n);
/* A new configuration is in force: its lease sets kill_after (before the
 * workers are sent sdnotify_report_us()). */
void sdnotify_configure(struct sdnotify *n, const struct kyu_config *cfg);
/* The reload is over (applied or refused); cfg is what is in force. */
void sdnotify_reloaded(struct sdnotify *n, const struct kyu_config *cfg);
void sdnotify_stopping(struct sdnotify *n);

/* The STATUS= text for the state in n (pure but for the local time of
 * down_since). */
void sdnotify_status_text(const struct sdnotify *n, char *buf, size_t cap);

#endif
