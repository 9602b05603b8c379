/*
 * limit: the fastest loop that does only what running queued jobs
 * unavoidably needs, against kyu's own table.  Each process repeats:
 *
 *   claim:  one UPDATE that marks up to `batch` due rows with a fresh token
 *           (statement shape selectable, see --shape), then one
 *           SELECT ... WHERE owner = token;
 *   run:    posix_spawn /bin/true (or /bin/sh -c command) for each row,
 *           keeping `inflight` children at once, and reap them all;
 *   finish: one UPDATE ... WHERE seq IN (...) for the whole batch.
 *
 * With --inflight 0 nothing is spawned: that isolates the database part
 * and is how the claim shapes are compared under contention.  With --fill
 * the table is emptied and refilled first and, at the end, every row is
 * checked to have been claimed exactly once (attempts = 1).
 *
 * For the scale measurements (tests/bench/run.sh, case scale): --lat keeps
 * the time of every claim (UPDATE + SELECT) and prints percentiles; --rate
 * paces the claims; --delete-batch adds one process that runs kyud's
 * retention delete (the statement of store_cleanup, under the same
 * GET_LOCK) back to back until no expired row is left, and the claimers
 * stop when it is done; --no-verify skips the final whole-table check.
 *
 * Prints one line of key=value figures.  Never a pass/fail test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum shape { SHAPE_PLAIN, SHAPE_JOIN, SHAPE_SKIP };
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
	double time_limit, rate;
	const char *isolation;
	enum shape shape;
	int fill, as_command, explain, capped, lat, no_verify;
} opt;

static volatile sig_atomic_t timed_out;
static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: limit [options]\n"
		"  --socket PATH | --host H --port P   server (default $KYU_DB_SOCKET)\n"
		"  --database DB --user U --password PW (default kyu/kyu/kyu)\n"
		"  -b, --batch N        rows per claim (100)\n"
		"  -k, --inflight N     children running at once per process; 0 = claim and\n"
		"                       finish only, spawn nothing (4)\n"
		"  -p, --procs N        claiming processes (1)\n"
		"  -n, --jobs N         jobs: inserted with --fill, else the most to claim\n"
		"                       (default: all due rows)\n"
		"  -s, --shape S        claim statement: plain | join | skip_locked (plain)\n"
		"  -f, --fill           empty kyu_jobs and insert --jobs /bin/true jobs first\n"
		"  -c, --command        fill as `command` and run it via /bin/sh -c\n"
		"                       (default: argv, run /bin/true directly)\n"
		"  -t, --time-limit S   stop claiming after S seconds\n"
		"      --lease S        lease set by the claim (60)\n"
		"      --lock-wait S    session innodb_lock_wait_timeout (10)\n"
		"      --isolation L    rr | rc: session isolation level (server default)\n"
		"      --timeout S      kill the claimers after S seconds and report (120)\n"
		"      --explain        print the EXPLAIN of the claim statement and exit\n"
		"      --lat            record every claim's time; print percentiles\n"
		"      --rate R         at most R claims per second per process (0: flat out)\n"
		"      --delete-batch N also run kyud's retention DELETE ... LIMIT N back to\n"
		"                       back until it deletes fewer rows; claimers stop then\n"
		"      --retention S    retention of that DELETE, seconds (86400)\n"
		"      --no-verify      skip the whole-table check at the end (big tables)\n");
	exit(code);
}

#define CLAIM_SET                                                                      \
	"status = 'running', owner = %llu, lease_until = NOW(6) + INTERVAL %ld SECOND," \
	" attempts = attempts + 1, started_at = NOW(6)"

static void build_claim(struct bench_buf *b, uint64_t token, long n)
{
	b->len = 0;
	switch (opt.shape) {
	case SHAPE_PLAIN:
		bench_buf_printf(b, "UPDATE kyu_jobs SET " CLAIM_SET
				    " WHERE due <= NOW(6) ORDER BY due, priority LIMIT %ld",
				 (unsigned long long)token, opt.lease, n);
		break;
	case SHAPE_JOIN:
	case SHAPE_SKIP:
		bench_buf_printf(b, "UPDATE kyu_jobs JOIN (SELECT seq FROM kyu_jobs"
				    " WHERE due <= NOW(6) ORDER BY due, priority LIMIT %ld"
				    " FOR UPDATE%s) t USING (seq) SET " CLAIM_SET,
				 n, opt.shape == SHAPE_SKIP ? " SKIP LOCKED" : "",
				 (unsigned long long)token, opt.lease);
		break;
	}
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

static void session_setup(MYSQL *m)
{
	char q[128];
	snprintf(q, sizeof q, "SET SESSION innodb_lock_wait_timeout = %ld", opt.lock_wait);
	bench_must(m, q);
	if (strcmp(opt.isolation, "rc") == 0)
		bench_must(m, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	else if (strcmp(opt.isolation, "rr") == 0)
		bench_must(m, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
}

/* kyud's retention delete (src/store.c, store_cleanup), back to back. */
static void deleter(struct shared *sh, int ready_fd, int go_fd)
{
	struct bench_buf del = { 0 };
	MYSQL *m = bench_connect(&opt.db);
	static const char lock[] = "SELECT GET_LOCK(CONCAT('kyu_cleanup.', DATABASE()), 0)";
	static const char unlock[] = "DO RELEASE_LOCK(CONCAT('kyu_cleanup.', DATABASE()))";
	double t0, t, ms;
	char c;

	session_setup(m);
	bench_buf_printf(&del,
			 "DELETE FROM kyu_jobs WHERE status IN ('succeeded', 'failed', 'cancelled') "
			 "AND updated_at < NOW(6) - INTERVAL %ld SECOND LIMIT %ld",
			 opt.retention, opt.delete_batch);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) < 0)
		exit(1);
	t0 = bench_now();
	for (;;) {
		unsigned long long n;
		t = bench_now();
		bench_must(m, lock);
		while (bench_try(m, del.p, del.len, NULL) != 0)
			;
		n = mysql_affected_rows(m);
		bench_must(m, unlock);
		ms = (bench_now() - t) * 1000;
		sh->del_rows += n;
		sh->del_stmts++;
		if (ms > sh->del_max_ms)
			sh->del_max_ms = ms;
		if (n < (unsigned long long)opt.delete_batch)
			break;
	}
	sh->del_secs = bench_now() - t0;
	__atomic_store_n(&sh->delete_done, 1, __ATOMIC_SEQ_CST);
	mysql_close(m);
	exit(0);
}

