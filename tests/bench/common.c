/* Shared helpers for the kyu benchmark programs. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double bench_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void bench_db_defaults(struct bench_db *db)
{
	const char *s;
	memset(db, 0, sizeof *db);
	db->host = "localhost";
	db->port = 3306;
	db->socket = getenv("KYU_DB_SOCKET");
	db->user = "kyu";
	db->password = "kyu";
	db->database = "kyu";
	if ((s = getenv("KYU_DB_PORT")) != NULL)
		db->port = (unsigned)atoi(s);
}

int bench_db_option(struct bench_db *db, const char *name, const char *value)
{
	if (strcmp(name, "host") == 0)
		db->host = value;
	else if (strcmp(name, "port") == 0)
		db->port = (unsigned)atoi(value);
	else if (strcmp(name, "socket") == 0)
		db->socket = value;
	else if (strcmp(name, "database") == 0)
		db->database = value;
	else if (strcmp(name, "user") == 0)
		db->user = value;
	else if (strcmp(name, "password") == 0)
		db->password = value;
	else
		return 0;
	return 1;
}

MYSQL *bench_connect(const struct bench_db *db)
{
	MYSQL *m = mysql_init(NULL);
	const char *sock = db->socket && *db->socket ? db->socket : NULL;
	if (m == NULL) {
		fprintf(stderr, "bench: mysql_init failed\n");
		exit(1);
	}
	if (mysql_real_connect(m, sock ? NULL : db->host, db->user, db->password,
			       db->database, sock ? 0 : db->port, sock, 0) == NULL) {
		fprintf(stderr, "bench: connect: %s\n", mysql_error(m));
		exit(1);
	}
	return m;
}

unsigned bench_try(MYSQL *m, const char *sql, size_t len, struct bench_stats *st)
{
	unsigned e;
	if (mysql_real_query(m, sql, (unsigned long)len) == 0)
		return 0;
	e = mysql_errno(m);
	if (e == BENCH_ER_LOCK_DEADLOCK || e == BENCH_ER_LOCK_WAIT_TIMEOUT) {
		if (st != NULL) {
			if (e == BENCH_ER_LOCK_DEADLOCK)
				st->deadlocks++;
			else
				st->lockwaits++;
		}
		return e;
	}
	fprintf(stderr, "bench: query failed (%u): %s\n  %.200s\n", e, mysql_error(m), sql);
	exit(1);
}

void bench_must(MYSQL *m, const char *sql)
{
	MYSQL_RES *r;
	if (mysql_query(m, sql) != 0) {
		fprintf(stderr, "bench: query failed: %s\n  %.200s\n", mysql_error(m), sql);
		exit(1);
	}
	if ((r = mysql_store_result(m)) != NULL)
		mysql_free_result(r);
}

unsigned long long bench_scalar(MYSQL *m, const char *sql)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	unsigned long long v = 0;
	if (mysql_query(m, sql) != 0 || (r = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "bench: query failed: %s\n  %.200s\n", mysql_error(m), sql);
		exit(1);
	}
	if ((row = mysql_fetch_row(r)) != NULL && row[0] != NULL)
		v = strtoull(row[0], NULL, 10);
	mysql_free_result(r);
	return v;
}

void bench_status(MYSQL *m, struct bench_gstatus *g)
{
	static const struct {
		const char *name;
		size_t off;
	} keys[] = {
		{ "Questions", offsetof(struct bench_gstatus, questions) },
		{ "Com_select", offsetof(struct bench_gstatus, com_select) },
		{ "Com_update", offsetof(struct bench_gstatus, com_update) },
		{ "Com_update_multi", offsetof(struct bench_gstatus, com_update_multi) },
		{ "Com_insert", offsetof(struct bench_gstatus, com_insert) },
		{ "Com_delete", offsetof(struct bench_gstatus, com_delete) },
		{ "Com_begin", offsetof(struct bench_gstatus, com_begin) },
		{ "Com_commit", offsetof(struct bench_gstatus, com_commit) },
		{ "Com_rollback", offsetof(struct bench_gstatus, com_rollback) },
		{ "Connections", offsetof(struct bench_gstatus, connections) },
		{ "Innodb_row_lock_waits", offsetof(struct bench_gstatus, row_lock_waits) },
	};
	MYSQL_RES *r;
	MYSQL_ROW row;
	memset(g, 0, sizeof *g);
	if (mysql_query(m, "SHOW GLOBAL STATUS WHERE Variable_name IN ('Questions',"
			   "'Com_select','Com_update','Com_update_multi','Com_insert','Com_delete','Com_begin',"
			   "'Com_commit','Com_rollback','Connections','Innodb_row_lock_waits')") != 0 ||
	    (r = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "bench: SHOW GLOBAL STATUS: %s\n", mysql_error(m));
		exit(1);
	}
	while ((row = mysql_fetch_row(r)) != NULL) {
		size_t i;
		for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (strcasecmp(row[0], keys[i].name) == 0)
				*(unsigned long long *)(void *)((char *)g + keys[i].off) =
					strtoull(row[1], NULL, 10);
	}
	mysql_free_result(r);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void bench_sort(double *v, size_t n)
{
	if (n > 1)
		qsort(v, n, sizeof *v, cmp_double);
}

double bench_pct(const double *v, size_t n, double p)
{
	size_t k;
	if (n == 0)
		return 0;
	k = (size_t)(p / 100.0 * (double)n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

void bench_buf_printf(struct bench_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			fprintf(stderr, "bench: vsnprintf failed\n");
			exit(1);
		}
		if (b->p != NULL && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		if ((b->p = realloc(b->p, b->cap)) == NULL) {
			fprintf(stderr, "bench: out of memory\n");
			exit(1);
		}
	}
}

void bench_fill(MYSQL *m, long n, int as_command)
{
	struct bench_buf b = { 0 };
	long i = 0;
	bench_must(m, "TRUNCATE TABLE kyu_jobs");
	while (i < n) {
		long k;
		b.len = 0;
		bench_buf_printf(&b, "INSERT INTO kyu_jobs (%s) VALUES ",
				 as_command ? "command" : "argv");
		for (k = 0; k < 1000 && i < n; k++, i++)
			bench_buf_printf(&b, "%s('%s')", k ? "," : "",
					 as_command ? "/bin/true" : "[\"/bin/true\"]");
		if (mysql_real_query(m, b.p, (unsigned long)b.len) != 0) {
			fprintf(stderr, "bench: fill: %s\n", mysql_error(m));
			exit(1);
		}
	}
	free(b.p);
}

pid_t bench_spawn(char *cmd)
{
	static char sh[] = "/bin/sh", dash_c[] = "-c", tru[] = "/bin/true";
	char *argv[4];
	pid_t pid;
	int rc;
	if (cmd != NULL) {
		argv[0] = sh;
		argv[1] = dash_c;
		argv[2] = cmd;
		argv[3] = NULL;
	} else {
		argv[0] = tru;
		argv[1] = NULL;
	}
	rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return pid;
}

/* Busy CPU ticks of the whole machine (/proc/stat: user, nice, system, irq,
 * softirq) and of one process (utime + stime), for the CPU per job of the
 * run window alone, without the --fill before it and the check after it. */
