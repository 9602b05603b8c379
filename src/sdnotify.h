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

#include "config.h"
#include "proto.h"

#define SDN_MAX_WORKERS 256

struct sdn_worker {
	pid_t pid;   /* 0: no process (not started, or waiting to be restarted) */
	double seen; /* monotonic: its last report, or its start */
	bool silent; /* pings withheld for it; said once */
	bool killed; /* silent too long: SIGKILL sent */
	bool reported; /* it reported once: its loop runs, it may hold leases */
	bool overdue;  /* found silent too long once: killed if still so a loop turn later */
	struct worker_state st;
};

struct sdn {
	struct ev_loop *loop;
	bool notify;          /* NOTIFY_SOCKET is set */
	uint64_t watchdog_us; /* WATCHDOG_USEC for us; 0: no watchdog */
	ev_timer ping_w, kill_w, status_w;
	struct sdn_worker w[SDN_MAX_WORKERS];
	int workers;                    /* configured */
	double kill_after;              /* s: lease - fence_margin - heartbeat (check_kill) */
	bool started, ready, reloading, stopping, waiting_logged;
	time_t down_since;              /* wall clock; 0: connected, or not known yet */
	unsigned down_err;              /* the error that keeps it down */
	char status[512];               /* the last STATUS= sent */
	double status_at;               /* monotonic */
};

/* Reads NOTIFY_SOCKET and WATCHDOG_USEC/WATCHDOG_PID; starts the pings. */
void sdn_init(struct sdn *n, struct ev_loop *loop, const struct kyu_config *cfg);
void sdn_free(struct sdn *n);
/* The KYU_REPORT value for a worker: µs between reports, a quarter of the
 * silence that gets it killed (or of the watchdog's interval, if shorter). */
int64_t sdn_report_us(const struct sdn *n);
/* A copy of environ without NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID,
 * for a worker: only the supervisor speaks to systemd. The array is the
 * caller's to free(); the strings are environ's. */
char **sdn_worker_env(void);

/* Worker slot i (0-based) got a process, lost it, or reported. */
void sdn_spawned(struct sdn *n, int i, pid_t pid);
void sdn_exited(struct sdn *n, int i);
void sdn_report(struct sdn *n, int i, int64_t value);
/* Every one of the `workers` configured workers has started. */
void sdn_started(struct sdn *n, int workers);
void sdn_reloading(struct sdn *n);
/* A new configuration is in force: its lease sets kill_after (before the
 * workers are sent sdn_report_us()). */
void sdn_configure(struct sdn *n, const struct kyu_config *cfg);
/* The reload is over (applied or refused); cfg is what is in force. */
void sdn_reloaded(struct sdn *n, const struct kyu_config *cfg);
void sdn_stopping(struct sdn *n);

/* The STATUS= text for the state in n (pure but for the local time of
 * down_since). */
void sdn_status_text(const struct sdn *n, char *buf, size_t cap);

#endif
