/* The HTTP server of kyud-metrics, the metrics process. See metricsd.h. */
#include "metricsd.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <ev.h>
#include <microhttpd.h>

#include "common/board.h"
#include "common/db.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/minutes.h"
#include "common/proto.h"
#include "common/spell.h"
#include "common/util.h"

/* Bounds on what scrapers may hold: Prometheus opens one connection per
 * scrape; a few more cover a second scraper and a person with curl. */
#define MAX_CONNECTIONS 16
#define CONNECTION_TIMEOUT 10 /* seconds */
/* The table is read inside a scrape: it must end well within Prometheus'
 * default scrape timeout (10 s), connection included. */
#define QUERY_DEADLINE 4.0

/* Per queue, in one pass over the waiting, running and blocked rows, read from
 * the index kyu_jobs_status_queue_due alone (it holds every column used;
 * finished rows, however many, are not touched). The statement limit
 * keeps a huge backlog from holding the scrape, and the server, for long. */
#define TABLE_SQL                                                                                  \
	"SET STATEMENT max_statement_time = 3 FOR "                                                \
	"SELECT queue, SUM(status = 'waiting'), SUM(status = 'waiting' AND due <= NOW(6)), "       \
	"SUM(status = 'running'), "                                                                \
	"GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, "                                         \
	"MIN(IF(status = 'waiting', due, NULL)), NOW(6)), 0)), SUM(status = 'blocked') "           \
	"FROM kyu_jobs WHERE status IN ('waiting', 'running', 'blocked') GROUP BY queue "          \
	"ORDER BY queue"

/* Per queue, its waiting jobs whose last attempt failed: read from the
 * waiting rows themselves (attempts is in no index), so a statement of its
 * own, which a huge backlog may make fail alone. */
#define RETRYING_SQL                                                                               \
	"SET STATEMENT max_statement_time = 2 FOR "                                                \
	"SELECT queue, COUNT(*) FROM kyu_jobs WHERE status = 'waiting' AND attempts > 0 "          \
	"GROUP BY queue"
/* Per queue, the attempts that failed in the last hour on every daemon,
 * as kyud counts them (kyu_minutes, schema version 4); queues without
 * any are left out, as they would otherwise appear in every family. */
#define FAILED_1H_SQL                                                                              \
	"SET STATEMENT max_statement_time = 2 FOR "                                                \
	"SELECT queue, SUM(failed) + SUM(retried) FROM kyu_minutes WHERE minute > " MINUTES_NOW    \
	" - INTERVAL 60 MINUTE GROUP BY queue HAVING SUM(failed) + SUM(retried) > 0"

struct mctx {
	struct kyu_config cfg;
	struct ev_loop *loop;
	struct board *board;
	struct MHD_Daemon *mhd;
	struct db *db;
	struct metrics_table table;
	double read_at;       /* monotonic; 0: never */
	struct spell failing; /* the readings fail (logged once per spell) */
	ev_io mhd_w, ctl_w;
	ev_timer mhd_tmo_w;
	ev_signal term_w, int_w;
};

/* ---- the table's figures ------------------------------------------------- */

static uint64_t to_u64(const char *s)
{
	return s ? strtoull(s, NULL, 10) : 0;
}

/* The entry of the queue named, made (with zero figures) when the main
 * reading had none: a queue whose jobs all failed for good has failed
 * attempts and no live rows. */
static struct metrics_queue *queue_of(struct metrics_table *t, const char *name, size_t *cap)
{
	for (int i = 0; i < t->n; i++)
		if (strcmp(t->queues[i].name, name) == 0)
			return &t->queues[i];
	if ((size_t)t->n == *cap) {
		*cap = *cap ? 2 * *cap : 16;
		t->queues = xrealloc(t->queues, *cap * sizeof(*t->queues));
	}
	memset(&t->queues[t->n], 0, sizeof(*t->queues));
	t->queues[t->n].name = xstrdup(name);
	return &t->queues[t->n++];
}

/* One of the extra readings (RETRYING_SQL, FAILED_1H_SQL): false when it
 * failed, which leaves its family out; logged at debug only, since an
 * older schema fails FAILED_1H_SQL at every reading. */
