/*
 * latency: how long a job waits between its INSERT and the start of its
 * command, with a kyud running against the same table.
 *
 * It inserts --jobs single-row jobs at a steady --rate (one INSERT per job,
 * autocommit), each with argv ["STAMP", SOCKET, TAG]: the stamp program
 * (tests/bench/stamp.c) sends its CLOCK_MONOTONIC time to a UNIX datagram
 * socket this program listens on.  Latency = the stamp's time - the time
 * just before the INSERT was sent; both clocks are this host's monotonic
 * clock.  With --wake ADDRESS:PORT it also sends kyud's wake-up datagram
 * "kyu:QUEUE" itself right after each INSERT returned (i.e. committed), as
 * an application without the kyu_notify trigger would; without it the
 * wake-up is whatever the server does (the trigger) or kyud's poll.
 *
 * With --floor no kyud is involved: right after each INSERT returned, this
 * program claims the row itself with kyud's own claim of one row
 * (src/worker/store.c, store_claim_build: mark and select in one round trip, sent
 * through src/common/db.c's blocking db_query on a session set up as kyud's, read
 * with store_claim_read), turns the row into argv and environment as kyud
 * does (src/jobspec.c) and posix_spawns the stamp.  That is INSERT-to-start
 * with no wake-up, no event loop and no bookkeeping: the floor kyud's
 * figures compare with on the same machine in the same run.  (limit.c's
 * header says why kyuworker's driver rather than raw Connector/C.)
 *
 * Also reported, from the table: started_at - created_at on the database
 * clock (INSERT statement start to claim statement; no spawn included).
 *
 * Prints one line of key=value figures (times in ms).  Never a pass/fail
 * test.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/db.h"
#include "common/util.h"
#include "worker/jobspec.h"
#include "worker/store.h"

extern char **environ;

static struct {
	struct bench_db db;
	int floor;
	long jobs;
	double rate, wait;
	const char *stamp, *sock, *wake, *queue;
} opt;

static void usage(FILE *f, int code)
{
	fprintf(f,
		"usage: latency --stamp PATH [options]\n" BENCH_DB_USAGE
		"  -n, --jobs N         single-row INSERTs (1000)\n"
		"  -r, --rate R         INSERTs per second (50)\n"
		"  -s, --stamp PATH     the stamp program (absolute path)\n"
		"  -l, --listen PATH    UNIX datagram socket for the stamps\n"
		"                       (default /tmp/kyu-latency.PID.sock)\n"
		"  -w, --wake ADDR:PORT send \"kyu:QUEUE\" there after each INSERT\n"
		"  -q, --queue Q        queue of the jobs (default)\n"
		"  -W, --wait S         seconds to wait for stamps after the last INSERT (10)\n"
		"  -f, --floor          claim and spawn each job here, no kyud (see above)\n");
	exit(code);
}

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "a.b.c.d:port" or "[v6]:port", numeric only. */
static int wake_socket(const char *target, struct sockaddr_storage *sa, socklen_t *salen)
{
	char host[256], *port;
	struct addrinfo hints, *ai = NULL;
	int fd;

	if (strlen(target) >= sizeof host)
		return -1;
	strcpy(host, target);
	if (host[0] == '[') {
		char *end = strchr(host, ']');
		if (end == NULL || end[1] != ':')
			return -1;
		*end = '\0';
		port = end + 2;
		memmove(host, host + 1, strlen(host + 1) + 1);
	} else {
		port = strrchr(host, ':');
		if (port == NULL)
			return -1;
		*port++ = '\0';
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &ai) != 0)
		return -1;
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	*salen = ai->ai_addrlen;
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	freeaddrinfo(ai);
	return fd;
}

struct run {
	int64_t *sent;    /* monotonic ns just before each INSERT */
	int64_t *started; /* the stamp's time, 0 until it arrives */
	double *ins_ms;   /* INSERT round trip (with the trigger, if any) */
	long received, stray;
	unsigned tag;
};

