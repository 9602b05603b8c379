/* Schedules: the rows of kyu_schedules turned into jobs, each instant
 * exactly once across every daemon (notes/DESIGN.md, "Schedules").
 *
 * One worker per daemon runs this (worker 1). It reads the schedules that
 * are due by the database clock, and for each computes one step: the
 * instant to fire (if any) and the next_run that follows. A step is one
 * transaction that moves next_run from the value read to the new one
 * (compare-and-set: a daemon that lost the race changes nothing) and, in
 * the same transaction, inserts the job whose id names the schedule and the
 * instant (cron:NAME:2026-11-23T06:00:00Z). Between firings the worker
 * sleeps until the earliest next_run, or its fallback period at most (the
 * daemon's poll_interval, SCHEDULES_POLL at least); a changed row wakes it
 * through the "any queue" wake-up of sql/notify.sql and kyu(1).
 *
 * The database clock can step (an NTP step, a manual fix): every scan's
 * reading is compared with the worker's monotonic clock (dbclock.h).
 * Forward, the instants the clock jumped over were reached by no daemon:
 * they are missed, and each schedule's missed policy applies to them (the
 * grace window does not make the last minute of them "on time"). Backward,
 * every next_run lies ahead by the step: the future ones are computed
 * again from the clock (set to NULL), so that a schedule is not silent
 * for the length of the step; an instant whose job exists already is not
 * enqueued again.
 *
 * This module builds the statements and reads their replies; the worker
 * sends them on its connection when schedules_ready() says one is due. */
#ifndef KYU_SCHEDULES_H
#define KYU_SCHEDULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/attr.h"
#include "common/db.h"
#include "common/spell.h"
#include "common/util.h"
#include "dbclock.h"

/* Without a wake-up, a changed row is seen within the fallback period:
 * this many seconds at least (schedules_set_poll). */
#define SCHEDULES_POLL 60.0
/* Rows read per scan; the rest come with the next scan, at once. */
#define SCHEDULES_BATCH 256
/* missed = all runs at most this many of the missed instants (the last). */
#define SCHEDULES_ALL_MAX 100
/* Wake-ups closer together than this are folded into one scan. */
#define SCHEDULES_MIN_GAP 0.2

/* A schedule as a scan read it. next_run: seconds since the epoch (UTC);
 * has_next false when the column is NULL. */
#define SCHEDULES_BAD_ARGV 2
#define SCHEDULES_BAD_ENV 3

struct schedules_row {
	char *name, *cron, *tz;
	int64_t next_run;
	bool has_next;
	char missed; /* 's'kip, 'o'nce, 'a'll */
	int64_t grace;
	bool runs_nothing; /* neither command nor argv */
	int bad_what;      /* SCHEDULES_BAD_*: argv or env not of the right JSON type */
	bool bad_next;     /* next_run is set but holds no time (a zero date) */
};

/* What one step does, computed by schedules_plan. */
struct schedules_step {
	int64_t next; /* the new next_run */
	bool fire;    /* enqueue a job for instant */
	int64_t instant;
	int64_t skipped;   /* missed instants passed over without a job */
	bool skipped_more; /* there were more than counted */
	bool merged;       /* missed = once: the job stands for a missed period */
};

enum schedules_sent {
	SCHEDULES_NONE,
	SCHEDULES_SCAN,
	SCHEDULES_STEP,
	SCHEDULES_MARK,
	SCHEDULES_REBASE
};

struct schedules_hold {
	char *name;
	double until; /* monotonic */
	int fails;
};

struct schedules {
	double poll;    /* seconds: the fallback period, SCHEDULES_POLL at least */
	double scan_at; /* monotonic; the next scan is due then */
	double last_scan;
	/* The due rows of the last scan, stepped one by one from next_row. */
	struct schedules_row *rows;
	int n_rows, next_row;
	int64_t db_now_us; /* the database clock at the scan (UTC, µs) */
	double scanned;    /* monotonic time of that scan's reply */
	bool stepped;      /* a step of this scan changed something: scan again at once */
	bool cas_lost;     /* a step of this scan matched nothing: scan again, not at once */
	/* The database clock (UTC) as the scans read it, and the last forward
	 * step: the instants in (leap_from, leap_to] (µs) were jumped over. */
	struct dbclock clock;
	int64_t leap_from, leap_to;
	bool rebase; /* the clock stepped back: the future next_run are computed again */
	/* What is in flight. */
	enum schedules_sent sent;
	int sent_row;
	struct schedules_step sent_step;
	char *sent_error; /* the message a SCHEDULES_MARK writes */
	/* Schedules whose job could not be inserted, tried again later. */
	struct schedules_hold *holds;
	int n_holds;
	struct spell scan_failing; /* scans fail (logged at the start and end of a spell) */
	uint64_t fired;            /* jobs this process enqueued */
	bool fired_new;            /* since the worker last asked: claim, the job may be ours */
};

void schedules_init(struct schedules *s);
void schedules_free(struct schedules *s);
/* Read the table at least every seconds without a wake-up (never more
 * often than SCHEDULES_POLL): the daemon's poll_interval, so that a
 * change nothing announced is seen by the same fallback as a job's
 * INSERT. A timer already set for later is brought forward. */
void schedules_set_poll(struct schedules *s, double seconds, double now);
/* A statement is due at monotonic time now. */
bool schedules_ready(const struct schedules *s, double now);
/* When schedules_ready turns true (monotonic), for the worker's timer while
 * its connection is idle; 0 while a statement is in flight. */
double schedules_wake_time(const struct schedules *s, double now);
/* Build the next statement into sb (schedules_ready was true). Returns true
 * when the statement opens a transaction that a failure leaves open. */
bool schedules_build(struct schedules *s, struct strbuf *sb, double now);
/* The reply to what schedules_build built. */
void schedules_read(struct schedules *s, const struct db_reply *r, double now);
/* A schedule row may have changed: scan soon (folded, SCHEDULES_MIN_GAP). */
void schedules_poke(struct schedules *s, double now);
/* The connection was lost or replaced: forget what was read. */
void schedules_reset(struct schedules *s, double now);

/* The step for row at database time now_us, or -1 with the reason the
 * row cannot run in err (bad expression or zone, a date that never
 * occurs, nothing to run). Pure but for reading time-zone files. */
KYU_MUSTCHECK int schedules_plan(const struct schedules_row *row, int64_t now_us,
				 struct schedules_step *st, char *err, size_t errlen);
/* The same, after a forward step of the clock jumped over the instants
 * in (leap_from, leap_to] (seconds; equal: none): those are missed, and
 * an instant before them is late by the time that really passed. */
KYU_MUSTCHECK int schedules_plan_leap(const struct schedules_row *row, int64_t now_us,
				      int64_t leap_from, int64_t leap_to, struct schedules_step *st,
				      char *err, size_t errlen);
/* The job id of an instant: cron:NAME:YYYY-MM-DDTHH:MM:SSZ. */
void schedules_job_id(struct strbuf *sb, const char *name, int64_t instant);
/* Statement builders, exposed for the unit tests. */
void schedules_scan_build(struct strbuf *sb);
void schedules_step_build(struct strbuf *sb, const char *name, const struct schedules_row *row,
			  const struct schedules_step *st);
void schedules_mark_build(struct strbuf *sb, const struct schedules_row *row, const char *error);
void schedules_rebase_build(struct strbuf *sb);

#endif