long long bench_box_ticks(void)
{
	long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	if (!f)
		return -1;
	if (fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
		   &v[6]) != 7)
		v[0] = -1;
	fclose(f);
	return v[0] < 0 ? -1 : v[0] + v[1] + v[2] + v[5] + v[6];
}

long long bench_pid_ticks(const char *pid)
{
	char path[64], buf[1024];
	long long ut = 0, st = 0;
	size_t n;
	FILE *f;
	char *p;

	if (!pid || !*pid)
		return -1;
	snprintf(path, sizeof path, "/proc/%s/stat", pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	/* Fields 14 and 15, counted after the command name's closing ')'. */
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lld %lld", &ut, &st) != 2)
		return -1;
	return ut + st;
}

void bench_report_deltas(const struct bench_gstatus *a, const struct bench_gstatus *b,
			 unsigned long long jobs, unsigned long long own_queries)
{
	double j = jobs ? (double)jobs : 1.0;
	/* own_queries: statements this parent sent between the two snapshots,
	 * including the second SHOW GLOBAL STATUS. */
	printf(" q_per_job=%.3f upd_per_job=%.3f sel_per_job=%.3f",
	       (double)(b->questions - a->questions - own_queries) / j,
	       (double)(b->com_update + b->com_update_multi - a->com_update - a->com_update_multi) / j,
	       (double)(b->com_select - a->com_select) / j);
}

void bench_report_tail(MYSQL *m, const struct bench_gstatus *a,
		       const struct bench_gstatus *b, unsigned long long jobs,
		       unsigned long long own_queries)
{
	MYSQL_RES *r;
	MYSQL_ROW row;
	bench_report_deltas(a, b, jobs, own_queries);
	if (mysql_query(m, "SELECT COUNT(*), SUM(status='succeeded'), SUM(attempts=1),"
			   " SUM(attempts>1), SUM(status='waiting'),"
			   " TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at))"
			   " FROM kyu_jobs") != 0 ||
	    (r = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "bench: verify: %s\n", mysql_error(m));
		exit(1);
	}
	row = mysql_fetch_row(r);
	if (row != NULL) {
		unsigned long long done = row[1] ? strtoull(row[1], NULL, 10) : 0;
		double span = row[5] ? strtod(row[5], NULL) / 1e6 : 0;
		printf(" rows=%s succeeded=%s attempts1=%s double_claims=%s waiting=%s"
		       " db_span_s=%.3f db_jobs_per_s=%.0f",
		       row[0] ? row[0] : "0", row[1] ? row[1] : "0", row[2] ? row[2] : "0",
		       row[3] ? row[3] : "0", row[4] ? row[4] : "0", span,
		       span > 0 ? (double)done / span : 0.0);
	}
	mysql_free_result(r);
}

/* ---- processes ---------------------------------------------------------- */

static struct {
	pid_t *pids;
	long n;
	int ready[2], go[2];
} team;

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

void *bench_shared(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("bench: mmap");
		exit(1);
	}
	memset(p, 0, size);
	return p;
}

