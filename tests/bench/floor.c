/*
 * floor: the cheapest queue table there is, as the floor of what a job can
 * cost the database (issue 40).  The table is seed 000's PerfectQueue shape
 * (id primary key, timeout, data, created_at, owner; one secondary index,
 * on timeout), in a table of its own (floor_queue), not kyu_jobs.  Each
 * process repeats, autocommit, READ COMMITTED (as kyud's sessions):
 *
 *   mark:   UPDATE floor_queue SET timeout = T, owner = CONNECTION_ID()
 *             WHERE timeout <= UNIX_TIMESTAMP() AND created_at IS NOT NULL
 *             ORDER BY timeout LIMIT batch
 *           (T = now + 300, the seed's lease; a claim of the seed's
 *           mark-then-select strategy);
 *   select: SELECT id, data FROM floor_queue
 *             WHERE timeout = T AND owner = CONNECTION_ID();
 *   run:    posix_spawn /bin/true for each row, `inflight` at once;
 *   finish: the whole batch by id, as the seed does:
 *             UPDATE floor_queue SET timeout = UNIX_TIMESTAMP() + 720,
 *               created_at = NULL WHERE id IN (...)
 *           or, with --finish delete, DELETE FROM floor_queue WHERE id IN (...).
 *
 * The seed's retention DELETE of finished rows (timeout <= now and
 * created_at IS NULL) finds nothing within a run (720 s), as kyud's finds
 * nothing under its retention: neither is in the figures.
 *
 * Prints one line of key=value figures: jobs/s by the wall clock of the run,
 * and CPU ms per job of mariadbd (BENCH_DB_PID), of the machine and of the
 * loop's own processes.  Never a pass/fail test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	struct bench_stats st[1];
};

static struct {
	struct bench_db db;
	long procs, jobs, batch, inflight, timeout;
	int delete_finish, fill_only, no_fill;
} opt;

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: floor [options]\n" BENCH_DB_USAGE
		"  -p, --procs N        claiming processes (1)\n"
		"  -n, --jobs N         rows put into a fresh floor_queue first (10000)\n"
		"  -b, --batch N        rows per claim and per finish (100)\n"
		"  -k, --inflight N     jobs running at once per process (4)\n"
		"  --finish update|delete  the seed's UPDATE (default) or a DELETE by id\n"
		"  --timeout S          kill the processes after S seconds (600)\n"
		"  --fill-only          create and fill floor_queue, run nothing\n"
		"  --no-fill            run on the floor_queue there is (after --fill-only)\n");
	exit(code);
}

static long num(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || v < 0) {
		fprintf(stderr, "floor: %s: not a count: %s\n", what, s);
		exit(2);
	}
	return v;
}

static void reap(long *inflight, struct bench_stats *st)
{
	int status;
	if (waitpid(-1, &status, 0) < 0) {
		perror("floor: waitpid");
		exit(1);
	}
	(*inflight)--;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		st->failed++;
}

/* Claims up to a batch; returns the ids (quoted, comma-separated, for IN)
 * in *ids and their count. */
static long claim(MYSQL *m, struct bench_stats *st, struct bench_buf *ids)
{
	char q[400];
	long long t = (long long)time(NULL) + 300;
	MYSQL_RES *r;
	MYSQL_ROW row;
	long n = 0;
	int len;

	len = snprintf(q, sizeof q,
		       "UPDATE floor_queue SET timeout = %lld, owner = CONNECTION_ID()"
		       " WHERE timeout <= UNIX_TIMESTAMP() AND created_at IS NOT NULL"
		       " ORDER BY timeout LIMIT %ld",
		       t, opt.batch);
	while (bench_try(m, q, (size_t)len, st) != 0)
		;
	if (mysql_affected_rows(m) == 0)
		return 0;
	len = snprintf(q, sizeof q,
		       "SELECT id, data FROM floor_queue WHERE timeout = %lld"
		       " AND owner = CONNECTION_ID()",
		       t);
	if (mysql_real_query(m, q, (unsigned long)len) != 0 || (r = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "floor: select: %s\n", mysql_error(m));
		exit(1);
	}
	ids->len = 0;
	while ((row = mysql_fetch_row(r)) != NULL) {
		/* ids are 'job.N': nothing to escape */
		bench_buf_printf(ids, "%s'%s'", n ? "," : "", row[0]);
		n++;
	}
	mysql_free_result(r);
	return n;
}

