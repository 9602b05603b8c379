#include "webapi.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/capture.h"
#include "common/db.h"
#include "common/lock.h"
#include "common/log.h"
#include "common/minutes.h"
#include "common/util.h"

/* A page's statement must not hold the server (or the page) for long,
 * whatever the table's size; the connection's own deadline is a little
 * longer, so that the server's error, which names the limit, is the one
 * seen. */
#define STMT_LIMIT "SET STATEMENT max_statement_time = 5 FOR "
#define DB_DEADLINE 8.0
#define RETRY_WINDOW 5000
#define HOUR_CACHE 30.0 /* seconds, for a schema without kyu_minutes */

struct webapi {
	const struct kyu_config *cfg;
	struct db *db;
	bool failing; /* the last statement failed, and that was logged */
	/* Without kyu_minutes: the overview's last-hour rows, [queue,
	 * succeeded?, minutes ago, count], for all queues (0) and per queue
	 * (1), read at hour_at. */
	json_t *hour[2];
	double hour_at;
	bool hour_per_queue;
};

struct webapi *webapi_new(const struct kyu_config *cfg)
{
	struct webapi *w = xcalloc(1, sizeof(*w));

	w->cfg = cfg;
	w->db = db_new(NULL, DB_DEADLINE);
	return w;
}

void webapi_free(struct webapi *w)
{
	if (!w)
		return;
	db_free(w->db);
	json_decref(w->hour[0]);
	json_decref(w->hour[1]);
	free(w);
}

/* ---- JSON from rows ------------------------------------------------------- */

/* Decode one UTF-8 sequence at s (n bytes left); its length, or 0 when it
 * is not a valid, shortest-form sequence of a scalar value. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	unsigned cp;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1fu;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0fu;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07u;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3fu);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

json_t *webapi_text(const char *s, size_t len)
{
	struct strbuf sb = { 0 };
	const unsigned char *p = (const unsigned char *)s;
	json_t *j;
	size_t i = 0;

	j = memchr(s, '\0', len) ? NULL : json_stringn(s, len);
	if (j)
		return j;
	/* Invalid UTF-8 (or a NUL byte, which jansson takes but a page
	 * should not show): rebuild it. */
	while (i < len) {
		size_t n = p[i] ? utf8_seq(p + i, len - i) : 0;
		if (n) {
			sb_add(&sb, s + i, n);
			i += n;
		} else {
			sb_adds(&sb, "\xef\xbf\xbd");
			i++;
		}
	}
	j = json_stringn(sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return j;
}

static bool is_numeric(const char *name, const char *const *numeric)
{
	for (size_t i = 0; numeric && numeric[i]; i++)
		if (strcmp(name, numeric[i]) == 0)
			return true;
	return false;
}

/* Number.MAX_SAFE_INTEGER: 2^53 - 1. */
#define JS_SAFE_INT 9007199254740991LL

static json_t *cell_json(const struct db_result *r, size_t row, unsigned col, const char *const *numeric)
{
	const char *v = db_cell(r, row, col);
	size_t len = r->lens[row * r->n_cols + col];
	char *end;

	if (!v)
		return json_null();
	if (is_numeric(r->names[col], numeric)) {
		long long i;
		double d;
		errno = 0;
		i = strtoll(v, &end, 10);
		/* A JavaScript number holds integers exactly up to 2^53 only: a
		 * larger one (a BIGINT UNSIGNED beyond that) would be shown
		 * rounded, so it goes as its decimal text. */
		if (errno == 0 && end != v && *end == '\0' && i <= JS_SAFE_INT && i >= -JS_SAFE_INT)
			return json_integer(i);
		if (end != v && *end == '\0')
			return webapi_text(v, len);
		d = strtod(v, &end);
		if (end != v && *end == '\0')
			return json_real(d);
	}
	return webapi_text(v, len);
}

/* Each row as an object keyed by column name. */
static json_t *rows_json(const struct db_result *r, size_t max_rows, const char *const *numeric)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < r->n_rows && i < max_rows; i++) {
		json_t *o = json_object();
		for (unsigned c = 0; c < r->n_cols; c++)
			json_object_set_new(o, r->names[c], cell_json(r, i, c, numeric));
		json_array_append_new(rows, o);
	}
	return rows;
}