static bool read_extra(struct mctx *m, const char *sql, bool retrying, size_t *cap)
{
	const struct db_reply *reply = NULL;
	const struct db_result *res;

	if (db_query(m->db, sql, strlen(sql), &reply) != DB_OK || reply->n < 1) {
		log_debug("cannot read %s for /metrics: %s",
			  retrying ? "the retrying jobs" : "the failed attempts",
			  reply && reply->err ? reply->err : "no result");
		return false;
	}
	res = &reply->r[reply->n - 1];
	for (size_t i = 0; i < res->n_rows; i++) {
		struct metrics_queue *q =
			queue_of(&m->table, db_cell(res, i, 0) ? db_cell(res, i, 0) : "", cap);
		if (retrying)
			q->retrying = to_u64(db_cell(res, i, 1));
		else
			q->failed_attempts_1h = to_u64(db_cell(res, i, 1));
	}
	return true;
}

static void read_table(struct mctx *m)
{
	size_t cap;
	const struct db_reply *reply;
	const struct db_result *res;
	double t0 = mono_now();
	const char *why;

	m->table.read = true;
	m->read_at = t0;
	metrics_table_clear(&m->table);
	m->table.ok = false;
	if (!db_connected(m->db) && db_connect(m->db, &m->cfg) < 0) {
		why = db_error(m->db);
		goto failed;
	}
	if (db_query(m->db, TABLE_SQL, strlen(TABLE_SQL), &reply) != DB_OK || reply->n < 1) {
		why = reply->err ? reply->err : "no result";
		goto failed;
	}
	res = &reply->r[reply->n - 1];
	cap = res->n_rows ? res->n_rows : 1;
	m->table.queues = xcalloc(cap, sizeof(*m->table.queues));
	for (size_t i = 0; i < res->n_rows; i++) {
		struct metrics_queue *q = &m->table.queues[m->table.n++];
		q->name = xstrdup(db_cell(res, i, 0) ? db_cell(res, i, 0) : "");
		q->waiting = to_u64(db_cell(res, i, 1));
		q->due = to_u64(db_cell(res, i, 2));
		q->running = to_u64(db_cell(res, i, 3));
		q->oldest_due_age = (double)to_u64(db_cell(res, i, 4)) / 1e6;
		q->blocked = to_u64(db_cell(res, i, 5));
	}
	/* res is the reply's, which the next statement replaces. */
	m->table.has_retrying = read_extra(m, RETRYING_SQL, true, &cap);
	m->table.has_failed_1h = read_extra(m, FAILED_1H_SQL, false, &cap);
	m->table.ok = true;
	m->table.took = mono_now() - t0;
	if (spell_end(&m->failing))
		log_notice("queue figures readable again");
	return;
failed:
	m->table.took = mono_now() - t0;
	/* Once per spell: every scrape would repeat it. */
	if (spell_begin(&m->failing))
		log_warn("cannot read the queue figures for /metrics: %s", why);
}

