/*
 * limit: the fastest loop that does only what running queued jobs
 * unavoidably needs, against kyu's own table, with the statements kyud
 * ships.  Each process repeats:
 *
 *   claim:  kyud's claim (src/worker/store.c, store_claim_build: the UPDATE that
 *           marks up to `batch` due rows with a fresh token, shape from
 *           --shape as [kyud] claim, and the SELECT of what it marked, in
 *           one round trip), read with store_claim_read;
 *   run:    posix_spawn /bin/true (or /bin/sh -c command) for each row,
 *           keeping `inflight` children at once, and reap them all;
 *   finish: kyud's UPDATE of plain successes for the whole batch
 *           (store_finish_build), read with store_finish_read; with --ride
 *           it goes in front of the next claim instead, in the claim's
 *           round trip, as kyud sends it under load.
 *
 * With --inflight 0 nothing is spawned: that isolates the database part
 * and is how the claim shapes are compared under contention.  With --fill
 * the table is emptied and refilled first and, at the end, every row is
 * checked to have been claimed exactly once (attempts = 1).
 *
 * For the scale measurements (tests/bench/run.sh, case scale): --lat keeps
 * the time of every claim and prints percentiles; --rate paces the claims;
 * --delete-batch adds one process that runs kyud's retention delete
 * (store_cleanup_build: GET_LOCK, DELETE ... LIMIT cleanup_batch, release,
 * one round trip) back to back until no expired row is left, and the
 * claimers stop when it is done; --no-verify skips the final whole-table
 * check.
 *
 * Sending: kyuworker's own driver (src/common/db.c, blocking db_query), not raw
 * Connector/C.  What a statement does depends on the session it runs in as
 * much as on its text: db.c connects with CLIENT_MULTI_STATEMENTS (the claim
 * is UPDATE; SELECT in one round trip) and CLIENT_FOUND_ROWS (the affected
 * counts store_claim_read and store_finish_read rely on), sets READ
 * COMMITTED, kyud's sql_mode, a 3 s lock wait and utf8mb4, and sends a
 * statement whose first step deadlocked again at once (up to 5 times).  A
 * raw connection would need copies of all that, which is the drift this
 * program must not have; and the readers take db.c's struct db_reply
 * anyway.  What db.c hides costs little here: deadlocks and lock wait
 * timeouts are counted together (db_deadlocks, as kyud logs them), and a
 * round trip includes db.c's poll() wake-ups on Connector/C's non-blocking
 * API, which kyud pays as well.  The harness's own statements (filling the
 * table, SHOW GLOBAL STATUS, the final check) are not kyud's and stay on
 * raw Connector/C (common.c).
 *
 * Prints one line of key=value figures.  Never a pass/fail test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/config.h"
#include "common/db.h"
#include "common/util.h"
#include "worker/store.h"

static const char *const shape_names[] = { "plain", "join", "skip_locked" };

struct shared {
	long remaining;         /* jobs still to claim (when capped) */
	int delete_done;        /* the deleter has finished */
	unsigned long long del_rows, del_stmts;
	double del_secs, del_max_ms;
	long nlat;              /* claim times recorded in lat[] */
	struct bench_stats st[];
};

/* Claim times in ms (--lat), shared by all claimers. */
static double *lat;
static long lat_cap;

static struct {
	struct bench_db db;
	long batch, inflight, procs, jobs, lease, lock_wait, timeout, delete_batch, retention;
	long partitions;
	const char *drop_partition;
	int history;
	double time_limit, rate;
	const char *isolation, *shape;
	int fill, as_command, explain, capped, lat, no_verify, ride;
} opt;

/* kyud's configuration with this run's lease, shape and retention: what
 * the store_*_build functions read. */