static unsigned fail(json_t **out, unsigned status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static unsigned fail(json_t **out, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*out = json_pack("{s:o}", "error", webapi_text(msg, strlen(msg)));
	return status;
}

/* ---- the database ------------------------------------------------------------ */

/* Run sql; its last result in *res. A read whose connection was found
 * gone (the server restarted, or dropped an idle session) is sent once
 * more on a new one; a change is not: it may have been applied. */
static int run_once(struct webapi *w, const char *sql, size_t len, const struct db_result **res,
		    bool resend)
{
	const struct db_reply *reply = NULL;
	enum db_fail f = DB_LOST;

	for (int attempt = 0; attempt < (resend ? 2 : 1) && f == DB_LOST; attempt++) {
		if (!db_connected(w->db) && db_connect(w->db, w->cfg) < 0) {
			if (!w->failing)
				log_warn("database: %s", db_error(w->db));
			w->failing = true;
			return -1;
		}
		f = db_query(w->db, sql, len, &reply);
	}
	if (f != DB_OK || !reply || reply->n < 1) {
		/* Once per spell: every page refresh would repeat it. */
		if (!w->failing && (f == DB_LOST || !db_connected(w->db)))
			log_warn("database: %s", db_error(w->db));
		w->failing = f == DB_LOST || !db_connected(w->db);
		return -1;
	}
	if (w->failing)
		log_notice("database reachable again");
	w->failing = false;
	*res = &reply->r[reply->n - 1];
	return 0;
}

static int run(struct webapi *w, const char *sql, size_t len, const struct db_result **res)
{
	return run_once(w, sql, len, res, true);
}

static unsigned db_failed(struct webapi *w, json_t **out, const char *what)
{
	return fail(out, 503, "%s: database: %s", what, db_error(w->db));
}

/* Whether the current database has the table (kyu_schedules, kyu_locks
 * and kyu_daemons come with schema versions; a page works without). */
static int has_table(struct webapi *w, const char *table, bool *ret)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc;

	sb_adds(&sb, "SELECT COUNT(*) FROM information_schema.tables "
		     "WHERE table_schema = DATABASE() AND table_name = ");
	db_quotes(&sb, table);
	rc = run(w, sb.buf, sb.len, &r);
	if (rc == 0)
		*ret = r->n_rows == 1 && db_cell(r, 0, 0) && strcmp(db_cell(r, 0, 0), "0") != 0;
	sb_free(&sb);
	return rc;
}

/* A page of rows: the first WEBAPI_PAGE of r (the statement asked for one
 * more, to know whether there is a next page) and the next page's cursor,
 * made of the last row's cursor columns. */
static json_t *page_json(const struct db_result *r, const char *const *numeric, int t_col, int seq_col)
{
	json_t *next = json_null();

	if (r->n_rows > WEBAPI_PAGE) {
		const char *seq = db_cell(r, WEBAPI_PAGE - 1, (unsigned)seq_col);
		const char *t = t_col >= 0 ? db_cell(r, WEBAPI_PAGE - 1, (unsigned)t_col) : NULL;
		char buf[128];
		if (t_col >= 0)
			snprintf(buf, sizeof(buf), "%s,%s", t ? t : "", seq ? seq : "0");
		else
			snprintf(buf, sizeof(buf), "%s", seq ? seq : "0");
		json_decref(next);
		next = json_string(buf);
	}
	return json_pack("{s:o, s:o}", "rows", rows_json(r, WEBAPI_PAGE, numeric), "next", next);
}

int webapi_parse_cursor(const char *s, char *time, size_t timelen, unsigned long long *seq)
{
	const char *comma = s ? strrchr(s, ',') : NULL;
	int64_t v;
	size_t n;

	if (!comma)
		return -EINVAL;
	n = (size_t)(comma - s);
	/* "2026-11-24 06:35:00.123456": digits, '-', ' ', ':', '.' only. */
	if (n == 0 || n >= timelen || strspn(s, "0123456789-: .") != n)
		return -EINVAL;
	if (parse_i64(comma + 1, 0, INT64_MAX, &v) < 0)
		return -EINVAL;
	memcpy(time, s, n);
	time[n] = '\0';
	*seq = (unsigned long long)v;
	return 0;
}

/* ---- pages -------------------------------------------------------------------- */