/* ---- HTTP ------------------------------------------------------------------ */

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned status, const char *type,
				  char *body, size_t len)
{
	struct MHD_Response *resp;
	enum MHD_Result r;

	resp = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

static enum MHD_Result plain(struct MHD_Connection *conn, unsigned status, const char *text)
{
	return reply_text(conn, status, "text/plain; charset=utf-8", xstrdup(text), strlen(text));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct mctx *m = cls;
	struct strbuf sb = { 0 };
	double now = mono_now();
	(void)version;
	(void)upload_data;
	(void)req_cls;

	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		/* A body (of a POST, say) is not read: the answer comes first
		 * and the connection closes after it. */
		*upload_data_size = 0;
		return plain(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n");
	}
	if (strcmp(url, "/") == 0)
		return plain(conn, MHD_HTTP_OK, "kyud: metrics at /metrics\n");
	if (strcmp(url, "/metrics") != 0)
		return plain(conn, MHD_HTTP_NOT_FOUND, "not found; metrics are at /metrics\n");
	if (m->read_at == 0 || now - m->read_at >= m->cfg.metrics_interval)
		read_table(m);
	m->table.age = mono_now() - m->read_at;
	metrics_render(&sb, m->board, m->cfg.workers, &m->table);
	return reply_text(conn, MHD_HTTP_OK, METRICS_CONTENT_TYPE, sb.buf, sb.len);
}

/* Run what libmicrohttpd has to do, then wake up again when it next
 * needs to (a connection's timeout). */
static void mhd_pump(struct mctx *m)
{
	MHD_UNSIGNED_LONG_LONG ms = 0;

	MHD_run(m->mhd);
	ev_timer_stop(m->loop, &m->mhd_tmo_w);
	if (MHD_get_timeout(m->mhd, &ms) == MHD_YES) {
		ev_timer_set(&m->mhd_tmo_w, (double)ms / 1000.0, 0.);
		ev_timer_start(m->loop, &m->mhd_tmo_w);
	}
}

static void on_mhd_io(EV_P_ ev_io *w, int revents)
{
	(void)EV_A;
	(void)revents;
	mhd_pump(w->data);
}

static void on_mhd_timeout(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	mhd_pump(t->data);
}

/* The supervisor's end closing (it died) or any message from it (it only
 * sends KYU_STOP or KYU_STOP_NOW): stop serving. */
static void on_ctl(EV_P_ ev_io *w, int revents)
{
	struct msg msg;
	ssize_t n = proto_recv(PROTO_FD, &msg, NULL);
	(void)w;
	(void)revents;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	ev_break(EV_A_ EVBREAK_ALL);
}

static void on_stop_signal(EV_P_ ev_signal *w, int revents)
{
	(void)w;
	(void)revents;
	ev_break(EV_A_ EVBREAK_ALL);
}

/* No capability: kyud may hold CAP_SETUID and CAP_SETGID for its jobs, and
 * this process talks to the network. */
static int drop_capabilities(void)
{
	cap_t none = cap_init();
	int r;

	if (!none)
		return -errno;
	(void)cap_reset_ambient();
	r = cap_set_proc(none) < 0 ? -errno : 0;
	cap_free(none);
	if (r == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		r = -errno;
	return r;
}

int metricsd_main(struct kyu_config *cfg)
{
	struct mctx *m = xcalloc(1, sizeof(*m));
	const union MHD_DaemonInfo *info;
	int rc = 1, r;

	m->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	m->loop = EV_DEFAULT;
	signal(SIGPIPE, SIG_IGN);
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);

	r = drop_capabilities();
	if (r < 0) {
		log_err("cannot drop capabilities: %s", strerror(-r));
		goto out;
	}
	r = board_map(METRICS_BOARD_FD, false, &m->board);
	if (r < 0) {
		log_err("cannot map the scoreboard (fd %d): %s", METRICS_BOARD_FD, strerror(-r));
		goto out;
	}
	close(METRICS_BOARD_FD);
	m->db = db_new(NULL, QUERY_DEADLINE);
	/* The logger first: the library reports options after it through it. */
	m->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, m,
				  MHD_OPTION_EXTERNAL_LOGGER, log_library_line,
				  (void *)(uintptr_t) "http", MHD_OPTION_LISTEN_SOCKET,
				  (MHD_socket)METRICS_LISTEN_FD, MHD_OPTION_CONNECTION_LIMIT,
				  (unsigned)MAX_CONNECTIONS, MHD_OPTION_CONNECTION_TIMEOUT,
				  (unsigned)CONNECTION_TIMEOUT, MHD_OPTION_END);
	if (!m->mhd) {
		log_err("cannot start the HTTP server on %s (fd %d)", m->cfg.metrics,
			METRICS_LISTEN_FD);
		goto out;
	}
	info = MHD_get_daemon_info(m->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!info) {
		log_err("the HTTP library has no epoll descriptor to watch");
		goto out;
	}
	ev_io_init(&m->mhd_w, on_mhd_io, info->epoll_fd, EV_READ);
	m->mhd_w.data = m;
	ev_io_start(m->loop, &m->mhd_w);
	ev_init(&m->mhd_tmo_w, on_mhd_timeout);
	m->mhd_tmo_w.data = m;
	ev_io_init(&m->ctl_w, on_ctl, PROTO_FD, EV_READ);
	ev_io_start(m->loop, &m->ctl_w);
	ev_signal_init(&m->term_w, on_stop_signal, SIGTERM);
	ev_signal_start(m->loop, &m->term_w);
	ev_signal_init(&m->int_w, on_stop_signal, SIGINT);
	ev_signal_start(m->loop, &m->int_w);
	log_info("serving metrics on http://%s/metrics", m->cfg.metrics);

	ev_run(m->loop, 0);
	rc = 0;
out:
	if (m->mhd)
		MHD_stop_daemon(m->mhd);
	if (m->db)
		db_free(m->db);
	board_unmap(m->board);
	metrics_table_clear(&m->table);
	config_free(&m->cfg);
	free(m);
	return rc;
}
