/*
 * naive: the one-job-at-a-time poller that kyu is designed not to be, as a
 * baseline.  Each process repeats:
 *
 *   START TRANSACTION;
 *   SELECT seq, command FROM kyu_jobs WHERE status = 'waiting'
 *     ORDER BY run_at LIMIT 1 FOR UPDATE;
 *   UPDATE kyu_jobs SET status = 'running', ... WHERE seq = ?;
 *   COMMIT;
 *   spawn the job, wait for it;
 *   UPDATE kyu_jobs SET status = 'succeeded', ... WHERE seq = ?;
 *
 * A deadlock or lock wait timeout rolls the transaction back and is retried
 * (and counted).  Its SQL, and its session (raw Connector/C, the server's
 * default isolation level), are its own on purpose: it is not kyud.  What
 * it shares with limit (connecting, filling the table, starting the
 * processes together, the counters) is in common.c.  Prints one line of
 * key=value figures.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

struct shared {
	long remaining;
	struct bench_stats st[];
};

static struct {
	struct bench_db db;
	long procs, jobs;
	double time_limit;
	int fill, as_command, capped;
} opt;

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: naive [options]\n" BENCH_DB_USAGE
		"  -p, --procs N        polling processes (1)\n"
		"  -n, --jobs N         jobs: inserted with --fill, else the most to run\n"
		"  -f, --fill           empty kyu_jobs and insert --jobs /bin/true jobs first\n"
		"  -c, --command        fill as `command` and run it via /bin/sh -c\n"
		"  -t, --time-limit S   stop after S seconds (the naive poller is O(rows) per job)\n");
	exit(code);
}

/* One claim transaction; returns 1 with *seq and *cmd set, 0 when nothing is
 * waiting, -1 to retry after a deadlock or lock wait timeout. */
static int claim(MYSQL *m, struct bench_stats *st, char *seq, size_t seqsz, char **cmd)
{
	static const char sel[] = "SELECT seq, command FROM kyu_jobs WHERE status = 'waiting'"
				  " ORDER BY run_at LIMIT 1 FOR UPDATE";
	char q[200];
	MYSQL_RES *r;
	MYSQL_ROW row;
	int n;

	if (bench_try(m, "START TRANSACTION", 17, st) != 0)
		goto retry;
	if (bench_try(m, sel, sizeof sel - 1, st) != 0)
		goto retry;
	if ((r = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "naive: select: %s\n", mysql_error(m));
		exit(1);
	}
	row = mysql_fetch_row(r);
	if (row == NULL) {
		mysql_free_result(r);
		bench_must(m, "COMMIT");
		return 0;
	}
	snprintf(seq, seqsz, "%s", row[0]);
	*cmd = row[1] ? strdup(row[1]) : NULL;
	mysql_free_result(r);
	n = snprintf(q, sizeof q, "UPDATE kyu_jobs SET status = 'running', attempts = attempts + 1,"
				  " started_at = NOW(6) WHERE seq = %s", seq);
	if (bench_try(m, q, (size_t)n, st) != 0 || bench_try(m, "COMMIT", 6, st) != 0) {
		free(*cmd);
		goto retry;
	}
	return 1;
retry:
	bench_must(m, "ROLLBACK");
	return -1;
}

static void worker(long idx, void *arg)
{
	static char tru[] = "true";
	struct shared *sh = arg;
	struct bench_stats *st = &sh->st[idx];
	MYSQL *m = bench_connect(&opt.db);
	double deadline = 0;

	bench_must(m, "SET SESSION innodb_lock_wait_timeout = 10");
	bench_ready();
	if (opt.time_limit > 0)
		deadline = bench_now() + opt.time_limit;
	for (;;) {
		char seq[32], q[200];
		char *cmd = NULL;
		int rc, status, n, code = -1;
		pid_t pid;
		double t;

		if (deadline > 0 && bench_now() >= deadline)
			break;
		if (opt.capped && __atomic_fetch_sub(&sh->remaining, 1, __ATOMIC_SEQ_CST) <= 0)
			break;
		t = bench_now();
		while ((rc = claim(m, st, seq, sizeof seq, &cmd)) < 0)
			;
		st->claim_s += bench_now() - t;
		if (rc == 0) {
			st->empty++;
			break;
		}
		st->claims++;
		st->jobs++;
		pid = bench_spawn(opt.as_command ? (cmd ? cmd : tru) : NULL);
		free(cmd);
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status))
			code = WEXITSTATUS(status);
		if (code != 0)
			st->failed++;
		n = snprintf(q, sizeof q, "UPDATE kyu_jobs SET status = '%s', exit_code = %d,"
					  " finished_at = NOW(6) WHERE seq = %s",
			     code == 0 ? "succeeded" : "failed", code, seq);
		t = bench_now();
		while (bench_try(m, q, (size_t)n, st) != 0)
			;
		st->finish_s += bench_now() - t;
	}
	mysql_close(m);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		BENCH_DB_LONGOPTS,
		{ "procs", required_argument, 0, 'p' }, { "jobs", required_argument, 0, 'n' },
		{ "fill", no_argument, 0, 'f' }, { "command", no_argument, 0, 'c' },
		{ "time-limit", required_argument, 0, 't' }, { "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct bench_gstatus g0, g1;
	struct bench_stats tot = { 0 };
	struct shared *sh;
	MYSQL *m;
	int ch, li;
	long i;
	double t0, secs;

	bench_db_defaults(&opt.db);
	opt.procs = 1;
	opt.jobs = -1;
	while ((ch = getopt_long(argc, argv, "p:n:fct:h", lo, &li)) != -1) {
		switch (ch) {
		case 1: bench_db_option(&opt.db, lo[li].name, optarg); break;
		case 'p': opt.procs = atol(optarg); break;
		case 'n': opt.jobs = atol(optarg); break;
		case 'f': opt.fill = 1; break;
		case 'c': opt.as_command = 1; break;
		case 't': opt.time_limit = atof(optarg); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || opt.procs < 1 || opt.procs > 256 || (opt.fill && opt.jobs < 0))
		usage(stderr, 2);

	m = bench_connect(&opt.db);
	if (opt.fill)
		bench_fill(m, opt.jobs, opt.as_command);
	sh = bench_shared(sizeof *sh + (size_t)opt.procs * sizeof sh->st[0]);
	opt.capped = opt.jobs >= 0;
	sh->remaining = opt.jobs;
	bench_spawn_team(opt.procs, worker, sh);
	bench_status(m, &g0);
	t0 = bench_now();
	bench_go();
	bench_wait_team(0);
	secs = bench_now() - t0;
	bench_status(m, &g1);
	for (i = 0; i < opt.procs; i++)
		bench_stats_add(&tot, &sh->st[i]);
	printf("naive procs=%ld mode=%s jobs=%llu secs=%.3f jobs_per_s=%.0f deadlocks=%llu"
	       " lockwaits=%llu failed=%llu claim_ms=%.3f finish_ms=%.3f",
	       opt.procs, opt.as_command ? "command" : "argv", tot.jobs, secs,
	       secs > 0 ? (double)tot.jobs / secs : 0.0, tot.deadlocks, tot.lockwaits,
	       tot.failed, tot.claims ? tot.claim_s * 1000 / (double)tot.claims : 0.0,
	       tot.claims ? tot.finish_s * 1000 / (double)tot.claims : 0.0);
	bench_report_tail(m, &g0, &g1, tot.jobs, 1);
	printf("\n");
	mysql_close(m);
	return 0;
}