static const char *const count_cols[] = { "waiting", "due", "running", "oldest_due_age", "paused",
					  "max_running", "rate_limit", "rate_period", "weight",
					  "max_waiting", "n", "ago", NULL };

static json_t *zero_minutes(void)
{
	json_t *per_minute = json_array();

	for (int i = 0; i < 60; i++)
		json_array_append_new(per_minute, json_integer(0));
	return per_minute;
}

static json_t *queue_entry(json_t *queues, const char *name, bool per_queue)
{
	json_t *q = json_object_get(queues, name);

	if (!q) {
		q = json_pack("{s:s, s:i, s:i, s:i, s:f, s:b, s:n, s:n, s:n, s:i, s:n, s:i, s:o, s:n, s:o}",
			      "queue", name, "waiting", 0, "due", 0, "running", 0, "oldest_due_age", 0.0,
			      "paused", 0, "max_running", "rate_limit", "rate_period", "weight", 1,
			      "max_waiting", "failed_1h", 0, "succeeded_1h",
			      per_queue ? json_integer(0) : json_null(), "retried_1h", "per_minute",
			      per_queue ? zero_minutes() : json_null());
		/* true once it has a kyu_queues row (which reset removes). */
		json_object_set_new(q, "settings", json_false());
		json_object_set_new(queues, name, q);
	}
	return q;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Add n to the integer at key k of o, and to minute slot (ago minutes
 * back; the array runs from the oldest minute to the current one) of its
 * per_minute array. */
static void count_ended(json_t *o, const char *k, long long ago, long long n)
{
	json_t *pm = json_object_get(o, "per_minute");
	size_t slot = (size_t)(59 - (ago < 0 ? 0 : ago > 59 ? 59 : ago));

	json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + n));
	if (json_is_array(pm))
		json_array_set_new(pm, slot, json_integer(json_integer_value(json_array_get(pm, slot)) + n));
}

/* The last hour from kyu_minutes (schema version 4 or later), which kyud
 * writes as jobs end: a row per minute, queue and worker, however many
 * jobs ended. *rows gets [queue, minutes ago, succeeded, failed, retried]
 * per queue and minute; NULL when the table is not there or not
 * readable. */
static int read_minutes(struct webapi *w, json_t **rows)
{
	static const char q[] = STMT_LIMIT MINUTES_HOUR_SQL;
	const struct db_result *r;

	unsigned e;

	*rows = NULL;
	if (run(w, q, sizeof(q) - 1, &r) < 0) {
		/* An older schema, or an account granted the tables one by
		 * one before there was this one: the page still works. */
		e = db_connected(w->db) ? db_error_code(w->db) : 0;
		return e == ER_NO_SUCH_TABLE || e == ER_TABLEACCESS_DENIED_ERROR ? 0 : -1;
	}
	*rows = json_array();
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *row = json_pack("[o]", webapi_text(db_cell(r, i, 0) ? db_cell(r, i, 0) : "",
							   r->lens[i * r->n_cols]));
		for (unsigned c = 1; c < 5; c++)
			json_array_append_new(row, json_integer(strtoll(db_cell(r, i, c) ? db_cell(r, i, c) : "0",
									NULL, 10)));
		json_array_append_new(*rows, row);
	}
	return 0;
}

/* Add a row of read_minutes to o (a queue's entry, or all queues'). */
static void count_minute(json_t *o, json_t *row)
{
	long long ago = json_integer_value(json_array_get(row, 1));

	count_ended(o, "succeeded_1h", ago, json_integer_value(json_array_get(row, 2)));
	count_ended(o, "failed_1h", ago, json_integer_value(json_array_get(row, 3)));
	json_object_set_new(o, "retried_1h",
			    json_integer(json_integer_value(json_object_get(o, "retried_1h")) +
					 json_integer_value(json_array_get(row, 4))));
}

/* Whether kyu_jobs has an index starting (status, updated_at, queue): then
 * the jobs that ended in the last hour are counted per queue from the
 * index alone. Without it, kyu_jobs_finished (status, updated_at) counts
 * them for all queues at once, and only the failed ones, few unless
 * everything fails, are counted per queue (a row read each). */