static struct kyu_config cfg;
static char host[256];

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: limit [options]\n" BENCH_DB_USAGE
		"  -b, --batch N        rows per claim (100)\n"
		"  -k, --inflight N     children running at once per process; 0 = claim and\n"
		"                       finish only, spawn nothing (4)\n"
		"  -p, --procs N        claiming processes (1)\n"
		"  -n, --jobs N         jobs: inserted with --fill, else the most to claim\n"
		"                       (default: all due rows)\n"
		"  -s, --shape S        claim statement, as [kyud] claim: plain | join |\n"
		"                       skip_locked (kyud's default)\n"
		"  -f, --fill           empty kyu_jobs and insert --jobs /bin/true jobs first\n"
		"  -c, --command        fill as `command` and run it via /bin/sh -c\n"
		"                       (default: argv, run /bin/true directly)\n"
		"  -t, --time-limit S   stop claiming after S seconds\n"
		"      --ride           send each batch's finish in front of the next claim,\n"
		"                       in its round trip (default: a round trip of its own)\n"
		"      --lease S        [kyud] lease of the claim (kyud's default)\n"
		"      --lock-wait S    session innodb_lock_wait_timeout (kyud's: 3)\n"
		"      --isolation L    rc | rr | server: session isolation level (rc, kyud's)\n"
		"      --timeout S      kill the claimers after S seconds and report (120)\n"
		"      --partitions P   the seeds' partitioned claim: rows carry part = CRC32(id)\n"
		"                       %% P (a column and index added for the run, dropped after),\n"
		"                       claimer i claims only in partition i %% P and moves to\n"
		"                       the next one when its own is empty\n"
		"      --history        each finish also moves its rows to kyu_jobs_history\n"
		"                       (INSERT ... SELECT + DELETE in the finish's round trip),\n"
		"                       the history-table alternative to the retention delete\n"
		"      --drop-partition P  instead of the retention delete: one process waits\n"
		"                       2 s, runs ALTER TABLE kyu_jobs_history DROP PARTITION P,\n"
		"                       waits 2 s more; the claimers stop then\n"
		"      --explain        print the EXPLAIN of the claim statements and exit\n"
		"      --lat            record every claim's time; print percentiles\n"
		"      --rate R         at most R claims per second per process (0: flat out)\n"
		"      --delete-batch N also run kyud's retention delete with [kyud]\n"
		"                       cleanup_batch = N back to back until it deletes fewer\n"
		"                       rows; claimers stop then\n"
		"      --retention S    [kyud] retention of that delete (86400)\n"
		"      --no-verify      skip the whole-table check at the end (big tables)\n");
	exit(code);
}

/* A connection with kyud's session, then this run's isolation and lock
 * wait where they differ from kyud's. */
static struct db *session(void)
{
	struct db *db = bench_kyu_connect(&cfg, (double)(opt.timeout > 0 ? opt.timeout : 3600));
	char q[128];
	const char *iso = NULL;

	if (opt.lock_wait > 0) {
		snprintf(q, sizeof q, "SET SESSION innodb_lock_wait_timeout = %ld", opt.lock_wait);
		bench_kyu_query(db, q, strlen(q));
	}
	if (strcmp(opt.isolation, "rr") == 0)
		iso = "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ";
	else if (strcmp(opt.isolation, "server") == 0)
		iso = "SET SESSION tx_isolation = @@GLOBAL.tx_isolation";
	if (iso != NULL && bench_kyu_query(db, iso, strlen(iso))->fail != DB_OK) {
		fprintf(stderr, "limit: %s: %s\n", iso, db_error(db));
		exit(1);
	}
	return db;
}

static void reap(long *inflight, struct bench_stats *st)
{
	int status;
	pid_t p = waitpid(-1, &status, 0);
	if (p < 0) {
		perror("limit: waitpid");
		exit(1);
	}
	(*inflight)--;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		st->failed++;
}

/* kyud's retention delete (store_cleanup_build), back to back. */
/* The history table's retention: one DROP PARTITION, with claims going on
 * before and after it. */
static void dropper(struct shared *sh, struct db *db)
{
	struct strbuf sb = { 0 };
	const struct db_reply *r;
	double t;

	bench_sleep_until(bench_now() + 2);
	sb_printf(&sb, "ALTER TABLE kyu_jobs_history DROP PARTITION %s", opt.drop_partition);
	t = bench_now();
	r = bench_kyu_query(db, sb.buf, sb.len);
	if (r->fail != DB_OK) {
		fprintf(stderr, "limit: %s: failed\n", sb.buf);
		exit(1);
	}
	sh->del_max_ms = (bench_now() - t) * 1000;
	sh->del_secs = bench_now() - t;
	sh->del_stmts = 1;
	sh->del_rows = r->r[0].affected;
	bench_sleep_until(bench_now() + 2);
	__atomic_store_n(&sh->delete_done, 1, __ATOMIC_SEQ_CST);
	sb_free(&sb);
	db_free(db);
}