static void drain(int fd, struct run *r)
{
	char buf[160];
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof buf - 1, MSG_DONTWAIT);
		unsigned tag;
		long i;
		long long ns;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf[n] = '\0';
		if (sscanf(buf, "%u:%ld %lld", &tag, &i, &ns) != 3 || tag != r->tag || i < 0 ||
		    i >= opt.jobs || r->started[i] != 0) {
			r->stray++;
			continue;
		}
		r->started[i] = ns;
		r->received++;
	}
}

/* Waits for stamps until the monotonic time `until` (ns). */
static void wait_stamps(int fd, struct run *r, int64_t until)
{
	for (;;) {
		int64_t now = mono_ns();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		struct timespec ts;
		drain(fd, r);
		if (now >= until)
			return;
		ts.tv_sec = (until - now) / 1000000000LL;
		ts.tv_nsec = (until - now) % 1000000000LL;
		if (ppoll(&p, 1, &ts, NULL) < 0 && errno != EINTR) {
			perror("latency: ppoll");
			exit(1);
		}
	}
}

static void print_dist(const char *name, double *v, size_t n)
{
	double sum = 0;
	size_t i;
	for (i = 0; i < n; i++)
		sum += v[i];
	bench_sort(v, n);
	printf(" %s_p50_ms=%.3f %s_p90_ms=%.3f %s_p99_ms=%.3f %s_max_ms=%.3f %s_mean_ms=%.3f", name,
	       bench_pct(v, n, 50), name, bench_pct(v, n, 90), name, bench_pct(v, n, 99), name,
	       n ? v[n - 1] : 0.0, name, n ? sum / (double)n : 0.0);
}

/* --floor: claim one due row with kyud's claim, then posix_spawn it as
 * kyud would build it (its argv is ["STAMP", SOCK, TAG]). */