static int have_queue_hour_index(struct webapi *w, bool *ret)
{
	static const char q[] =
		"SELECT COUNT(*) FROM (SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) AS cols "
		"FROM information_schema.statistics WHERE table_schema = DATABASE() "
		"AND table_name = 'kyu_jobs' GROUP BY index_name) AS i "
		"WHERE cols LIKE 'status,updated\\_at,queue%'";
	const struct db_result *r;

	if (run(w, q, sizeof(q) - 1, &r) < 0)
		return -1;
	*ret = r->n_rows == 1 && db_cell(r, 0, 0) && strcmp(db_cell(r, 0, 0), "0") != 0;
	return 0;
}

/* The waiting and due jobs of each queue that has waiting ones (the keys
 * of queues so far), counted on the index (status, queue, due) up to
 * WEBAPI_COUNT_CAP + 1 each: a backlog of millions costs no more than one
 * of a thousand, and the page says "more than". One statement for all
 * queues. */
static int count_waiting(struct webapi *w, json_t *queues, bool per_queue)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	const char *name;
	json_t *value;
	int n = 0, rc = 0;

	sb_adds(&sb, STMT_LIMIT "SELECT q, w, n FROM (");
	json_object_foreach(queues, name, value) {
		for (int due = 0; due < 2; due++) {
			sb_adds(&sb, n++ ? " UNION ALL SELECT " : "SELECT ");
			db_quotes(&sb, name);
			sb_printf(&sb, " AS q, %d AS w, COUNT(*) AS n FROM (SELECT 1 FROM kyu_jobs "
				       "WHERE status = 'waiting' AND queue = ",
				  due);
			db_quotes(&sb, name);
			sb_printf(&sb, "%s LIMIT %d) AS c", due ? " AND due <= NOW(6)" : "", WEBAPI_COUNT_CAP + 1);
		}
	}
	sb_adds(&sb, ") AS counts");
	if (n && run(w, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t i = 0; n && rc == 0 && i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		bool due = db_cell(r, i, 1) && strcmp(db_cell(r, i, 1), "1") == 0;
		json_object_set_new(q, due ? "due" : "waiting",
				    json_integer(strtoll(db_cell(r, i, 2) ? db_cell(r, i, 2) : "0", NULL, 10)));
	}
	sb_free(&sb);
	return rc;
}

/* Per queue: the counts of waiting and running rows, read from the index
 * (status, queue, due) alone; the jobs that ended in the last hour, per
 * minute, from kyu_minutes (else from kyu_jobs: see
 * have_queue_hour_index); and the queue's settings. Also the hour's
 * figures for all queues. */
