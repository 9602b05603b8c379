/* The Prometheus text exposition (format 0.0.4) of the scoreboard and of the
 * per-queue figures read from the table. See metrics.h. */
#include "metrics.h"

#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"

enum kind { COUNTER, GAUGE, HISTOGRAM };

struct family {
	const char *name;
	enum kind kind;
	const char *help;
};

/* Every family, in the order rendered. man/kyud.8 (METRICS) lists each
 * name; tests/unit/test_metrics.c checks that it does. */
enum {
	F_STARTED,
	F_SUCCEEDED,
	F_FAILED,
	F_RETRIED,
	F_CANCELLED,
	F_TIMED_OUT,
	F_GIVEN_BACK,
	F_CLAIMS,
	F_DEADLOCKS,
	F_RECONNECTS,
	F_FENCES,
	F_RESTARTS,
	F_CLAIM_SECONDS,
	F_START_SECONDS,
	F_HEARTBEAT_SECONDS,
	F_BATCH,
	F_RUNNING,
	F_WORKERS,
	F_BUILD,
	F_WATCH_MODE,
	F_WATCH_HINTS,
	F_WATCH_EVENTS,
	F_WATCH_LAG,
	F_WATCH_RECONNECTS,
	F_DB_UP,
	F_TABLE_AGE,
	F_TABLE_SECONDS,
	F_Q_WAITING,
	F_Q_DUE,
	F_Q_RUNNING,
	F_Q_OLDEST,
	F_Q_BLOCKED,
	F_Q_RETRYING,
	F_Q_FAILED_1H,
	F_N
};

static const struct family families[F_N] = {
	[F_STARTED] = { "kyu_jobs_started_total", COUNTER,
			"Attempts whose process started, by queue." },
	[F_SUCCEEDED] = { "kyu_jobs_succeeded_total", COUNTER,
			  "Attempts that succeeded, by queue." },
	[F_FAILED] = { "kyu_jobs_failed_total", COUNTER,
		       "Jobs that failed for good (started or refused before starting), by queue." },
	[F_RETRIED] = { "kyu_jobs_retried_total", COUNTER,
			"Attempts that failed and left the job waiting for another, by queue." },
	[F_CANCELLED] = { "kyu_jobs_cancelled_total", COUNTER,
			  "Running jobs stopped because their row was cancelled, by queue." },
	[F_TIMED_OUT] = { "kyu_jobs_timed_out_total", COUNTER,
			  "Attempts killed at their time limit (also counted as failed or retried), by queue." },
	[F_GIVEN_BACK] = { "kyu_jobs_given_back_total", COUNTER,
			   "Claimed jobs given back to the table without starting, by queue." },
	[F_CLAIMS] = { "kyu_claims_total", COUNTER, "Claim round trips that completed." },
	[F_DEADLOCKS] = { "kyu_deadlocks_retried_total", COUNTER,
			  "Statements sent again after a deadlock or lock wait timeout." },
	[F_RECONNECTS] = { "kyu_reconnects_total", COUNTER,
			   "Database connections re-established after a loss." },
	[F_FENCES] = { "kyu_self_fences_total", COUNTER,
		       "Attempts killed because their lease could not be renewed in time." },
	[F_RESTARTS] = { "kyu_worker_restarts_total", COUNTER,
			 "Workers started again after one exited unexpectedly." },
	[F_CLAIM_SECONDS] = { "kyu_claim_duration_seconds", HISTOGRAM,
			      "Round trip of a claim (mark, select, piggybacked results)." },
	[F_START_SECONDS] = { "kyu_job_start_latency_seconds", HISTOGRAM,
			      "From when a job was due (its run_at, by the database clock) to the start "
			      "of its process." },
	[F_HEARTBEAT_SECONDS] = { "kyu_heartbeat_lag_seconds", HISTOGRAM,
				  "From when a lease renewal was due to its confirmation by the database." },
	[F_BATCH] = { "kyu_claim_batch_size", HISTOGRAM, "Jobs taken by one claim." },
	[F_RUNNING] = { "kyu_jobs_running", GAUGE, "Attempts this daemon runs now." },
	[F_WORKERS] = { "kyu_workers", GAUGE, "Workers configured ([kyud] workers)." },
	[F_BUILD] = { "kyu_build_info", GAUGE, "The running kyud's version (always 1)." },
	[F_WATCH_MODE] = { "kyu_watcher_mode", GAUGE,
			   "How the watcher finds committed changes now (1 for the mode in force): binlog, "
			   "poll or none." },
	[F_WATCH_HINTS] = { "kyu_watcher_hints_total", COUNTER,
			    "Wake-ups the watcher sent to the supervisor." },
	[F_WATCH_EVENTS] = { "kyu_watcher_binlog_events_total", COUNTER,
			     "Binary log events the watcher read." },
	[F_WATCH_LAG] = { "kyu_watcher_binlog_lag_seconds", GAUGE,
			  "How long after the server wrote it the watcher read the last binary log "
			  "event that carried a time." },
	[F_WATCH_RECONNECTS] = { "kyu_watcher_reconnects_total", COUNTER,
				 "Binary log streams or polling connections the watcher opened again." },
	[F_DB_UP] = { "kyu_database_up", GAUGE,
		      "1 when the last reading of the queue figures from the table succeeded." },
	[F_TABLE_AGE] = { "kyu_queue_figures_age_seconds", GAUGE,
			  "Age of the queue figures shown (read at most once per [kyud] metrics_interval)." },
	[F_TABLE_SECONDS] = { "kyu_queue_figures_query_seconds", GAUGE,
			      "How long the last reading of the queue figures took." },
	[F_Q_WAITING] = { "kyu_queue_waiting", GAUGE, "Waiting jobs (due or not), by queue." },
	[F_Q_DUE] = { "kyu_queue_due", GAUGE, "Waiting jobs that are due now, by queue." },
	[F_Q_RUNNING] = { "kyu_queue_running", GAUGE, "Running jobs on every daemon, by queue." },
	[F_Q_BLOCKED] = { "kyu_queue_blocked", GAUGE,
			  "Jobs waiting for the jobs they run after to end, by queue." },
	[F_Q_RETRYING] = { "kyu_queue_retrying", GAUGE,
			   "Waiting jobs whose last attempt failed (attempts > 0), by queue." },
	[F_Q_FAILED_1H] = { "kyu_queue_failed_attempts_1h", GAUGE,
			    "Attempts that failed in the last hour on every daemon (retried or failed for good; "
			    "kyu_minutes), by queue." },
	[F_Q_OLDEST] = { "kyu_queue_oldest_due_age_seconds", GAUGE,
			 "How long the longest-due waiting job has been due, by queue (0: none due)." },
};