void bench_spawn_team(long n, void (*fn)(long i, void *arg), void *arg)
{
	long i;
	if (pipe(team.ready) != 0 || pipe(team.go) != 0) {
		perror("bench: pipe");
		exit(1);
	}
	team.n = n;
	team.pids = calloc((size_t)n, sizeof *team.pids);
	if (team.pids == NULL) {
		fprintf(stderr, "bench: out of memory\n");
		exit(1);
	}
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("bench: fork");
			exit(1);
		}
		if (p == 0) {
			close(team.ready[0]);
			close(team.go[1]);
			fn(i, arg);
			exit(0);
		}
		team.pids[i] = p;
	}
	close(team.ready[1]);
	close(team.go[0]);
	for (i = 0; i < n; i++) {
		char c;
		if (read(team.ready[0], &c, 1) != 1) {
			fprintf(stderr, "bench: a worker failed to start\n");
			exit(1);
		}
	}
}

void bench_ready(void)
{
	char c;
	if (write(team.ready[1], "r", 1) != 1 || read(team.go[0], &c, 1) < 0)
		exit(1);
}

void bench_go(void)
{
	close(team.go[1]);
}

int bench_wait_team(long timeout)
{
	struct sigaction sa;
	long i;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_alarm; /* no SA_RESTART: wait() returns EINTR */
	sigaction(SIGALRM, &sa, NULL);
	if (timeout > 0)
		alarm((unsigned)timeout);
	for (i = 0; i < team.n;) {
		int status;
		pid_t p = wait(&status);
		if (p < 0 && errno == EINTR && timed_out == 1) {
			/* Stuck (e.g. a lock livelock): stop our own children. */
			long j;
			for (j = 0; j < team.n; j++)
				kill(team.pids[j], SIGKILL);
			timed_out = 2;
			continue;
		}
		if (p < 0 && errno == EINTR)
			continue;
		if (p < 0) {
			perror("bench: wait");
			exit(1);
		}
		i++;
		if (timed_out != 2 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
			fprintf(stderr, "bench: a worker failed\n");
			exit(1);
		}
	}
	alarm(0);
	free(team.pids);
	team.pids = NULL;
	close(team.ready[0]);
	return timed_out != 0;
}

void bench_stats_add(struct bench_stats *tot, const struct bench_stats *s)
{
	tot->jobs += s->jobs;
	tot->claims += s->claims;
	tot->empty += s->empty;
	tot->deadlocks += s->deadlocks;
	tot->lockwaits += s->lockwaits;
	tot->mismatch += s->mismatch;
	tot->rejected += s->rejected;
	tot->failed += s->failed;
	tot->claim_s += s->claim_s;
	tot->finish_s += s->finish_s;
	tot->cpu_s += s->cpu_s;
}

void bench_sleep_until(double t)
{
	double now = bench_now();
	struct timespec ts;
	if (t <= now)
		return;
	ts.tv_sec = (time_t)(t - now);
	ts.tv_nsec = (long)((t - now - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