static unsigned get_overview(struct webapi *w, json_t **out)
{
	/* A loose scan of (status, queue, due): one index dive per queue. */
	static const char oldest[] =
		STMT_LIMIT "SELECT queue, GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(due), NOW(6)), "
		"0)) / 1000000 AS oldest_due_age FROM kyu_jobs WHERE status IN ('waiting', 'running') "
		"GROUP BY status, queue HAVING status = 'waiting'";
	/* The running rows are few: there are never more than slots. */
	static const char running[] = STMT_LIMIT "SELECT queue, COUNT(*) AS running FROM kyu_jobs "
						 "WHERE status = 'running' GROUP BY queue";
#define ENDED_WHERE "AND updated_at >= NOW(6) - INTERVAL 1 HOUR "
#define MINUTES_AGO "LEAST(59, TIMESTAMPDIFF(MINUTE, updated_at, NOW(6)))"
	static const char hour_all[] =
		STMT_LIMIT "SELECT '', status, " MINUTES_AGO " AS ago, COUNT(*) "
		"FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE status IN ('succeeded', 'failed') "
		ENDED_WHERE "GROUP BY status, ago";
	static const char hour_failed[] =
		STMT_LIMIT "SELECT queue, status, 0, COUNT(*) FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) "
		"WHERE status = 'failed' " ENDED_WHERE "GROUP BY queue";
	static const char hour_queues[] =
		STMT_LIMIT "SELECT queue, status, " MINUTES_AGO " AS ago, COUNT(*) FROM kyu_jobs "
		"WHERE status IN ('succeeded', 'failed') " ENDED_WHERE "GROUP BY queue, status, ago";
	static const char settings[] = STMT_LIMIT "SELECT name, paused, max_running, rate_limit, "
						  "rate_period, weight, max_waiting FROM kyu_queues "
						  "ORDER BY name LIMIT 10000";
	const struct db_result *r;
	json_t *queues = json_object(), *list, *now = NULL, *all, *minutes = NULL;
	const char **names = NULL;
	const char *key;
	json_t *value;
	bool per_queue = false;
	size_t n = 0;

	all = json_pack("{s:i, s:i, s:n, s:o}", "succeeded_1h", 0, "failed_1h", 0, "retried_1h", "per_minute",
			zero_minutes());
	if (read_minutes(w, &minutes) < 0)
		goto failed;
	per_queue = minutes != NULL;
	if ((!minutes && have_queue_hour_index(w, &per_queue) < 0) || run(w, oldest, sizeof(oldest) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		json_object_set_new(q, "oldest_due_age", cell_json(r, i, 1, count_cols));
	}
	if (count_waiting(w, queues, per_queue) < 0 || run(w, running, sizeof(running) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		json_object_set_new(q, "running", cell_json(r, i, 1, count_cols));
	}
	if (minutes) {
		size_t i;
		json_t *row;
		json_object_set_new(all, "retried_1h", json_integer(0));
		json_array_foreach(minutes, i, row) {
			count_minute(all, row);
			count_minute(queue_entry(queues, json_string_value(json_array_get(row, 0)), per_queue), row);
		}
	}
	/* Without kyu_minutes, the hour's figures cost an index entry per job
	 * that ended in it: read at most every HOUR_CACHE seconds, however
	 * many pages refresh. */
	if (!minutes && (!w->hour[0] || mono_now() - w->hour_at >= HOUR_CACHE || w->hour_per_queue != per_queue)) {
		for (int pass = 0; pass < 2; pass++) {
			/* Pass 0: all queues together; pass 1: per queue. */
			const char *sql = pass == 0 ? hour_all : per_queue ? hour_queues : hour_failed;
			size_t len = pass == 0 ? sizeof(hour_all) - 1
				     : per_queue ? sizeof(hour_queues) - 1
						 : sizeof(hour_failed) - 1;
			json_t *rows = json_array();
			if (run(w, sql, len, &r) < 0) {
				json_decref(rows);
				goto failed;
			}
			for (size_t i = 0; i < r->n_rows; i++)
				json_array_append_new(
					rows, json_pack("[o, b, I, I]", webapi_text(db_cell(r, i, 0) ? db_cell(r, i, 0) : "",
										     r->lens[i * r->n_cols]),
							db_cell(r, i, 1) && strcmp(db_cell(r, i, 1), "succeeded") == 0,
							(json_int_t)strtoll(db_cell(r, i, 2) ? db_cell(r, i, 2) : "0", NULL, 10),
							(json_int_t)strtoll(db_cell(r, i, 3) ? db_cell(r, i, 3) : "0", NULL, 10)));
			json_decref(w->hour[pass]);
			w->hour[pass] = rows;
		}
		w->hour_at = mono_now();
		w->hour_per_queue = per_queue;
	}
	for (int pass = 0; pass < 2 && !minutes; pass++) {
		size_t i;
		json_t *row;
		json_array_foreach(w->hour[pass], i, row) {
			json_t *o = pass == 0 ? all
					      : queue_entry(queues, json_string_value(json_array_get(row, 0)), per_queue);
			count_ended(o, json_is_true(json_array_get(row, 1)) ? "succeeded_1h" : "failed_1h",
				    json_integer_value(json_array_get(row, 2)), json_integer_value(json_array_get(row, 3)));
		}
	}
	if (run(w, settings, sizeof(settings) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		for (unsigned c = 1; c < r->n_cols; c++) {
			json_t *v = cell_json(r, i, c, count_cols);
			if (strcmp(r->names[c], "paused") == 0) {
				json_t *b = json_boolean(json_integer_value(v) != 0);
				json_decref(v);
				v = b;
			}
			json_object_set_new(q, r->names[c], v);
		}
		json_object_set_new(q, "settings", json_true());
	}
	if (run(w, "SELECT NOW(6)", 13, &r) == 0 && r->n_rows == 1 && db_cell(r, 0, 0))
		now = json_string(db_cell(r, 0, 0));
	names = xcalloc(json_object_size(queues) + 1, sizeof(*names));
	json_object_foreach(queues, key, value) {
		/* A queue that ended nothing in the hour retried nothing. */
		if (minutes && json_is_null(json_object_get(value, "retried_1h")))
			json_object_set_new(value, "retried_1h", json_integer(0));
		names[n++] = key;
	}
	qsort(names, n, sizeof(*names), cmp_names);
	list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append(list, json_object_get(queues, names[i]));
	free(names);
	json_decref(queues);
	*out = json_pack("{s:o, s:o, s:o, s:b, s:i, s:s, s:o}", "queues", list, "all", all, "now",
			 now ? now : json_null(), "per_queue_hour", per_queue, "count_cap", WEBAPI_COUNT_CAP,
			 "hour_source", minutes ? "kyu_minutes" : "kyu_jobs", "hour_age",
			 minutes ? json_null() : json_real(mono_now() - w->hour_at));
	json_decref(minutes);
	return 200;
failed:
	json_decref(minutes);
	json_decref(queues);
	json_decref(all);
	return db_failed(w, out, "overview");
}

/* Not seq nor owner: BIGINT UNSIGNED identifiers, sent as strings whatever
 * their value, so that a client never sees one rounded or its type change. */
static const char *const job_num_cols[] = { "pid", "attempts", "max_attempts", "tempfails",
					    "priority", "time_limit", "exit_code", "signal", "duration",
					    "cpu_user", "cpu_sys", "max_rss", "running_for", "lease_left", NULL };

/* Running jobs, newest claim first: status = 'running' is a prefix of two
 * indexes, and there are never more running rows than slots. */
static unsigned get_running(struct webapi *w, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	const char *before = arg(ctx, "before");
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int64_t seq = 0;
	unsigned st;

	if (before && parse_i64(before, 1, INT64_MAX, &seq) < 0)
		return fail(out, 400, "running: before: not a row number: '%s'", before);
	sb_adds(&sb, STMT_LIMIT "SELECT seq, id, queue, host, pid, attempts, max_attempts, started_at, "
			       "ROUND(TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1000000, 1) AS running_for, "
			       "ROUND(TIMESTAMPDIFF(MICROSECOND, NOW(6), lease_until) / 1000000, 1) AS lease_left, "
			       "LEFT(COALESCE(command, argv), 200) AS what, "
			       /* The end of this attempt's live tail, without its
			        * first line; not an earlier attempt's output,
			        * which the row holds until kyud first writes one. */
			       "IF(output LIKE CONCAT('" CAPTURE_LIVE_PREFIX "', attempts, ':%'), "
			       "RIGHT(SUBSTRING(output, LOCATE(_binary '\\n', output) + 1), 600), NULL) "
			       "AS output_tail FROM kyu_jobs WHERE status = 'running'");
	if (seq)
		sb_printf(&sb, " AND seq < %lld", (long long)seq);
	sb_printf(&sb, " ORDER BY seq DESC LIMIT %d", WEBAPI_PAGE + 1);
	if (run(w, sb.buf, sb.len, &r) < 0)
		st = db_failed(w, out, "running");
	else
		st = (*out = page_json(r, job_num_cols, -1, 0), 200);
	sb_free(&sb);
	return st;
}

/* Jobs of one status, or the retrying ones (waiting after a failed
 * attempt), last changed first: keyset on kyu_jobs_finished (status,
 * updated_at), whose entries end with the primary key, seq. */
static unsigned get_jobs(struct webapi *w, webapi_arg_fn *arg, void *ctx, bool retrying, json_t **out)
{
	static const char *const statuses[] = { "waiting", "running", "succeeded", "failed", "cancelled", NULL };
	const char *status = retrying ? "waiting" : arg(ctx, "status");
	const char *before = arg(ctx, "before");
	struct strbuf sb = { 0 };
	const struct db_result *r;
	char t[64];
	unsigned long long seq = 0;
	bool known = false;
	unsigned st;

	for (size_t i = 0; status && statuses[i]; i++)
		known |= strcmp(status, statuses[i]) == 0;
	if (!known)
		return fail(out, 400, "jobs: status: expected waiting, running, succeeded, failed or "
				      "cancelled, got '%s'", status ? status : "");
	if (before && webapi_parse_cursor(before, t, sizeof(t), &seq) < 0)
		return fail(out, 400, "jobs: before: not a cursor of this list: '%s'", before);
	sb_adds(&sb, STMT_LIMIT "SELECT seq, id, queue, status, attempts, max_attempts, exit_code, "
			       "`signal`, LEFT(error, 500) AS error, run_at, finished_at, updated_at, host, "
			       "LEFT(COALESCE(command, argv), 200) AS what, RIGHT(output, 600) AS output_tail FROM ");
	/* No index tells a retrying job from a new one: look among the
	 * RETRY_WINDOW waiting rows changed last (a failed attempt changes its
	 * row), a bounded read whatever the backlog. */
	if (retrying)
		sb_adds(&sb, "(SELECT seq AS s FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE status = 'waiting'");
	else
		sb_adds(&sb, "kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE status = ");
	if (!retrying)
		db_quotes(&sb, status);
	if (before) {
		sb_adds(&sb, " AND (updated_at < ");
		db_quotes(&sb, t);
		sb_adds(&sb, " OR (updated_at = ");
		db_quotes(&sb, t);
		sb_printf(&sb, " AND seq < %llu))", seq);
	}
	if (retrying)
		sb_printf(&sb, " ORDER BY updated_at DESC, seq DESC LIMIT %d) AS recent "
			       "JOIN kyu_jobs ON kyu_jobs.seq = recent.s WHERE attempts > 0",
			  RETRY_WINDOW);
	sb_printf(&sb, " ORDER BY updated_at DESC, seq DESC LIMIT %d", WEBAPI_PAGE + 1);
	if (run(w, sb.buf, sb.len, &r) < 0) {
		st = db_failed(w, out, retrying ? "retrying" : "jobs");
	} else {
		*out = page_json(r, job_num_cols, 11, 0);
		json_object_set_new(*out, "status", json_string(status));
		if (retrying)
			json_object_set_new(*out, "window", json_integer(RETRY_WINDOW));
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* Every column of one job. */
static unsigned get_job(struct webapi *w, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	const char *id = arg(ctx, "id");
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned st;

	if (!id || !*id)
		return fail(out, 400, "job: id: missing");
	sb_adds(&sb, STMT_LIMIT "SELECT seq, id, queue, status, priority, command, argv, env, cwd, "
			       "run_at, due, attempts, max_attempts, tempfails, time_limit, exit_code, "
			       "`signal`, error, started_at, finished_at, duration, cpu_user, cpu_sys, max_rss, "
			       "host, pid, owner, lease_until, concurrency_key, created_at, updated_at, "
			       "output FROM kyu_jobs WHERE id = ");
	db_quotes(&sb, id);
	if (run(w, sb.buf, sb.len, &r) < 0) {
		st = db_failed(w, out, "job");
	} else if (r->n_rows == 0) {
		st = fail(out, 404, "no job with id '%s'", id);
	} else {
		json_t *rows = rows_json(r, 1, job_num_cols);
		const char *status = db_cell(r, 0, 3), *attempts = db_cell(r, 0, 11);
		/* Whether output is this attempt's live tail (kyud.8, "Live
		 * output") rather than an earlier attempt's. */
		bool live = status && strcmp(status, "running") == 0 && attempts &&
			    capture_is_live(db_cell(r, 0, 31), r->lens[31],
					    (unsigned)strtoul(attempts, NULL, 10));
		*out = json_pack("{s:O, s:b}", "job", json_array_get(rows, 0), "live", live);
		json_decref(rows);
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* Schedules by name (the primary key), a page at a time. */
static unsigned get_schedules(struct webapi *w, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	static const char *const num[] = { "enabled", "grace", NULL };
	const char *after = arg(ctx, "after");
	struct strbuf sb = { 0 };
	const struct db_result *r;
	bool exists = false;
	unsigned st;

	if (has_table(w, "kyu_schedules", &exists) < 0)
		return db_failed(w, out, "schedules");
	if (!exists)
		return (*out = json_pack("{s:b, s:[], s:n}", "exists", 0, "rows", "next"), 200);
	sb_adds(&sb, STMT_LIMIT "SELECT name, cron, timezone, queue, enabled, missed, overlap, grace, "
			       "next_run, last_run, last_job, error, "
			       "LEFT(COALESCE(command, argv), 200) AS what FROM kyu_schedules");
	if (after) {
		sb_adds(&sb, " WHERE name > ");
		db_quotes(&sb, after);
	}
	sb_printf(&sb, " ORDER BY name LIMIT %d", WEBAPI_PAGE + 1);
	if (run(w, sb.buf, sb.len, &r) < 0) {
		st = db_failed(w, out, "schedules");
	} else {
		*out = page_json(r, num, -1, 0);
		json_object_set_new(*out, "exists", json_true());
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* The locks, as kyu locks lists them (lock.c). */
static unsigned get_locks(struct webapi *w, json_t **out)
{
	static const char *const num[] = { "slot", "pid", NULL };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	bool exists = false;
	unsigned st;

	if (has_table(w, "kyu_locks", &exists) < 0)
		return db_failed(w, out, "locks");
	if (!exists)
		return (*out = json_pack("{s:b, s:[]}", "exists", 0, "rows"), 200);
	sb_adds(&sb, STMT_LIMIT);
	lock_sql_list(&sb, NULL);
	sb_adds(&sb, " LIMIT 1000");
	if (run(w, sb.buf, sb.len, &r) < 0) {
		st = db_failed(w, out, "locks");
	} else {
		*out = json_pack("{s:b, s:o}", "exists", 1, "rows", rows_json(r, 1000, num));
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* The daemons: their registry rows when the schema has kyu_daemons
 * (version 3), else the hosts of the running jobs (a daemon with nothing
 * running is then not seen). */
static unsigned get_daemons(struct webapi *w, json_t **out)
{
	static const char beats[] =
		STMT_LIMIT "SELECT id, host, pid, wake_addr, queues, version, started, last_seen, "
		"ROUND(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(6)) / 1000000, 1) AS seen_ago, "
		"live_until > NOW(6) AS live FROM kyu_daemons ORDER BY last_seen DESC LIMIT 1000";
	static const char hosts[] =
		STMT_LIMIT "SELECT host, COUNT(*) AS running, MIN(started_at) AS oldest_start, "
		"MAX(lease_until) AS last_lease FROM kyu_jobs WHERE status = 'running' "
		"GROUP BY host ORDER BY host LIMIT 1000";
	static const char *const num[] = { "pid", "running", "seen_ago", "live", NULL };
	const struct db_result *r;
	bool exists = false;

	if (has_table(w, "kyu_daemons", &exists) < 0)
		return db_failed(w, out, "daemons");
	if (exists ? run(w, beats, sizeof(beats) - 1, &r) : run(w, hosts, sizeof(hosts) - 1, &r))
		return db_failed(w, out, "daemons");
	*out = json_pack("{s:s, s:o}", "source", exists ? "kyu_daemons" : "running jobs", "rows",
			 rows_json(r, 1000, num));
	return 200;
}

unsigned webapi_get(struct webapi *w, const char *path, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	if (strcmp(path, "/api/overview") == 0)
		return get_overview(w, out);
	if (strcmp(path, "/api/running") == 0)
		return get_running(w, arg, ctx, out);
	if (strcmp(path, "/api/jobs") == 0)
		return get_jobs(w, arg, ctx, false, out);
	if (strcmp(path, "/api/retrying") == 0)
		return get_jobs(w, arg, ctx, true, out);
	if (strcmp(path, "/api/job") == 0)
		return get_job(w, arg, ctx, out);
	if (strcmp(path, "/api/schedules") == 0)
		return get_schedules(w, arg, ctx, out);
	if (strcmp(path, "/api/locks") == 0)
		return get_locks(w, out);
	if (strcmp(path, "/api/daemons") == 0)
		return get_daemons(w, out);
	return fail(out, 404, "no such endpoint: %s", path);
}

unsigned webapi_action(struct webapi *w, enum action a, const char *target, json_t **out)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned st;

	if (!target || !*target)
		return fail(out, 400, "%s: %s missing", action_name(a), action_on_queue(a) ? "queue" : "id");
	action_sql(&sb, a, target);
	if (run_once(w, sb.buf, sb.len, &r, false) < 0)
		st = db_failed(w, out, action_name(a));
	else if (!action_on_queue(a) && r->affected == 0)
		st = fail(out, 409, "%s: no %s job with id '%s'", action_name(a), action_needs(a), target);
	else if (r->affected == 0)
		st = fail(out, 404, a == ACT_RESET ? "%s: queue '%s' has no settings"
						   : "%s: no queue '%s' (no job, no settings)",
			  action_name(a), target);
	else
		st = (*out = json_pack("{s:b, s:s}", "ok", 1, "done", action_done(a)), 200);
	sb_free(&sb);
	return st;
}