static void deleter(struct shared *sh)
{
	struct db *db = session();
	struct strbuf sb = { 0 };
	double t0, t, ms;

	bench_ready();
	if (opt.drop_partition != NULL) {
		dropper(sh, db);
		return;
	}
	t0 = bench_now();
	for (;;) {
		const struct db_reply *r;
		int64_t n;
		t = bench_now();
		do {
			sb_reset(&sb);
			store_cleanup_build(&sb, &cfg);
			r = bench_kyu_query(db, sb.buf, sb.len);
		} while (r->fail == DB_RETRY);
		if ((n = store_cleanup_read(r)) < 0) {
			fprintf(stderr, "limit: retention delete: unexpected reply\n");
			exit(1);
		}
		ms = (bench_now() - t) * 1000;
		sh->del_rows += (unsigned long long)n;
		sh->del_stmts++;
		if (ms > sh->del_max_ms)
			sh->del_max_ms = ms;
		if (n < cfg.cleanup_batch)
			break;
	}
	sh->del_secs = bench_now() - t0;
	__atomic_store_n(&sh->delete_done, 1, __ATOMIC_SEQ_CST);
	sb_free(&sb);
	db_free(db);
}

/* The history alternative: the finished rows leave kyu_jobs for
 * kyu_jobs_history in the finish's own round trip. */
static void add_move(struct strbuf *sb, const struct finish *fin, int n)
{
	static const char cols[] = "seq, id, queue, status, attempts, exit_code, error, output, host, pid, "
				   "started_at, finished_at, duration, created_at";
	struct strbuf in = { 0 };

	for (int i = 0; i < n; i++)
		sb_printf(&in, "%s%" PRIu64, i ? "," : "", fin[i].seq);
	sb_printf(sb, "; INSERT INTO kyu_jobs_history (%s) SELECT %s FROM kyu_jobs WHERE seq IN (%s)", cols,
		  cols, in.buf);
	sb_printf(sb, "; DELETE FROM kyu_jobs WHERE seq IN (%s)", in.buf);
	sb_free(&in);
}

/* Records the plain successes fin[0..n) in their own round trip(s). */
static void finish(struct db *db, const struct finish *fin, int n, struct bench_stats *st)
{
	struct strbuf sb = { 0 };
	double t = bench_now();

	while (n > 0) {
		const struct db_reply *r;
		int stmts, count, done, rejected;
		sb_reset(&sb);
		count = store_finish_build(&sb, &cfg, fin, n, db_max_statement(db), &stmts);
		if (opt.history)
			add_move(&sb, fin, count);
		r = bench_kyu_query(db, sb.buf, sb.len);
		st->deadlocks = db_deadlocks(db);
		store_finish_read(r, fin, count, &done, &rejected);
		if (done == 0 && r->fail == DB_OK) {
			fprintf(stderr, "limit: finish: unexpected reply\n");
			exit(1);
		}
		st->rejected += (unsigned long long)rejected;
		fin += done;
		n -= done;
	}
	st->finish_s += bench_now() - t;
	sb_free(&sb);
}

/* The partitioned claim (seed 004): kyud's own claim statement with the
 * partition condition spliced into the WHERE of its mark, and the index
 * that serves it named, so that the only difference from the plain claim
 * is the partition. Bench-only: kyud adopts it only if it wins. */
static void partition_claim(struct strbuf *sql, long part)
{
	static const char where[] = " WHERE due <= NOW(6)", upd[] = "UPDATE IGNORE kyu_jobs ";
	struct strbuf out = { 0 };
	const char *u = strstr(sql->buf, upd), *w = u ? strstr(u, where) : NULL;

	if (w == NULL) {
		fprintf(stderr, "limit: --partitions: the claim statement has no '%s'\n", where);
		exit(1);
	}
	sb_add(&out, sql->buf, (size_t)(u - sql->buf) + sizeof(upd) - 1);
	sb_adds(&out, "FORCE INDEX (kyu_jobs_part_due) ");
	sb_add(&out, u + sizeof(upd) - 1, (size_t)(w - u) - (sizeof(upd) - 1) + sizeof(where) - 1);
	sb_printf(&out, " AND part = %ld", part);
	sb_adds(&out, w + sizeof(where) - 1);
	sb_reset(sql);
	sb_add(sql, out.buf, out.len);
	sb_free(&out);
}