const char *metrics_family_at(size_t i)
{
	return i < F_N ? families[i].name : NULL;
}

static void header(struct strbuf *sb, int f)
{
	static const char *const kinds[] = { "counter", "gauge", "histogram" };
	sb_printf(sb, "# HELP %s %s\n# TYPE %s %s\n", families[f].name, families[f].help,
		  families[f].name, kinds[families[f].kind]);
}

/* A label value: backslash, double quote and newline escaped, as the
 * format requires; queue names come from rows. */
static void label_value(struct strbuf *sb, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			sb_adds(sb, "\\\\");
		else if (*v == '"')
			sb_adds(sb, "\\\"");
		else if (*v == '\n')
			sb_adds(sb, "\\n");
		else
			sb_add(sb, v, 1);
	}
}

static void queue_sample(struct strbuf *sb, int f, const char *queue)
{
	sb_adds(sb, families[f].name);
	sb_adds(sb, "{queue=\"");
	label_value(sb, queue);
	sb_adds(sb, "\"} ");
}

/* The per-queue job counters of every worker, merged by name. */
struct qsum {
	const char *name;
	uint64_t n[BJ_N];
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct qsum *)a)->name, ((const struct qsum *)b)->name);
}

static int merge_queues(const struct board *b, struct qsum **ret)
{
	struct qsum *q = NULL;
	int n = 0, cap = 0;

	for (int w = 0; w < BOARD_MAX_WORKERS; w++) {
		const struct board_worker *bw = &b->worker[w];
		uint32_t nq = board_n_queues(bw);
		for (uint32_t i = 0; i <= nq; i++) {
			/* i == nq stands for the overflow entry. */
			const struct board_queue *e = &bw->queue[i == nq ? BOARD_QUEUES : i];
			int k;
			if (i == nq && !e->name[0])
				continue;
			for (k = 0; k < n && strcmp(q[k].name, e->name) != 0; k++)
				;
			if (k == n) {
				if (n == cap) {
					cap = cap ? cap * 2 : 16;
					q = xrealloc(q, (size_t)cap * sizeof(*q));
				}
				memset(&q[n], 0, sizeof(q[n]));
				q[n++].name = e->name;
			}
			for (int j = 0; j < BJ_N; j++)
				q[k].n[j] += board_load(&e->n[j]);
		}
	}
	if (n > 1)
		qsort(q, (size_t)n, sizeof(*q), by_name);
	*ret = q;
	return n;
}