static void worker(long idx, void *arg)
{
	struct shared *sh = arg;
	struct bench_stats *st = &sh->st[idx];
	MYSQL *m = bench_connect(&opt.db);
	struct bench_buf ids = { 0 }, fin = { 0 };
	struct rusage ru;

	bench_must(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	bench_ready();
	for (;;) {
		long n, i, running = 0;
		double t = bench_now();

		n = claim(m, st, &ids);
		st->claim_s += bench_now() - t;
		if (n == 0) {
			st->empty++;
			break;
		}
		st->claims++;
		st->jobs += (unsigned long long)n;
		for (i = 0; i < n; i++) {
			if (running >= opt.inflight && opt.inflight > 0)
				reap(&running, st);
			if (bench_spawn(NULL) < 0)
				st->failed++;
			else
				running++;
		}
		while (running > 0)
			reap(&running, st);
		fin.len = 0;
		if (opt.delete_finish)
			bench_buf_printf(&fin, "DELETE FROM floor_queue WHERE id IN (%s)", ids.p);
		else
			bench_buf_printf(&fin, "UPDATE floor_queue SET timeout = UNIX_TIMESTAMP() + 720,"
					       " created_at = NULL WHERE id IN (%s)", ids.p);
		t = bench_now();
		while (bench_try(m, fin.p, fin.len, st) != 0)
			;
		if ((long)mysql_affected_rows(m) != n)
			st->rejected++;
		st->finish_s += bench_now() - t;
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		st->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
			    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	free(ids.p);
	free(fin.p);
	mysql_close(m);
}

static void fill(MYSQL *m)
{
	char q[400];
	bench_must(m, "DROP TABLE IF EXISTS floor_queue");
	/* The seed's columns, INT seconds as it has them. */
	bench_must(m, "CREATE TABLE floor_queue ("
		      " id VARCHAR(255) NOT NULL,"
		      " timeout INT NOT NULL,"
		      " data LONGBLOB NOT NULL,"
		      " created_at INT,"
		      " owner BIGINT UNSIGNED NOT NULL DEFAULT 0,"
		      " PRIMARY KEY (id),"
		      " KEY index_queue_on_timeout (timeout)"
		      ") ENGINE = InnoDB");
	if (opt.jobs == 0)
		return;
	snprintf(q, sizeof q,
		 "INSERT INTO floor_queue (id, timeout, data, created_at)"
		 " SELECT CONCAT('job.', seq), UNIX_TIMESTAMP() - 1, '[\"/bin/true\"]',"
		 " UNIX_TIMESTAMP() FROM seq_1_to_%ld",
		 opt.jobs);
	bench_must(m, q);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		BENCH_DB_LONGOPTS,
		{ "procs", required_argument, 0, 'p' }, { "jobs", required_argument, 0, 'n' },
		{ "batch", required_argument, 0, 'b' }, { "inflight", required_argument, 0, 'k' },
		{ "finish", required_argument, 0, 2 },  { "timeout", required_argument, 0, 3 },
		{ "fill-only", no_argument, 0, 4 },     { "no-fill", no_argument, 0, 5 },
		{ "help", no_argument, 0, 'h' },	{ 0, 0, 0, 0 }
	};
	struct bench_gstatus g0, g1;
	struct bench_stats tot = { 0 };
	struct shared *sh;
	MYSQL *m;
	int ch, li, timed_out;
	long i;
	long long box0, box1, db0, db1;
	double t0, secs, hz = (double)sysconf(_SC_CLK_TCK), n;

	bench_db_defaults(&opt.db);
	opt.procs = 1;
	opt.jobs = 10000;
	opt.batch = 100;
	opt.inflight = 4;
	opt.timeout = 600;
	while ((ch = getopt_long(argc, argv, "p:n:b:k:h", lo, &li)) != -1) {
		switch (ch) {
		case 1: bench_db_option(&opt.db, lo[li].name, optarg); break;
		case 2:
			if (strcmp(optarg, "delete") != 0 && strcmp(optarg, "update") != 0)
				usage(stderr, 2);
			opt.delete_finish = strcmp(optarg, "delete") == 0;
			break;
		case 3: opt.timeout = num(optarg, "--timeout"); break;
		case 4: opt.fill_only = 1; break;
		case 5: opt.no_fill = 1; break;
		case 'p': opt.procs = num(optarg, "--procs"); break;
		case 'n': opt.jobs = num(optarg, "--jobs"); break;
		case 'b': opt.batch = num(optarg, "--batch"); break;
		case 'k': opt.inflight = num(optarg, "--inflight"); break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || opt.procs < 1 || opt.procs > 256 || opt.batch < 1 || opt.batch > 10000)
		usage(stderr, 2);

	m = bench_connect(&opt.db);
	if (!opt.no_fill)
		fill(m);
	if (opt.fill_only) {
		mysql_close(m);
		return 0;
	}
	sh = bench_shared(sizeof *sh + (size_t)opt.procs * sizeof sh->st[0]);
	bench_spawn_team(opt.procs, worker, sh);
	bench_status(m, &g0);
	box0 = bench_box_ticks();
	db0 = bench_pid_ticks(getenv("BENCH_DB_PID"));
	t0 = bench_now();
	bench_go();
	timed_out = bench_wait_team(opt.timeout);
	secs = bench_now() - t0;
	box1 = bench_box_ticks();
	db1 = bench_pid_ticks(getenv("BENCH_DB_PID"));
	bench_status(m, &g1);
	for (i = 0; i < opt.procs; i++)
		bench_stats_add(&tot, &sh->st[i]);
	n = tot.jobs ? (double)tot.jobs : 1;
	printf("floor procs=%ld batch=%ld inflight=%ld finish=%s timeout=%d jobs=%llu secs=%.3f"
	       " jobs_per_s=%.0f claims=%llu deadlocks=%llu lockwaits=%llu failed=%llu"
	       " rejected=%llu claim_ms=%.3f finish_ms=%.3f own_cpu_ms_per_job=%.3f",
	       opt.procs, opt.batch, opt.inflight, opt.delete_finish ? "delete" : "update",
	       timed_out, tot.jobs, secs, secs > 0 ? (double)tot.jobs / secs : 0.0, tot.claims,
	       tot.deadlocks, tot.lockwaits, tot.failed, tot.rejected,
	       tot.claims ? tot.claim_s * 1000 / (double)tot.claims : 0.0,
	       tot.claims ? tot.finish_s * 1000 / (double)tot.claims : 0.0, tot.cpu_s * 1000 / n);
	if (box0 >= 0 && box1 >= 0)
		printf(" box_cpu_ms_per_job=%.3f", (double)(box1 - box0) * 1000 / hz / n);
	if (db0 >= 0 && db1 >= 0)
		printf(" db_cpu_ms_per_job=%.3f", (double)(db1 - db0) * 1000 / hz / n);
	bench_report_deltas(&g0, &g1, tot.jobs, 1);
	printf(" left=%llu\n",
	       bench_scalar(m, "SELECT COUNT(*) FROM floor_queue WHERE created_at IS NOT NULL"));
	mysql_close(m);
	return 0;
}