static void worker(struct shared *sh, long idx)
{
	long part = opt.partitions > 0 ? idx % opt.partitions : 0, empty_run = 0;
	static char tru[] = "true";
	struct bench_stats *st = &sh->st[idx];
	struct db *db = session();
	struct strbuf sql = { 0 };
	struct finish *fin = calloc((size_t)opt.batch, sizeof *fin);
	int n_fin = 0; /* plain successes not recorded yet (--ride) */
	uint64_t token;
	double deadline = 0, next = 0;

	if (fin == NULL) {
		fprintf(stderr, "limit: out of memory\n");
		exit(1);
	}
	/* Unique per claim: pid in the high bits, a counter in the low ones
	 * (below 2^63, like kyud's). */
	token = ((uint64_t)(getpid() & 0x3fffff) << 40) |
		((uint64_t)((unsigned)(bench_now() * 1000) & 0xff) << 32);
	bench_ready();
	if (opt.time_limit > 0)
		deadline = bench_now() + opt.time_limit;
	next = bench_now();

	for (;;) {
		long n = opt.batch, inflight = 0, selected = 0;
		const struct db_reply *r;
		const struct db_result *sel;
		struct claim_reply cr;
		double t;
		int fin_stmts;

		if (deadline > 0 && bench_now() >= deadline)
			break;
		if (opt.delete_batch > 0 && __atomic_load_n(&sh->delete_done, __ATOMIC_SEQ_CST))
			break;
		if (opt.rate > 0) {
			/* Paced: one claim per 1/rate s; a late claim does not
			 * cause a burst of catch-up claims. */
			double now = bench_now();
			if (next > now)
				bench_sleep_until(next);
			else if (now - next > 1.0 / opt.rate)
				next = now;
			next += 1.0 / opt.rate;
		}
		if (opt.capped) {
			long before = __atomic_fetch_sub(&sh->remaining, n, __ATOMIC_SEQ_CST);
			if (before <= 0) {
				/* Nothing left to take, unless a claim in flight
				 * comes back short and returns its share: give
				 * this one back too, and leave the rest to it. */
				__atomic_fetch_add(&sh->remaining, n, __ATOMIC_SEQ_CST);
				break;
			}
			if (before < n)
				n = before;
		}
		token++;
		t = bench_now();
		for (;;) {
			sb_reset(&sql);
			store_claim_build(&sql, &cfg, token, host, (int)n, fin, n_fin);
			if (opt.partitions > 0 && empty_run < opt.partitions)
				partition_claim(&sql, part);
			r = bench_kyu_query(db, sql.buf, sql.len);
			st->deadlocks = db_deadlocks(db);
			fin_stmts = n_fin > 0;
			store_claim_read(r, (int)n, n_fin, token, t, &cr);
			if (cr.fin_done) {
				st->rejected += (unsigned long long)cr.fin_rejected;
				n_fin = 0;
			}
			if (r->fail == DB_OK)
				break;
			store_claimed_free(cr.rows, cr.got);
		}
		if (cr.got < 0) {
			fprintf(stderr, "limit: claim: unexpected reply\n");
			exit(1);
		}
		/* Every row the SELECT found against what the UPDATE marked. */
		sel = &r->r[fin_stmts + 1];
		for (size_t i = 0; i < sel->n_rows; i++)
			selected += db_cell(sel, i, 0) != NULL;
		if ((uint64_t)selected != r->r[fin_stmts].affected)
			st->mismatch++;
		if (opt.capped && cr.got < n)
			__atomic_fetch_add(&sh->remaining, n - cr.got, __ATOMIC_SEQ_CST);
		t = bench_now() - t;
		st->claim_s += t;
		if (cr.got == 0) {
			st->empty++;
			store_claimed_free(cr.rows, cr.got);
			/* Its own partition is done: try the others in turn, then
			 * the whole table (a partition's claim can come back empty
			 * while another claimer's rows move out of its range),
			 * before concluding that the table is done. */
			if (opt.partitions > 0 && ++empty_run <= opt.partitions) {
				part = (part + 1) % opt.partitions;
				continue;
			}
			break;
		}
		empty_run = 0;
		st->claims++;
		if (lat != NULL) {
			long k = __atomic_fetch_add(&sh->nlat, 1, __ATOMIC_SEQ_CST);
			if (k < lat_cap)
				lat[k] = t * 1000;
		}

		for (int i = 0; i < cr.got; i++) {
			struct claimed *c = &cr.rows[i];
			pid_t pid = 0;
			st->jobs++;
			if (opt.inflight > 0) {
				while (inflight >= opt.inflight)
					reap(&inflight, st);
				pid = bench_spawn(opt.as_command ? (c->command ? c->command : tru) : NULL);
				if (pid < 0) {
					st->failed++;
					pid = 0;
				} else {
					inflight++;
				}
			}
			/* Recorded as succeeded whatever the child did (failed
			 * counts it): a plain success, one UPDATE per batch. */
			fin[i] = (struct finish){ .seq = c->seq, .token = c->token, .pid = (int)pid,
						  .outcome = OUT_SUCCEEDED, .exit_code = 0 };
		}
		while (inflight > 0)
			reap(&inflight, st);
		n_fin = cr.got;
		store_claimed_free(cr.rows, cr.got);
		if (!opt.ride) {
			finish(db, fin, n_fin, st);
			n_fin = 0;
		}
	}
	/* With --ride, the last batch's results had no claim to ride on. */
	finish(db, fin, n_fin, st);
	free(fin);
	sb_free(&sql);
	db_free(db);
	{
		struct rusage ru;
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			st->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
				    (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	}
}

static void child(long i, void *arg)
{
	if (i == opt.procs)
		deleter(arg);
	else
		worker(arg, i);
}

/* EXPLAIN of every statement of the claim. */
static void explain(void)
{
	struct db *db = session();
	struct strbuf c = { 0 }, e = { 0 };
	const char *p, *semi;

	store_claim_build(&c, &cfg, 1, host, (int)opt.batch, NULL, 0);
	/* The statements are separated by "; " (no string in the text has
	 * one: the host is this machine's name, checked in main). */
	for (p = c.buf; (semi = strstr(p, "; ")) != NULL; p = semi + 2) {
		sb_adds(&e, "EXPLAIN ");
		sb_add(&e, p, (size_t)(semi - p));
		sb_adds(&e, "; ");
	}
	sb_adds(&e, "EXPLAIN ");
	sb_adds(&e, p);
	bench_kyu_print(bench_kyu_query(db, e.buf, e.len));
	sb_free(&c);
	sb_free(&e);
	db_free(db);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		BENCH_DB_LONGOPTS,
		{ "batch", required_argument, 0, 'b' }, { "inflight", required_argument, 0, 'k' },
		{ "procs", required_argument, 0, 'p' }, { "jobs", required_argument, 0, 'n' },
		{ "shape", required_argument, 0, 's' }, { "fill", no_argument, 0, 'f' },
		{ "command", no_argument, 0, 'c' }, { "time-limit", required_argument, 0, 't' },
		{ "lease", required_argument, 0, 2 }, { "lock-wait", required_argument, 0, 3 },
		{ "explain", no_argument, 0, 4 }, { "isolation", required_argument, 0, 5 },
		{ "timeout", required_argument, 0, 6 }, { "help", no_argument, 0, 'h' },
		{ "lat", no_argument, 0, 7 }, { "rate", required_argument, 0, 8 },
		{ "delete-batch", required_argument, 0, 9 }, { "retention", required_argument, 0, 10 },
		{ "no-verify", no_argument, 0, 11 }, { "ride", no_argument, 0, 12 },
		{ "partitions", required_argument, 0, 13 }, { "history", no_argument, 0, 14 },
		{ "drop-partition", required_argument, 0, 15 },
		{ 0, 0, 0, 0 }
	};
	struct bench_gstatus g0, g1;
	struct bench_stats tot = { 0 };
	struct bench_buf kyud = { 0 };
	struct shared *sh;
	MYSQL *m;
	int ch, li, timed_out;
	long i;
	double t0, t1, secs;
	long long box0, box1, db0, db1;

	bench_db_defaults(&opt.db);
	opt.batch = 100;
	opt.inflight = 4;
	opt.procs = 1;
	opt.jobs = -1;
	opt.timeout = 120;
	opt.isolation = "rc";
	opt.retention = 86400;
	while ((ch = getopt_long(argc, argv, "b:k:p:n:s:fct:h", lo, &li)) != -1) {
		switch (ch) {
		case 1: bench_db_option(&opt.db, lo[li].name, optarg); break;
		case 2: opt.lease = atol(optarg); break;
		case 3: opt.lock_wait = atol(optarg); break;
		case 4: opt.explain = 1; break;
		case 5: opt.isolation = optarg; break;
		case 6: opt.timeout = atol(optarg); break;
		case 7: opt.lat = 1; break;
		case 8: opt.rate = atof(optarg); break;
		case 9: opt.delete_batch = atol(optarg); break;
		case 10: opt.retention = atol(optarg); break;
		case 11: opt.no_verify = 1; break;
		case 12: opt.ride = 1; break;
		case 13: opt.partitions = atol(optarg); break;
		case 14: opt.history = 1; break;
		case 15: opt.drop_partition = optarg, opt.delete_batch = 1; break;
		case 'b': opt.batch = atol(optarg); break;
		case 'k': opt.inflight = atol(optarg); break;
		case 'p': opt.procs = atol(optarg); break;
		case 'n': opt.jobs = atol(optarg); break;
		case 'f': opt.fill = 1; break;
		case 'c': opt.as_command = 1; break;
		case 't': opt.time_limit = atof(optarg); break;
		case 's': opt.shape = strcmp(optarg, "skip") == 0 ? "skip_locked" : optarg; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || opt.batch < 1 || opt.batch > INT32_MAX || opt.procs < 1 ||
	    opt.procs > 256 || opt.inflight < 0 || (opt.fill && opt.jobs < 0) || opt.rate < 0 ||
	    opt.delete_batch < 0 || opt.retention < 0 || opt.partitions < 0 || opt.partitions > 255 || opt.lease < 0 || opt.lock_wait < 0 ||
	    (strcmp(opt.isolation, "rc") != 0 && strcmp(opt.isolation, "rr") != 0 &&
	     strcmp(opt.isolation, "server") != 0))
		usage(stderr, 2);

	/* What kyud would run with these [kyud] keys; a value it would
	 * refuse is refused here too. */
	if (opt.shape != NULL)
		bench_buf_printf(&kyud, "claim = %s\n", opt.shape);
	if (opt.lease > 0)
		bench_buf_printf(&kyud, "lease = %ld\n", opt.lease);
	bench_buf_printf(&kyud, "retention = %ld\n", opt.retention);
	if (opt.delete_batch > 0)
		bench_buf_printf(&kyud, "cleanup_batch = %ld\n", opt.delete_batch);
	bench_kyu_config(&opt.db, kyud.p, &cfg);
	free(kyud.p);
	if (gethostname(host, sizeof host) != 0 || strstr(host, "; ") != NULL)
		snprintf(host, sizeof host, "bench");

	m = bench_connect(&opt.db);
	if (opt.partitions > 0) {
		struct bench_buf b = { 0 };
		if (!opt.fill) {
			fprintf(stderr, "limit: --partitions needs --fill\n");
			return 2;
		}
		bench_must(m, "TRUNCATE TABLE kyu_jobs");
		bench_must(m, "ALTER TABLE kyu_jobs DROP KEY IF EXISTS kyu_jobs_part_due, DROP COLUMN IF EXISTS part");
		bench_buf_printf(&b, "ALTER TABLE kyu_jobs ADD COLUMN part TINYINT UNSIGNED AS (CRC32(id) %% %ld) "
				 "PERSISTENT, ADD KEY kyu_jobs_part_due (part, due, priority)", opt.partitions);
		bench_must(m, b.p);
		free(b.p);
	}
	if (opt.fill)
		bench_fill(m, opt.jobs, opt.as_command);
	if (opt.explain) {
		explain();
		mysql_close(m);
		return 0;
	}

	sh = bench_shared(sizeof *sh + (size_t)opt.procs * sizeof sh->st[0]);
	if (opt.lat) {
		/* Every claim takes at least one row; without a cap, room for
		 * far more claims than a run makes (pages are touched as used). */
		lat_cap = opt.jobs >= 0 ? opt.jobs + 1 : 1L << 22;
		lat = mmap(NULL, (size_t)lat_cap * sizeof *lat, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (lat == MAP_FAILED) {
			perror("limit: mmap");
			return 1;
		}
	}
	/* After --fill the table holds exactly the jobs: a claimer stops at
	 * its first empty claim. The shared countdown is only for tables
	 * holding more; with short claims in flight it can read empty while
	 * rows are left, so it must not decide the end of a filled run. */
	opt.capped = opt.jobs >= 0 && !opt.fill;
	sh->remaining = opt.jobs;
	bench_spawn_team(opt.procs + (opt.delete_batch > 0), child, sh);
	bench_status(m, &g0);
	box0 = bench_box_ticks();
	db0 = bench_pid_ticks(getenv("BENCH_DB_PID"));
	t0 = bench_now();
	bench_go();
	timed_out = bench_wait_team(opt.timeout);
	t1 = bench_now();
	box1 = bench_box_ticks();
	db1 = bench_pid_ticks(getenv("BENCH_DB_PID"));
	bench_status(m, &g1);
	secs = t1 - t0;

	for (i = 0; i < opt.procs; i++)
		bench_stats_add(&tot, &sh->st[i]);
	/* deadlocks: deadlocks and lock wait timeouts retried, as db.c counts
	 * them (db_deadlocks). */
	printf("limit shape=%s isolation=%s ride=%d timeout=%d procs=%ld batch=%ld inflight=%ld mode=%s"
	       " jobs=%llu secs=%.3f jobs_per_s=%.0f claims=%llu empty_claims=%llu deadlocks=%llu"
	       " mismatch=%llu rejected=%llu failed=%llu claim_ms=%.3f finish_ms=%.3f"
	       " own_cpu_ms_per_job=%.3f",
	       shape_names[cfg.claim], opt.isolation, opt.ride, timed_out, opt.procs, opt.batch,
	       opt.inflight, opt.as_command ? "command" : "argv", tot.jobs, secs,
	       secs > 0 ? (double)tot.jobs / secs : 0.0, tot.claims, tot.empty, tot.deadlocks,
	       tot.mismatch, tot.rejected, tot.failed,
	       tot.claims + tot.empty ? tot.claim_s * 1000 / (double)(tot.claims + tot.empty) : 0.0,
	       tot.claims ? tot.finish_s * 1000 / (double)tot.claims : 0.0,
	       tot.jobs ? tot.cpu_s * 1000 / (double)tot.jobs : 0.0);
	{
		double hz = (double)sysconf(_SC_CLK_TCK), n = tot.jobs ? (double)tot.jobs : 1;
		if (box0 >= 0 && box1 >= 0)
			printf(" box_cpu_ms_per_job=%.3f", (double)(box1 - box0) * 1000 / hz / n);
		if (db0 >= 0 && db1 >= 0)
			printf(" db_cpu_ms_per_job=%.3f", (double)(db1 - db0) * 1000 / hz / n);
	}
	if (lat != NULL) {
		long n = sh->nlat < lat_cap ? sh->nlat : lat_cap;
		bench_sort(lat, (size_t)n);
		printf(" lat_claims=%ld claim_p50_ms=%.3f claim_p90_ms=%.3f claim_p99_ms=%.3f"
		       " claim_max_ms=%.3f",
		       n, bench_pct(lat, (size_t)n, 50), bench_pct(lat, (size_t)n, 90),
		       bench_pct(lat, (size_t)n, 99), n ? lat[n - 1] : 0.0);
	}
	if (opt.delete_batch > 0)
		printf(" delete_batch=%ld delete_rows=%llu delete_stmts=%llu delete_secs=%.3f"
		       " delete_max_ms=%.1f",
		       opt.delete_batch, sh->del_rows, sh->del_stmts, sh->del_secs, sh->del_max_ms);
	printf(" partitions=%ld lock_waits=%llu lock_waits_per_1000_claims=%.1f", opt.partitions,
	       g1.row_lock_waits - g0.row_lock_waits,
	       tot.claims + tot.empty ? (double)(g1.row_lock_waits - g0.row_lock_waits) * 1000 /
					     (double)(tot.claims + tot.empty)
				      : 0.0);
	if (opt.no_verify)
		bench_report_deltas(&g0, &g1, tot.jobs, 1);
	else
		bench_report_tail(m, &g0, &g1, tot.jobs, 1);
	printf("\n");
	if (opt.partitions > 0)
		bench_must(m, "ALTER TABLE kyu_jobs DROP KEY kyu_jobs_part_due, DROP COLUMN part");
	mysql_close(m);
	config_free(&cfg);
	return 0;
}
