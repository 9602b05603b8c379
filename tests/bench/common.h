/* Shared helpers for the kyu benchmark programs (limit, naive, floor, latency).
 *
 * Two ways to the database:
 * - raw Connector/C (bench_connect, bench_try, ...): the harness's own
 *   statements (filling the table, SHOW GLOBAL STATUS, the final check),
 *   the naive poller and the floor, whose SQL and sessions are their own;
 * - kyuworker's driver (bench_kyu_config, bench_kyu_connect): db.c's blocking
 *   db_query with kyud's session set-up, for the statements kyud ships
 *   (src/worker/store.c's builders), so that a bench times what kyud sends. */
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

/* The long options bench_db_option parses (getopt_long val 1), and their
 * lines of a usage text. */
#define BENCH_DB_LONGOPTS                                                                   \
	{ "socket", required_argument, 0, 1 }, { "host", required_argument, 0, 1 },        \
	{ "port", required_argument, 0, 1 }, { "database", required_argument, 0, 1 },      \
	{ "user", required_argument, 0, 1 }, { "password", required_argument, 0, 1 }
#define BENCH_DB_USAGE                                                        \
	"  --socket PATH | --host H --port P   server (default $KYU_DB_SOCKET)\n" \
	"  --database DB --user U --password PW (default kyu/kyu/kyu)\n"

/* Per-process counters, kept in memory shared with the parent. */
struct bench_stats {
	unsigned long long jobs;        /* rows claimed (and run) */
	unsigned long long claims;      /* claim statements that returned rows */
	unsigned long long empty;       /* claim statements that returned none */
	unsigned long long deadlocks;   /* ER_LOCK_DEADLOCK, retried (limit: and lock wait
					 * timeouts, counted together as kyud does) */
	unsigned long long lockwaits;   /* ER_LOCK_WAIT_TIMEOUT, retried (naive) */
	unsigned long long mismatch;    /* SELECT by owner returned != rows marked */
	unsigned long long rejected;    /* finished rows no longer ours (limit) */
	unsigned long long failed;      /* spawn failures or non-zero exits */
	double claim_s;                 /* wall time in claim statements */
	double finish_s;                /* wall time in finish statements */
	double cpu_s;                   /* the process's own CPU (user + system), not its
					 * children's: what the loop costs beside the jobs */
};

/* Global counters from SHOW GLOBAL STATUS. */
struct bench_gstatus {
	unsigned long long questions, com_select, com_update, com_update_multi, com_insert,
		com_delete, com_begin, com_commit, com_rollback, connections, row_lock_waits;
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
pid_t bench_spawn(char *cmd);
/* Busy CPU ticks (CLK_TCK) of the whole machine (/proc/stat: user, nice,
 * system, irq, softirq) and of one process by pid string (utime + stime);
 * -1 when unreadable (pid NULL or empty: not given). */
long long bench_box_ticks(void);
long long bench_pid_ticks(const char *pid);
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

/* ---- processes: fork, start together, wait ------------------------------ */

/* Anonymous memory shared with the children forked later, zeroed. */
void *bench_shared(size_t size);
/* Forks n children; child i runs fn(i, arg), which must call bench_ready
 * once it is set up and exit when done (returning from fn exits 0). Returns
 * when every child is ready; bench_go then lets them all start at once. */
void bench_spawn_team(long n, void (*fn)(long i, void *arg), void *arg);
/* In a child: report ready, then wait for bench_go. */
void bench_ready(void);
void bench_go(void);
/* Waits for every child. After timeout seconds (0: none) the children are
 * killed and 1 is returned; a child that fails otherwise is fatal. */
int bench_wait_team(long timeout);
/* Adds the counters of s to tot. */
void bench_stats_add(struct bench_stats *tot, const struct bench_stats *s);
/* Sleeps until the monotonic time t (bench_now). */
void bench_sleep_until(double t);

/* ---- kyuworker: the statements kyud ships (common_kyu.c) ------------------ */

struct kyu_config;
struct db;
/* Fills cfg through config_parse, as kyud would from a kyu.ini holding
 * db's [database] settings and the lines kyud for [kyud] (NULL: none):
 * every other key has kyud's default, and a value kyud would refuse is
 * refused (fatal). */
void bench_kyu_config(const struct bench_db *db, const char *kyud, struct kyu_config *cfg);
/* A blocking connection with kyud's session (db.c: READ COMMITTED,
 * multi-statements, found rows, its sql_mode and lock wait timeout); each
 * statement may take up to deadline seconds. Fatal if it cannot connect. */
struct db *bench_kyu_connect(const struct kyu_config *cfg, double deadline);
/* Runs sql on it and returns the reply (valid until the next statement).
 * Its fail is DB_OK, or DB_RETRY after a deadlock or lock wait timeout
 * that db.c's own retries did not get past (the caller decides what to
 * send again); any other failure is fatal. */
const struct db_reply *bench_kyu_query(struct db *db, const char *sql, size_t len);
/* Prints every result set of a reply, tab-separated. */
void bench_kyu_print(const struct db_reply *r);

#endif
