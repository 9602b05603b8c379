/* Shared helpers for the kyu benchmark programs (limit, naive). */
#ifndef KYU_BENCH_COMMON_H
#define KYU_BENCH_COMMON_H

#include <stddef.h>
#include <sys/types.h>
#include <mysql.h>

#define BENCH_ER_LOCK_WAIT_TIMEOUT 1205
#define BENCH_ER_LOCK_DEADLOCK 1213

struct bench_db {
	const char *host;
	unsigned port;
	const char *socket;
	const char *user;
	const char *password;
	const char *database;
};

/* Per-process counters, kept in memory shared with the parent. */
struct bench_stats {
	unsigned long long jobs;        /* rows claimed (and run) */
	unsigned long long claims;      /* claim statements that returned rows */
	unsigned long long empty;       /* claim statements that returned none */
	unsigned long long deadlocks;   /* ER_LOCK_DEADLOCK, retried */
	unsigned long long lockwaits;   /* ER_LOCK_WAIT_TIMEOUT, retried */
	unsigned long long mismatch;    /* SELECT by owner returned != rows marked */
	unsigned long long failed;      /* spawn failures or non-zero exits */
	double claim_s;                 /* wall time in claim UPDATE + SELECT */
	double finish_s;                /* wall time in finish UPDATE */
};

/* Global counters from SHOW GLOBAL STATUS. */
struct bench_gstatus {
	unsigned long long questions, com_select, com_update, com_update_multi, com_insert,
		com_delete, com_begin, com_commit, com_rollback, connections;
};

double bench_now(void);
/* Parses a --host/--port/--socket/--database/--user/--password option; returns 1 if it was one. */
int bench_db_option(struct bench_db *db, const char *name, const char *value);
void bench_db_defaults(struct bench_db *db);
MYSQL *bench_connect(const struct bench_db *db);
/* Runs one statement. Returns 0, or the error number for a deadlock or lock wait
 * timeout (which the caller retries); any other error is fatal. */
unsigned bench_try(MYSQL *m, const char *sql, size_t len, struct bench_stats *st);
/* Like bench_try but fails on any error. */
void bench_must(MYSQL *m, const char *sql);
unsigned long long bench_scalar(MYSQL *m, const char *sql);
void bench_status(MYSQL *m, struct bench_gstatus *g);
/* Empties kyu_jobs and inserts n /bin/true jobs (as command when as_command, else argv). */
void bench_fill(MYSQL *m, long n, int as_command);
/* Starts /bin/true, or /bin/sh -c cmd when cmd is non-NULL. Returns pid or -1. */
pid_t bench_spawn(const char *cmd);
/* Prints the status-delta part of a result line (per job). */
void bench_report_deltas(const struct bench_gstatus *a, const struct bench_gstatus *b,
			 unsigned long long jobs, unsigned long long own_queries);
/* Prints the status deltas and a verification of the whole table (a full
 * scan: not for a table of millions of rows). */
void bench_report_tail(MYSQL *m, const struct bench_gstatus *a,
		       const struct bench_gstatus *b, unsigned long long jobs,
		       unsigned long long own_queries);

/* Sorts v[0..n) ascending (for bench_pct). */
void bench_sort(double *v, size_t n);
/* Nearest-rank percentile p (0..100) of sorted v[0..n); 0 when n == 0. */
double bench_pct(const double *v, size_t n, double p);

/* A growable string buffer for building statements. */
struct bench_buf {
	char *p;
	size_t len, cap;
};
void bench_buf_printf(struct bench_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