static int floor_run(struct db *db, const struct kyu_config *cfg, const char *host, long i)
{
	struct jobspec_input in = { .shell = cfg->shell, .direct_exec = cfg->direct_exec,
				    .base_env = environ };
	struct jobspec spec;
	struct strbuf sb = { 0 };
	struct claim_reply cr;
	const struct db_reply *r;
	/* Unique per claim: this process, then the job's number. */
	uint64_t token = ((uint64_t)(getpid() & 0x3fffff) << 40) | (uint64_t)(i + 1);
	char err[256];
	pid_t pid;
	int rc = -1;

	do {
		sb_reset(&sb);
		store_claim_build(&sb, cfg, token, host, 1, NULL, 0);
		r = bench_kyu_query(db, sb.buf, sb.len);
	} while (r->fail == DB_RETRY);
	sb_free(&sb);
	store_claim_read(r, 1, 0, token, 0, &cr);
	if (cr.got != 1 || cr.rows[0].bad) {
		fprintf(stderr, "latency: floor claim %ld: %s\n", i,
			cr.got == 1 ? cr.rows[0].bad : "found no row");
		goto out;
	}
	in.command = cr.rows[0].command;
	in.argv_json = cr.rows[0].argv_json;
	in.env_json = cr.rows[0].env_json;
	in.job_id = cr.rows[0].id;
	in.queue = cr.rows[0].queue;
	in.attempt = cr.rows[0].attempts;
	if (jobspec_build(&in, &spec, err, sizeof err) < 0) {
		fprintf(stderr, "latency: floor job %ld: %s\n", i, err);
		goto out;
	}
	rc = (spec.use_path ? posix_spawnp : posix_spawn)(&pid, spec.argv[0], NULL, NULL, spec.argv,
							  spec.envp);
	if (rc != 0)
		fprintf(stderr, "latency: floor spawn %s: %s\n", spec.argv[0], strerror(rc));
	rc = rc ? -1 : 0;
	jobspec_free(&spec);
out:
	store_claimed_free(cr.rows, cr.got);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		BENCH_DB_LONGOPTS,
		{ "jobs", required_argument, 0, 'n' }, { "rate", required_argument, 0, 'r' },
		{ "stamp", required_argument, 0, 's' }, { "listen", required_argument, 0, 'l' },
		{ "wake", required_argument, 0, 'w' }, { "queue", required_argument, 0, 'q' },
		{ "wait", required_argument, 0, 'W' }, { "floor", no_argument, 0, 'f' },
		{ "help", no_argument, 0, 'h' },
		{ 0, 0, 0, 0 }
	};
	struct sockaddr_storage wsa;
	struct sockaddr_un sun;
	socklen_t wsalen = 0;
	struct bench_buf sql = { 0 }, qtext = { 0 };
	struct run r = { 0 };
	char defsock[108], wmsg[80], host[256];
	size_t wlen = 0;
	double *lat, *dbl;
	size_t nl = 0, nd = 0;
	int ch, li, ufd, wfd = -1;
	long i;
	int64_t t0, next, step, last;
	MYSQL *m;
	struct kyu_config cfg;
	struct db *fdb = NULL;
	MYSQL_RES *res;
	MYSQL_ROW row;

	bench_db_defaults(&opt.db);
	opt.jobs = 1000;
	opt.rate = 50;
	opt.wait = 10;
	opt.queue = "default";
	while ((ch = getopt_long(argc, argv, "n:r:s:l:w:q:W:fh", lo, &li)) != -1) {
		switch (ch) {
		case 1: bench_db_option(&opt.db, lo[li].name, optarg); break;
		case 'n': opt.jobs = atol(optarg); break;
		case 'r': opt.rate = atof(optarg); break;
		case 's': opt.stamp = optarg; break;
		case 'l': opt.sock = optarg; break;
		case 'w': opt.wake = optarg; break;
		case 'q': opt.queue = optarg; break;
		case 'W': opt.wait = atof(optarg); break;
		case 'f': opt.floor = 1; break;
		case 'h': usage(stdout, 0); break;
		default: usage(stderr, 2);
		}
	}
	if (optind != argc || opt.jobs < 1 || opt.rate <= 0 || opt.stamp == NULL ||
	    opt.stamp[0] != '/' || strlen(opt.queue) > 64 || (opt.floor && opt.wake))
		usage(stderr, 2);
	if (opt.sock == NULL) {
		snprintf(defsock, sizeof defsock, "/tmp/kyu-latency.%d.sock", (int)getpid());
		opt.sock = defsock;
	}
	/* Written into JSON and SQL string literals unescaped. */
	if (strpbrk(opt.stamp, "\"\\'") || strpbrk(opt.sock, "\"\\'") || strpbrk(opt.queue, "\"\\'") ||
	    strlen(opt.sock) >= sizeof sun.sun_path) {
		fprintf(stderr, "latency: paths and queue must not contain quotes or backslashes\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, opt.sock);
	unlink(opt.sock);
	ufd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK, 0);
	if (ufd < 0 || bind(ufd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		fprintf(stderr, "latency: bind %s: %s\n", opt.sock, strerror(errno));
		return 1;
	}
	{
		/* Room for every stamp of a burst (a poll picks up many at once). */
		int big = 4 << 20;
		(void)setsockopt(ufd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
	}
	if (opt.wake != NULL) {
		wfd = wake_socket(opt.wake, &wsa, &wsalen);
		if (wfd < 0) {
			fprintf(stderr, "latency: bad --wake address %s\n", opt.wake);
			return 2;
		}
		wlen = (size_t)snprintf(wmsg, sizeof wmsg, "kyu:%s", opt.queue);
	}

	r.tag = (unsigned)getpid();
	r.sent = calloc((size_t)opt.jobs, sizeof *r.sent);
	r.started = calloc((size_t)opt.jobs, sizeof *r.started);
	r.ins_ms = calloc((size_t)opt.jobs, sizeof *r.ins_ms);
	lat = calloc((size_t)opt.jobs, sizeof *lat);
	dbl = calloc((size_t)opt.jobs, sizeof *dbl);
	if (!r.sent || !r.started || !r.ins_ms || !lat || !dbl) {
		fprintf(stderr, "latency: out of memory\n");
		return 1;
	}

	m = bench_connect(&opt.db);
	if (opt.floor) {
		/* Children are never waited for: let the kernel reap them. */
		signal(SIGCHLD, SIG_IGN);
		bench_kyu_config(&opt.db, NULL, &cfg);
		fdb = bench_kyu_connect(&cfg, 60);
		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "bench");
	}
	step = (int64_t)(1e9 / opt.rate);
	t0 = next = mono_ns();
	for (i = 0; i < opt.jobs; i++) {
		int64_t a, b;
		wait_stamps(ufd, &r, next);
		sql.len = 0;
		bench_buf_printf(&sql,
				 "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('lat-%u-%ld', '%s',"
				 " '[\"%s\", \"%s\", \"%u:%ld\"]')",
				 r.tag, i, opt.queue, opt.stamp, opt.sock, r.tag, i);
		a = mono_ns();
		r.sent[i] = a;
		if (mysql_real_query(m, sql.p, (unsigned long)sql.len) != 0) {
			fprintf(stderr, "latency: insert: %s\n", mysql_error(m));
			return 1;
		}
		if (wfd >= 0 && sendto(wfd, wmsg, wlen, 0, (struct sockaddr *)&wsa, wsalen) < 0 &&
		    errno != EAGAIN)
			fprintf(stderr, "latency: wake: %s\n", strerror(errno));
		b = mono_ns();
		if (opt.floor && floor_run(fdb, &cfg, host, i) < 0)
			return 1;
		r.ins_ms[i] = (double)(b - a) / 1e6;
		/* A steady rate: a slow INSERT does not shift the later ones. */
		next += step;
		if (next < b)
			next = b;
	}
	last = mono_ns();
	for (;;) {
		int64_t until = mono_ns() + 100000000LL;
		if (r.received >= opt.jobs || until > last + (int64_t)(opt.wait * 1e9))
			break;
		wait_stamps(ufd, &r, until);
	}
	drain(ufd, &r);
	close(ufd);
	unlink(opt.sock);

	for (i = 0; i < opt.jobs; i++)
		if (r.started[i] != 0)
			lat[nl++] = (double)(r.started[i] - r.sent[i]) / 1e6;

	bench_buf_printf(&qtext,
			 "SELECT TIMESTAMPDIFF(MICROSECOND, created_at, started_at) FROM kyu_jobs"
			 " WHERE id LIKE 'lat-%u-%%' AND started_at IS NOT NULL",
			 r.tag);
	if (mysql_real_query(m, qtext.p, (unsigned long)qtext.len) != 0 ||
	    (res = mysql_store_result(m)) == NULL) {
		fprintf(stderr, "latency: select: %s\n", mysql_error(m));
		return 1;
	}
	while ((row = mysql_fetch_row(res)) != NULL && nd < (size_t)opt.jobs)
		if (row[0] != NULL)
			dbl[nd++] = strtod(row[0], NULL) / 1e3;
	mysql_free_result(res);
	mysql_close(m);
	if (fdb) {
		db_free(fdb);
		config_free(&cfg);
	}

	printf("latency jobs=%ld rate=%.1f wake=%s received=%ld lost=%ld stray=%ld insert_secs=%.3f",
	       opt.jobs, opt.rate, opt.floor ? "floor" : opt.wake ? "client" : "none", r.received, opt.jobs - r.received,
	       r.stray, (double)(last - t0) / 1e9);
	print_dist("start", lat, nl);
	print_dist("insert", r.ins_ms, (size_t)opt.jobs);
	print_dist("dbclaim", dbl, nd);
	printf("\n");
	free(sql.p);
	free(qtext.p);
	return 0;
}