static uint64_t sum_counter(const struct board *b, enum board_counter c)
{
	uint64_t t = 0;
	for (int w = 0; w < BOARD_MAX_WORKERS; w++)
		t += board_load(&b->worker[w].counter[c]);
	return t;
}

static void render_histogram(struct strbuf *sb, const struct board *b, int f, enum board_hist h)
{
	const double *bounds = board_bounds(h);
	uint64_t bucket[BOARD_BUCKETS + 1] = { 0 }, sum = 0, cum = 0;

	for (int w = 0; w < BOARD_MAX_WORKERS; w++) {
		const struct board_histogram *hg = &b->worker[w].hist[h];
		for (int i = 0; i <= BOARD_BUCKETS; i++)
			bucket[i] += board_load(&hg->bucket[i]);
		sum += board_load(&hg->sum);
	}
	header(sb, f);
	for (int i = 0; i <= BOARD_BUCKETS; i++) {
		cum += bucket[i];
		if (i < BOARD_BUCKETS)
			sb_printf(sb, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", families[f].name,
				  bounds[i], cum);
		else
			sb_printf(sb, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n", families[f].name,
				  cum);
	}
	if (h == BH_BATCH)
		sb_printf(sb, "%s_sum %" PRIu64 "\n", families[f].name, sum);
	else
		sb_printf(sb, "%s_sum %.6f\n", families[f].name, (double)sum / 1e6);
	sb_printf(sb, "%s_count %" PRIu64 "\n", families[f].name, cum);
}