static void worker(struct shared *sh, int idx, int ready_fd, int go_fd)
{
	struct bench_stats *st = &sh->st[idx];
	struct bench_buf sql = { 0 }, fin = { 0 };
	MYSQL *m = bench_connect(&opt.db);
	char q[128], c;
	uint64_t token;
	double deadline = 0, next = 0;

	session_setup(m);
	/* Unique per claim: pid in the high bits, a counter in the low ones. */
	token = ((uint64_t)(getpid() & 0x3fffff) << 40) |
		((uint64_t)((unsigned)(bench_now() * 1000) & 0xff) << 32);
	if (write(ready_fd, "r", 1) != 1 || read(go_fd, &c, 1) < 0)
		exit(1);
	if (opt.time_limit > 0)
		deadline = bench_now() + opt.time_limit;
	next = bench_now();

	for (;;) {
		long n = opt.batch, got, inflight = 0;
		MYSQL_RES *res;
		MYSQL_ROW row;
		double t;
		int first = 1;

		if (deadline > 0 && bench_now() >= deadline)
			break;
		if (opt.delete_batch > 0 && __atomic_load_n(&sh->delete_done, __ATOMIC_SEQ_CST))
			break;
		if (opt.rate > 0) {
			/* Paced: one claim per 1/rate s; a late claim does not
			 * cause a burst of catch-up claims. */
			double now = bench_now();
			if (next > now) {
				struct timespec ts;
				ts.tv_sec = (time_t)(next - now);
				ts.tv_nsec = (long)((next - now - (double)ts.tv_sec) * 1e9);
				nanosleep(&ts, NULL);
			} else if (now - next > 1.0 / opt.rate) {
				next = now;
			}
			next += 1.0 / opt.rate;
		}
		if (opt.capped) {
			long before = __atomic_fetch_sub(&sh->remaining, n, __ATOMIC_SEQ_CST);
			if (before <= 0)
				break;
			if (before < n)
				n = before;
		}
		token++;
		build_claim(&sql, token, n);
		t = bench_now();
		while (bench_try(m, sql.p, sql.len, st) != 0)
			;
		got = (long)mysql_affected_rows(m);
		if (opt.capped && got < n)
			__atomic_fetch_add(&sh->remaining, n - got, __ATOMIC_SEQ_CST);
		if (got == 0) {
			st->empty++;
			st->claim_s += bench_now() - t;
			break;
		}
		snprintf(q, sizeof q, "SELECT seq, command FROM kyu_jobs WHERE owner = %llu",
			 (unsigned long long)token);
		while (mysql_query(m, q) != 0 || (res = mysql_store_result(m)) == NULL) {
			unsigned e = mysql_errno(m);
			if (e != BENCH_ER_LOCK_DEADLOCK && e != BENCH_ER_LOCK_WAIT_TIMEOUT) {
				fprintf(stderr, "limit: select: %s\n", mysql_error(m));
				exit(1);
			}
		}
		t = bench_now() - t;
		st->claim_s += t;
		st->claims++;
		if (lat != NULL) {
			long k = __atomic_fetch_add(&sh->nlat, 1, __ATOMIC_SEQ_CST);
			if (k < lat_cap)
				lat[k] = t * 1000;
		}
		if ((long)mysql_num_rows(res) != got)
			st->mismatch++;

		fin.len = 0;
		bench_buf_printf(&fin, "UPDATE kyu_jobs SET status = 'succeeded', exit_code = 0,"
				       " finished_at = NOW(6) WHERE seq IN (");
		while ((row = mysql_fetch_row(res)) != NULL) {
			bench_buf_printf(&fin, "%s%s", first ? "" : ",", row[0]);
			first = 0;
			st->jobs++;
			if (opt.inflight <= 0)
				continue;
			while (inflight >= opt.inflight)
				reap(&inflight, st);
			if (bench_spawn(opt.as_command ? (row[1] ? row[1] : "true") : NULL) < 0)
				st->failed++;
			else
				inflight++;
		}
		while (inflight > 0)
			reap(&inflight, st);
		mysql_free_result(res);
		bench_buf_printf(&fin, ") AND owner = %llu", (unsigned long long)token);
		t = bench_now();
		while (bench_try(m, fin.p, fin.len, st) != 0)
			;
		st->finish_s += bench_now() - t;
	}
	mysql_close(m);
	exit(0);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "socket", required_argument, 0, 1 }, { "host", required_argument, 0, 1 },
		{ "port", required_argument, 0, 1 }, { "database", required_argument, 0, 1 },
		{ "user", required_argument, 0, 1 }, { "password", required_argument, 0, 1 },
		{ "batch", required_argument, 0, 'b' }, { "inflight", required_argument, 0, 'k' },
		{ "procs", required_argument, 0, 'p' }, { "jobs", required_argument, 0, 'n' },
		{ "shape", required_argument, 0, 's' }, { "fill", no_argument, 0, 'f' },
		{ "command", no_argument, 0, 'c' }, { "time-limit", required_argument, 0, 't' },
		{ "lease", required_argument, 0, 2 }, { "lock-wait", required_argument, 0, 3 },
		{ "explain", no_argument, 0, 4 }, { "isolation", required_argument, 0, 5 },
		{ "timeout", required_argument, 0, 6 }, { "help", no_argument, 0, 'h' },
		{ "lat", no_argument, 0, 7 }, { "rate", required_argument, 0, 8 },
		{ "delete-batch", required_argument, 0, 9 }, { "retention", required_argument, 0, 10 },
		{ "no-verify", no_argument, 0, 11 },
		{ 0, 0, 0, 0 }
	};
	struct bench_gstatus g0, g1;
	struct bench_stats tot = { 0 };
	struct shared *sh;
	pid_t *pids;
	MYSQL *m;
	int ch, li, ready[2], go[2];
	long i, nchild;
	double t0, t1, secs;
	size_t shsize;

	bench_db_defaults(&opt.db);
	opt.batch = 100;
	opt.inflight = 4;
	opt.procs = 1;
	opt.jobs = -1;
	opt.lease = 60;
	opt.lock_wait = 10;
	opt.timeout = 120;
	opt.isolation = "default";
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
		case 'b': opt.batch = atol(optarg); break;
		case 'k': opt.inflight = atol(optarg); break;
		case 'p': opt.procs = atol(optarg); break;
		case 'n': opt.jobs = atol(optarg); break;
		case 'f': opt.fill = 1; break;
		case 'c': opt.as_command = 1; break;
		case 't': opt.time_limit = atof(optarg); break;
		case 's':
			if (strcmp(optarg, "plain") == 0)
				opt.shape = SHAPE_PLAIN;
			else if (strcmp(optarg, "join") == 0)
				opt.shape = SHAPE_JOIN;
			else if (strcmp(optarg, "skip_locked") == 0 || strcmp(optarg, "skip") == 0)
				opt.shape = SHAPE_SKIP;
			else
				usage(stderr, 2);
			break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || opt.batch < 1 || opt.procs < 1 || opt.procs > 256 ||
	    opt.inflight < 0 || (opt.fill && opt.jobs < 0) || opt.rate < 0 ||
	    opt.delete_batch < 0 || opt.retention < 0 ||
	    (strcmp(opt.isolation, "default") != 0 && strcmp(opt.isolation, "rr") != 0 &&
	     strcmp(opt.isolation, "rc") != 0))
		usage(stderr, 2);

	m = bench_connect(&opt.db);
	if (opt.fill)
		bench_fill(m, opt.jobs, opt.as_command);
	if (opt.explain) {
		struct bench_buf b = { 0 };
		MYSQL_RES *r;
		MYSQL_ROW row;
		unsigned nf, f;
		struct bench_buf c = { 0 };
		build_claim(&c, 1, opt.batch);
		bench_buf_printf(&b, "EXPLAIN %s", c.p);
		free(c.p);
		if (mysql_query(m, b.p) != 0 || (r = mysql_store_result(m)) == NULL) {
			fprintf(stderr, "limit: explain: %s\n", mysql_error(m));
			return 1;
		}
		nf = mysql_num_fields(r);
		while ((row = mysql_fetch_row(r)) != NULL) {
			for (f = 0; f < nf; f++)
				printf("%s%s", f ? "\t" : "", row[f] ? row[f] : "NULL");
			printf("\n");
		}
		mysql_free_result(r);
		free(b.p);
		return 0;
	}

	shsize = sizeof *sh + (size_t)opt.procs * sizeof sh->st[0];
	sh = mmap(NULL, shsize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("limit: mmap");
		return 1;
	}
	memset(sh, 0, shsize);
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
	opt.capped = opt.jobs >= 0;
	sh->remaining = opt.jobs;
	if (pipe(ready) != 0 || pipe(go) != 0) {
		perror("limit: pipe");
		return 1;
	}
	fflush(stdout);
	nchild = opt.procs + (opt.delete_batch > 0);
	pids = calloc((size_t)nchild, sizeof *pids);
	for (i = 0; i < nchild; i++) {
		pid_t p = fork();
		if (p < 0) {
			perror("limit: fork");
			return 1;
		}
		pids[i] = p;
		if (p == 0) {
			close(ready[0]);
			close(go[1]);
			if (i == opt.procs)
				deleter(sh, ready[1], go[0]);
			worker(sh, (int)i, ready[1], go[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	for (i = 0; i < nchild; i++) {
		char c;
		if (read(ready[0], &c, 1) != 1) {
			fprintf(stderr, "limit: a worker failed to start\n");
			return 1;
		}
	}
	bench_status(m, &g0);
	{
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm; /* no SA_RESTART: wait() returns EINTR */
		sigaction(SIGALRM, &sa, NULL);
	}
	t0 = bench_now();
	close(go[1]);
	if (opt.timeout > 0)
		alarm((unsigned)opt.timeout);
	for (i = 0; i < nchild;) {
		int status;
		pid_t p = wait(&status);
		if (p < 0 && errno == EINTR && timed_out) {
			/* Stuck (e.g. a lock livelock): stop our own claimers. */
			long j;
			for (j = 0; j < nchild; j++)
				kill(pids[j], SIGKILL);
			timed_out = 2;
			continue;
		}
		if (p < 0) {
			perror("limit: wait");
			return 1;
		}
		i++;
		if (timed_out != 2 && (!WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
			fprintf(stderr, "limit: a worker failed\n");
			return 1;
		}
	}
	alarm(0);
	t1 = bench_now();
	bench_status(m, &g1);
	secs = t1 - t0;

	for (i = 0; i < opt.procs; i++) {
		struct bench_stats *s = &sh->st[i];
		tot.jobs += s->jobs;
		tot.claims += s->claims;
		tot.empty += s->empty;
		tot.deadlocks += s->deadlocks;
		tot.lockwaits += s->lockwaits;
		tot.mismatch += s->mismatch;
		tot.failed += s->failed;
		tot.claim_s += s->claim_s;
		tot.finish_s += s->finish_s;
	}
	printf("limit shape=%s isolation=%s timeout=%d procs=%ld batch=%ld inflight=%ld mode=%s jobs=%llu secs=%.3f"
	       " jobs_per_s=%.0f claims=%llu empty_claims=%llu deadlocks=%llu lockwaits=%llu"
	       " mismatch=%llu failed=%llu claim_ms=%.3f finish_ms=%.3f",
	       shape_names[opt.shape], opt.isolation, timed_out ? 1 : 0, opt.procs, opt.batch, opt.inflight,
	       opt.as_command ? "command" : "argv", tot.jobs, secs,
	       secs > 0 ? (double)tot.jobs / secs : 0.0, tot.claims, tot.empty, tot.deadlocks,
	       tot.lockwaits, tot.mismatch, tot.failed,
	       tot.claims ? tot.claim_s * 1000 / (double)(tot.claims + tot.empty) : 0.0,
	       tot.claims ? tot.finish_s * 1000 / (double)tot.claims : 0.0);
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
	if (opt.no_verify)
		bench_report_deltas(&g0, &g1, tot.jobs, 1);
	else
		bench_report_tail(m, &g0, &g1, tot.jobs, 1);
	printf("\n");
	mysql_close(m);
	return 0;
}