void metrics_render(struct strbuf *sb, const struct board *b, int workers,
		    const struct metrics_table *t)
{
	static const int job_family[BJ_N] = {
		[BJ_STARTED] = F_STARTED,       [BJ_SUCCEEDED] = F_SUCCEEDED,
		[BJ_FAILED] = F_FAILED,         [BJ_RETRIED] = F_RETRIED,
		[BJ_CANCELLED] = F_CANCELLED,   [BJ_TIMED_OUT] = F_TIMED_OUT,
		[BJ_GIVEN_BACK] = F_GIVEN_BACK,
	};
	static const struct {
		int f;
		enum board_counter c;
	} counters[] = {
		{ F_CLAIMS, BC_CLAIMS },
		{ F_DEADLOCKS, BC_DEADLOCKS },
		{ F_RECONNECTS, BC_RECONNECTS },
		{ F_FENCES, BC_FENCES },
	};
	static const struct {
		int f;
		enum board_hist h;
	} hists[] = {
		{ F_CLAIM_SECONDS, BH_CLAIM },
		{ F_START_SECONDS, BH_START },
		{ F_HEARTBEAT_SECONDS, BH_HEARTBEAT },
		{ F_BATCH, BH_BATCH },
	};
	struct qsum *q;
	int nq = merge_queues(b, &q);
	uint64_t running = 0;

	for (int j = 0; j < BJ_N; j++) {
		header(sb, job_family[j]);
		for (int k = 0; k < nq; k++) {
			queue_sample(sb, job_family[j], q[k].name);
			sb_printf(sb, "%" PRIu64 "\n", q[k].n[j]);
		}
	}
	free(q);
	for (size_t i = 0; i < sizeof(counters) / sizeof(counters[0]); i++) {
		header(sb, counters[i].f);
		sb_printf(sb, "%s %" PRIu64 "\n", families[counters[i].f].name,
			  sum_counter(b, counters[i].c));
	}
	header(sb, F_RESTARTS);
	sb_printf(sb, "%s %" PRIu64 "\n", families[F_RESTARTS].name,
		  board_load(&b->worker_restarts));
	for (size_t i = 0; i < sizeof(hists) / sizeof(hists[0]); i++)
		render_histogram(sb, b, hists[i].f, hists[i].h);

	running = board_running(b);
	header(sb, F_RUNNING);
	sb_printf(sb, "%s %" PRIu64 "\n", families[F_RUNNING].name, running);
	header(sb, F_WORKERS);
	sb_printf(sb, "%s %d\n", families[F_WORKERS].name, workers);
	header(sb, F_BUILD);
	sb_printf(sb, "%s{version=\"%s\"} 1\n", families[F_BUILD].name, KYU_VERSION);
	{
		static const char *const modes[] = {
			[BW_NONE] = "none", [BW_BINLOG] = "binlog", [BW_POLL] = "poll"
		};
		uint64_t m = board_load(&b->watch.mode);
		header(sb, F_WATCH_MODE);
		sb_printf(sb, "%s{mode=\"%s\"} 1\n", families[F_WATCH_MODE].name,
			  m < sizeof(modes) / sizeof(modes[0]) ? modes[m] : "none");
		header(sb, F_WATCH_HINTS);
		sb_printf(sb, "%s %" PRIu64 "\n", families[F_WATCH_HINTS].name,
			  board_load(&b->watch.hints));
		header(sb, F_WATCH_EVENTS);
		sb_printf(sb, "%s %" PRIu64 "\n", families[F_WATCH_EVENTS].name,
			  board_load(&b->watch.events));
		header(sb, F_WATCH_LAG);
		sb_printf(sb, "%s %.6f\n", families[F_WATCH_LAG].name,
			  (double)board_load(&b->watch.lag_us) / 1e6);
		header(sb, F_WATCH_RECONNECTS);
		sb_printf(sb, "%s %" PRIu64 "\n", families[F_WATCH_RECONNECTS].name,
			  board_load(&b->watch.reconnects));
	}

	if (!t || !t->read)
		return;
	header(sb, F_DB_UP);
	sb_printf(sb, "%s %d\n", families[F_DB_UP].name, t->ok ? 1 : 0);
	header(sb, F_TABLE_AGE);
	sb_printf(sb, "%s %.3f\n", families[F_TABLE_AGE].name, t->age);
	header(sb, F_TABLE_SECONDS);
	sb_printf(sb, "%s %.6f\n", families[F_TABLE_SECONDS].name, t->took);
	{
		static const int qf[] = { F_Q_WAITING, F_Q_DUE,      F_Q_RUNNING,  F_Q_BLOCKED,
					  F_Q_OLDEST,  F_Q_RETRYING, F_Q_FAILED_1H };
		for (size_t i = 0; i < sizeof(qf) / sizeof(qf[0]); i++) {
			if ((qf[i] == F_Q_RETRYING && !t->has_retrying) ||
			    (qf[i] == F_Q_FAILED_1H && !t->has_failed_1h))
				continue;
			header(sb, qf[i]);
			for (int k = 0; k < t->n; k++) {
				const struct metrics_queue *m = &t->queues[k];
				queue_sample(sb, qf[i], m->name);
				if (qf[i] == F_Q_OLDEST)
					sb_printf(sb, "%.3f\n", m->oldest_due_age);
				else
					sb_printf(sb, "%" PRIu64 "\n",
						  qf[i] == F_Q_WAITING     ? m->waiting
						  : qf[i] == F_Q_DUE       ? m->due
						  : qf[i] == F_Q_BLOCKED   ? m->blocked
						  : qf[i] == F_Q_RETRYING  ? m->retrying
						  : qf[i] == F_Q_FAILED_1H ? m->failed_attempts_1h
									   : m->running);
			}
		}
	}
}

void metrics_table_clear(struct metrics_table *t)
{
	for (int i = 0; i < t->n; i++)
		free(t->queues[i].name);
	free(t->queues);
	t->queues = NULL;
	t->n = 0;
	t->has_retrying = t->has_failed_1h = false;
}

int metrics_listen(const char *hostport, char *err, size_t errlen)
{
	struct addrinfo *ai = NULL;
	int fd, r, one = 1;

	fd = net_socket("metrics", hostport, SOCK_STREAM, SOCK_NONBLOCK, true, &ai, err, errlen);
	if (fd < 0)
		return fd;
	/* A restarted kyud must be able to bind while old connections linger
	 * in TIME_WAIT; it does not let two listeners share the port. */
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot serve metrics on tcp %s: %s", hostport,
			 strerror(errno));
		close(fd);
		fd = r;
	}
	freeaddrinfo(ai);
	return fd;
}
