/* The dashboard's overview (kyu web, /api/overview). See weboverview.h. */
#include "weboverview.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/attention.h"
#include "common/db_quote.h"
#include "common/minutes.h"
#include "common/util.h"
#include "webjson.h"
#include "webpages.h"
#include "webstuck.h"

#define HOUR_CACHE 30.0 /* seconds, for a schema without kyu_minutes */

static const char *const count_cols[] = {
	"waiting",     "due",         "running",    "blocked",     "oldest_due_age",
	"paused",      "max_running", "rate_limit", "rate_period", "weight",
	"max_waiting", "n",           "ago",        "pid",         NULL
};

static long long cell_ll(const struct db_result *r, size_t row, unsigned col)
{
	const char *v = db_cell(r, row, col);
	return v ? strtoll(v, NULL, 10) : 0;
}

static const char *cell_s(const struct db_result *r, size_t row, unsigned col)
{
	return db_cell(r, row, col) ? db_cell(r, row, col) : "";
}

static long long get_ll(const json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void set_ll(json_t *o, const char *k, long long v)
{
	json_object_set_new(o, k, json_integer(v));
}

static json_t *zero_minutes(void)
{
	json_t *per_minute = json_array();

	for (int i = 0; i < 60; i++)
		json_array_append_new(per_minute, json_integer(0));
	return per_minute;
}

static struct attention_queue *qtab_cell(struct attention_table *t, const struct db_result *r,
					 size_t row)
{
	return attention_get(t, cell_s(r, row, 0),
			     db_cell(r, row, 0) ? r->lens[row * r->n_cols] : 0);
}

/* What a page's queue shows besides, before it is read: no jobs, the
 * default settings. */
static void page_entry(json_t *q)
{
	static const char *const zero[] = { "waiting", "due", "blocked", "retrying" };
	static const char *const none[] = { "max_running", "rate_limit", "rate_period",
					    "max_waiting", "per_minute", "failed_per_minute" };

	for (size_t i = 0; i < sizeof(zero) / sizeof(*zero); i++)
		set_ll(q, zero[i], 0);
	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
		json_object_set_new(q, none[i], json_null());
	json_object_set_new(q, "paused", json_false());
	set_ll(q, "weight", 1);
	/* Retrying jobs counted among some of the waiting only. */
	json_object_set_new(q, "retrying_capped", json_false());
	/* true once it has a kyu_queues row (which reset removes). */
	json_object_set_new(q, "settings", json_false());
}

/* Add n to the integer at key k of o (when sums), and to minute slot (ago
 * minutes back; the array runs from the oldest minute to the current one)
 * of its per_minute array, when it has one (and of failed_per_minute for
 * the failed: failed_1h and retried_1h). */
static void count_ended(json_t *o, const char *k, long long ago, long long n, bool sums)
{
	json_t *pm = json_object_get(o, "per_minute"),
	       *fm = json_object_get(o, "failed_per_minute");
	size_t slot = (size_t)(59 - (ago < 0 ? 0 : ago > 59 ? 59 : ago));
	bool failed = strcmp(k, "succeeded_1h") != 0;

	if (sums)
		set_ll(o, k, get_ll(o, k) + n);
	/* The chart's bars are jobs that ended: a retried attempt is not one. */
	if (json_is_array(pm) && strcmp(k, "retried_1h") != 0)
		json_array_set_new(pm, slot,
				   json_integer(json_integer_value(json_array_get(pm, slot)) + n));
	/* The failed among them, and the failed attempts, for the chart's two
	 * colours and the failed attempts' line. */
	if (json_is_array(fm) && failed && strcmp(k, "retried_1h") != 0)
		json_array_set_new(fm, slot,
				   json_integer(json_integer_value(json_array_get(fm, slot)) + n));
}

/* A row of kyu_minutes' hour, [queue, ago, succeeded, failed, retried],
 * added to o. */
static void count_minute(json_t *o, const struct db_result *r, size_t row, bool sums)
{
	long long ago = cell_ll(r, row, 1);

	count_ended(o, "succeeded_1h", ago, cell_ll(r, row, 2), sums);
	count_ended(o, "failed_1h", ago, cell_ll(r, row, 3), sums);
	count_ended(o, "retried_1h", ago, cell_ll(r, row, 4), sums);
}

#define HOUR_WHERE "FROM kyu_minutes WHERE minute > " MINUTES_NOW " - INTERVAL 60 MINUTE "
#define HOUR_AGO "TIMESTAMPDIFF(MINUTE, minute, " MINUTES_NOW ")"

/* The hour's sums of a queue, read from kyu_minutes for all queues. */
struct weboverview_sum {
	char *queue;
	size_t len;
	long long succeeded, failed, retried;
};

static void free_sums(struct weboverview *cache)
{
	for (size_t i = 0; i < cache->n_sums; i++)
		free(cache->sums[i].queue);
	free(cache->sums);
	cache->sums = NULL;
	cache->n_sums = 0;
}

/* The last hour from kyu_minutes (schema version 4 or later), which kyud
 * writes as jobs end: a row per minute, queue and worker, however many
 * jobs ended. Per queue, the hour's sums (they order the page); for all
 * queues, per minute: both read from every row of the hour, so kept a
 * while when many queues have some (WEBOVERVIEW_MINUTES_CACHE). *have:
 * false when the table is not there or not readable. */
static int read_minutes(struct weboverview *cache, struct webdb *d, struct attention_table *queues,
			json_t *all, bool *have)
{
	static const char sums[] = WEBDB_STMT_LIMIT ATTENTION_SQL_HOUR;
	static const char minutes[] =
		WEBDB_STMT_LIMIT "SELECT '', " HOUR_AGO ", SUM(succeeded), SUM(failed), "
				 "SUM(retried) " HOUR_WHERE "GROUP BY minute";
	const struct db_result *r;
	json_t *row;
	size_t i;
	unsigned e;

	*have = false;
	if (!cache->minutes || cache->n_sums <= WEBOVERVIEW_PAGE_MAX ||
	    mono_now() - cache->minutes_at >= WEBOVERVIEW_MINUTES_CACHE) {
		if (webdb_read(d, sums, sizeof(sums) - 1, &r) < 0) {
			/* An older schema, or an account granted the tables one
			 * by one before there was this one: the page still
			 * works. */
			e = db_connected(d->db) ? db_error_code(d->db) : 0;
			return e == ER_NO_SUCH_TABLE || e == ER_TABLEACCESS_DENIED_ERROR ? 0 : -1;
		}
		free_sums(cache);
		cache->sums = xcalloc(r->n_rows + 1, sizeof(*cache->sums));
		for (i = 0; i < r->n_rows; i++) {
			struct weboverview_sum *m = &cache->sums[cache->n_sums++];
			m->len = db_cell(r, i, 0) ? r->lens[i * r->n_cols] : 0;
			m->queue = xmalloc(m->len + 1);
			memcpy(m->queue, cell_s(r, i, 0), m->len);
			m->queue[m->len] = '\0';
			m->succeeded = cell_ll(r, i, 1);
			m->failed = cell_ll(r, i, 2);
			m->retried = cell_ll(r, i, 3);
		}
		if (webdb_read(d, minutes, sizeof(minutes) - 1, &r) < 0)
			return -1;
		json_decref(cache->minutes);
		cache->minutes = json_array();
		for (i = 0; i < r->n_rows; i++)
			json_array_append_new(cache->minutes,
					      json_pack("[I, I, I, I]",
							(json_int_t)cell_ll(r, i, 1),
							(json_int_t)cell_ll(r, i, 2),
							(json_int_t)cell_ll(r, i, 3),
							(json_int_t)cell_ll(r, i, 4)));
		cache->minutes_at = mono_now();
	}
	*have = true;
	for (i = 0; i < cache->n_sums; i++) {
		const struct weboverview_sum *m = &cache->sums[i];
		struct attention_queue *q = attention_get(queues, m->queue, m->len);
		q->succeeded = m->succeeded;
		q->failed = m->failed;
		q->retried = m->retried;
		q->succeeded_known = q->retried_known = true;
	}
	set_ll(all, "retried_1h", 0);
	json_array_foreach(cache->minutes, i, row)
	{
		long long ago = json_integer_value(json_array_get(row, 0));
		count_ended(all, "succeeded_1h", ago, json_integer_value(json_array_get(row, 1)),
			    true);
		count_ended(all, "failed_1h", ago, json_integer_value(json_array_get(row, 2)),
			    true);
		count_ended(all, "retried_1h", ago, json_integer_value(json_array_get(row, 3)),
			    true);
	}
	return 0;
}

/* The page's queues, minute by minute, from kyu_minutes. */
static int page_minutes(struct webdb *d, json_t *page)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	size_t i;
	json_t *q, *byname = json_object();
	int rc = 0;

	/* The hour's minutes named one by one: with the queues, ranges of
	 * the primary key (minute, queue, ...) that hold the page's rows
	 * alone, where a range of minutes would read every queue's. */
	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT queue, " HOUR_AGO
				      ", SUM(succeeded), SUM(failed), SUM(retried) "
				      "FROM kyu_minutes WHERE minute IN (");
	for (int m = 0; m < 60; m++)
		sb_printf(&sb, "%s" MINUTES_NOW " - INTERVAL %d MINUTE", m ? ", " : "", m);
	sb_adds(&sb, ") AND queue IN (");
	json_array_foreach(page, i, q)
	{
		json_object_set(byname, json_string_value(json_object_get(q, "queue")), q);
		if (i)
			sb_adds(&sb, ", ");
		db_quotes(&sb, json_string_value(json_object_get(q, "queue")));
	}
	sb_adds(&sb, ") GROUP BY minute, queue");
	if (json_array_size(page) && webdb_read(d, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t row = 0; json_array_size(page) && rc == 0 && row < r->n_rows; row++) {
		json_t *e = json_object_get(byname, cell_s(r, row, 0));
		if (e)
			count_minute(e, r, row, false);
	}
	json_decref(byname);
	sb_free(&sb);
	return rc;
}

/* Whether kyu_jobs has an index starting (status, updated_at, queue): then
 * the jobs that ended in the last hour are counted per queue from the
 * index alone. Without it, kyu_jobs_finished (status, updated_at) counts
 * them for all queues at once, and only the failed ones, few unless
 * everything fails, are counted per queue (a row read each). */
static int have_queue_hour_index(struct webdb *d, bool *ret)
{
	static const char q[] =
		"SELECT COUNT(*) FROM (SELECT GROUP_CONCAT(column_name ORDER BY seq_in_index) AS cols "
		"FROM information_schema.statistics WHERE table_schema = DATABASE() "
		"AND table_name = 'kyu_jobs' GROUP BY index_name) AS i "
		"WHERE cols LIKE 'status,updated\\_at,queue%'";
	const struct db_result *r;

	if (webdb_read(d, q, sizeof(q) - 1, &r) < 0)
		return -1;
	*ret = r->n_rows == 1 && db_cell(r, 0, 0) && strcmp(db_cell(r, 0, 0), "0") != 0;
	return 0;
}

/* Without kyu_minutes: the hour's rows, [queue, succeeded?, minutes ago,
 * count], for all queues (cache->hour[0]) and per queue (1), read from
 * kyu_jobs at most every HOUR_CACHE seconds, however many pages refresh:
 * they cost an index entry per job that ended in the hour. */
static int read_hour_rows(struct weboverview *cache, struct webdb *d, bool per_queue)
{
#define ENDED_WHERE "AND updated_at >= NOW(6) - INTERVAL 1 HOUR "
#define MINUTES_AGO "LEAST(59, TIMESTAMPDIFF(MINUTE, updated_at, NOW(6)))"
	static const char hour_all[] = WEBDB_STMT_LIMIT
		"SELECT '', status, " MINUTES_AGO " AS ago, COUNT(*) "
		"FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE status IN ('succeeded', 'failed') " ENDED_WHERE
		"GROUP BY status, ago";
	static const char hour_failed[] = WEBDB_STMT_LIMIT
		"SELECT queue, status, 0, COUNT(*) FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) "
		"WHERE status = 'failed' " ENDED_WHERE "GROUP BY queue";
	static const char hour_queues[] = WEBDB_STMT_LIMIT
		"SELECT queue, status, " MINUTES_AGO " AS ago, COUNT(*) FROM kyu_jobs "
		"WHERE status IN ('succeeded', 'failed') " ENDED_WHERE
		"GROUP BY queue, status, ago";
	const struct db_result *r;

	if (cache->hour[0] && mono_now() - cache->hour_at < HOUR_CACHE &&
	    cache->hour_per_queue == per_queue)
		return 0;
	for (int pass = 0; pass < 2; pass++) {
		/* Pass 0: all queues together; pass 1: per queue. */
		const char *sql = pass == 0 ? hour_all : per_queue ? hour_queues : hour_failed;
		size_t len = pass == 0   ? sizeof(hour_all) - 1
			     : per_queue ? sizeof(hour_queues) - 1
					 : sizeof(hour_failed) - 1;
		json_t *rows = json_array();
		if (webdb_read(d, sql, len, &r) < 0) {
			json_decref(rows);
			return -1;
		}
		for (size_t i = 0; i < r->n_rows; i++)
			json_array_append_new(
				rows,
				json_pack("[o, b, I, I]",
					  webjson_text(cell_s(r, i, 0), r->lens[i * r->n_cols]),
					  strcmp(cell_s(r, i, 1), "succeeded") == 0,
					  (json_int_t)cell_ll(r, i, 2),
					  (json_int_t)cell_ll(r, i, 3)));
		json_decref(cache->hour[pass]);
		cache->hour[pass] = rows;
	}
	cache->hour_at = mono_now();
	cache->hour_per_queue = per_queue;
	return 0;
}

/* Add cache->hour[pass] to all (pass 0), to the queues' sums (1, with
 * queues), or to the per-minute arrays of the page's queues (1, with
 * page: name -> the queue's JSON). */
static void apply_hour_rows(struct weboverview *cache, int pass, struct attention_table *queues,
			    json_t *page, json_t *all, bool per_queue)
{
	size_t i;
	json_t *row;

	json_array_foreach(cache->hour[pass], i, row)
	{
		const char *name = json_string_value(json_array_get(row, 0));
		bool succeeded = json_is_true(json_array_get(row, 1));
		long long ago = json_integer_value(json_array_get(row, 2)),
			  n = json_integer_value(json_array_get(row, 3));
		if (pass == 0) {
			count_ended(all, succeeded ? "succeeded_1h" : "failed_1h", ago, n, true);
		} else if (queues) {
			struct attention_queue *q = attention_get(queues, name, strlen(name));
			q->succeeded_known |= per_queue;
			*(succeeded ? &q->succeeded : &q->failed) += n;
		} else if (json_object_get(page, name)) {
			count_ended(json_object_get(page, name),
				    succeeded ? "succeeded_1h" : "failed_1h", ago, n, false);
		}
	}
}

/* For the page's queues: their waiting and due jobs, and with workflows
 * their blocked jobs, counted on the index (status, queue, due) up to
 * WEBOVERVIEW_COUNT_CAP + 1 each (a backlog of millions costs no more than
 * one of a thousand, and the page says "more than"); and their retrying
 * jobs (waiting, with attempts > 0: an attempt failed and another will
 * come) among the WEBOVERVIEW_COUNT_CAP + 1 waiting that are due last,
 * where a retry's backoff puts it: all of them when no more wait. One
 * round trip for the page, a statement per count, read only for the
 * queues that have such jobs. */
static int count_waiting(struct webdb *d, json_t *page)
{
	static const char *const what[] = { "waiting", "due", "blocked", "retrying" };
	struct strbuf sb = { 0 };
	const struct db_reply *reply = NULL;
	json_t *byname = json_object(), *q;
	size_t i;
	int n = 0, rc = 0;

	json_array_foreach(page, i, q)
	{
		const char *name = json_string_value(json_object_get(q, "queue"));
		json_object_set(byname, name, q);
		for (int w = 0; w < 4; w++) {
			if (w == 2 ? !json_is_true(json_object_get(q, "has_blocked"))
				   : !json_is_true(json_object_get(q, "has_waiting")))
				continue;
			sb_adds(&sb,
				n++ ? "; " WEBDB_STMT_LIMIT "SELECT " : WEBDB_STMT_LIMIT "SELECT ");
			db_quotes(&sb, name);
			sb_printf(
				&sb,
				", %d, %s FROM (SELECT attempts FROM kyu_jobs WHERE status = '%s' AND queue = ",
				w, w == 3 ? "IFNULL(SUM(attempts > 0), 0)" : "COUNT(*)",
				w == 2 ? "blocked" : "waiting");
			db_quotes(&sb, name);
			sb_printf(&sb, "%s%s LIMIT %d) AS c", w == 1 ? " AND due <= NOW(6)" : "",
				  w == 3 ? " ORDER BY due DESC" : "", WEBOVERVIEW_COUNT_CAP + 1);
		}
	}
	if (n && webdb_read_each(d, sb.buf, sb.len, &reply) < 0)
		rc = -1;
	for (int k = 0; n && rc == 0 && k < reply->n; k++) {
		const struct db_result *r = &reply->r[k];
		json_t *e = r->n_rows == 1 ? json_object_get(byname, cell_s(r, 0, 0)) : NULL;
		long long w = r->n_rows == 1 ? cell_ll(r, 0, 1) : -1;
		if (e && w >= 0 && w <= 3)
			set_ll(e, what[w], cell_ll(r, 0, 2));
	}
	json_array_foreach(page, i, q)
	{
		json_object_set_new(q, "retrying_capped",
				    json_boolean(get_ll(q, "waiting") > WEBOVERVIEW_COUNT_CAP));
		json_object_del(q, "has_waiting");
		json_object_del(q, "has_blocked");
	}
	json_decref(byname);
	sb_free(&sb);
	return rc;
}

/* The page's queues' settings (kyu_queues). */
static int page_settings(struct webdb *d, json_t *page)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *byname = json_object(), *q;
	size_t i;
	int rc = 0;

	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT name, paused, max_running, rate_limit, rate_period, weight, "
		"max_waiting FROM kyu_queues WHERE name IN (");
	json_array_foreach(page, i, q)
	{
		json_object_set(byname, json_string_value(json_object_get(q, "queue")), q);
		if (i)
			sb_adds(&sb, ", ");
		db_quotes(&sb, json_string_value(json_object_get(q, "queue")));
	}
	sb_adds(&sb, ")");
	if (json_array_size(page) && webdb_read(d, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t row = 0; json_array_size(page) && rc == 0 && row < r->n_rows; row++) {
		json_t *e = json_object_get(byname, cell_s(r, row, 0));
		for (unsigned c = 1; e && c < r->n_cols; c++) {
			json_t *v = webjson_cell(r, row, c, count_cols);
			if (strcmp(r->names[c], "paused") == 0) {
				json_t *b = json_boolean(json_integer_value(v) != 0);
				json_decref(v);
				v = b;
			}
			json_object_set_new(e, r->names[c], v);
		}
		if (e)
			json_object_set_new(e, "settings", json_true());
	}
	json_decref(byname);
	sb_free(&sb);
	return rc;
}

/* Whether any kyud is live, and the last one seen (kyu_daemons): *out =
 * {"live", "last": {"host", "pid", "last_seen", "ago"} or null,
 * "last_attempt": the same of the last attempt that ended (kyu_attempts),
 * read only when no daemon row is left (one that stops cleanly deletes
 * its own)}; null without a kyu_daemons table. */
static int read_kyud(struct webdb *d, json_t **out)
{
	static const char q[] = WEBDB_STMT_LIMIT
		"SELECT (SELECT COUNT(*) FROM kyu_daemons WHERE live_until > NOW(6)), l.host, l.pid, "
		"l.last_seen, TIMESTAMPDIFF(MICROSECOND, l.last_seen, NOW(6)) / 1000000 FROM (SELECT 1) AS one "
		"LEFT JOIN (SELECT host, pid, last_seen FROM kyu_daemons ORDER BY last_seen DESC LIMIT 1) AS l ON 1";
	static const char attempt[] = WEBDB_STMT_LIMIT
		"SELECT host, pid, finished_at, TIMESTAMPDIFF(MICROSECOND, finished_at, NOW(6)) / 1000000 "
		"FROM kyu_attempts ORDER BY seq DESC LIMIT 1";
	const struct db_result *r;
	bool registry = false, attempts = false;
	long long live;

	*out = json_null();
	if (webdb_has_table(d, "kyu_daemons", &registry) < 0)
		return -1;
	if (!registry)
		return 0;
	if (webdb_read(d, q, sizeof(q) - 1, &r) < 0 || r->n_rows != 1)
		return -1;
	live = cell_ll(r, 0, 0);
	json_decref(*out);
	*out = json_pack("{s:I, s:o, s:n}", "live", (json_int_t)live, "last",
			 db_cell(r, 0, 3)
				 ? json_pack("{s:s, s:I, s:s, s:f}", "host", cell_s(r, 0, 1), "pid",
					     (json_int_t)cell_ll(r, 0, 2), "last_seen",
					     cell_s(r, 0, 3), "ago", strtod(cell_s(r, 0, 4), NULL))
				 : json_null(),
			 "last_attempt");
	if (live > 0 || db_cell(r, 0, 3) || webdb_has_table(d, "kyu_attempts", &attempts) < 0 ||
	    !attempts)
		return 0;
	if (webdb_read(d, attempt, sizeof(attempt) - 1, &r) < 0)
		return -1;
	if (r->n_rows == 1)
		json_object_set_new(*out, "last_attempt",
				    json_pack("{s:s, s:I, s:s, s:f}", "host", cell_s(r, 0, 0),
					      "pid", (json_int_t)cell_ll(r, 0, 1), "last_seen",
					      cell_s(r, 0, 2), "ago",
					      strtod(cell_s(r, 0, 3), NULL)));
	return 0;
}

/* A page's queue as the page shows it: what ordered it, and (page_entry)
 * what is read for the page's queues alone, before it is read. A schema
 * without kyu_minutes counts no retries: failed_1h alone, and no failed
 * attempts. */
static json_t *page_json(const struct attention_queue *k, bool per_queue, bool minutes)
{
	json_t *q = json_object();

	json_object_set_new(q, "queue", webjson_text(k->name, k->len));
	set_ll(q, "running", k->running);
	json_object_set_new(q, "oldest_due_age", json_real(k->age));
	set_ll(q, "failed_1h", k->failed);
	json_object_set_new(q, "succeeded_1h",
			    k->succeeded_known || per_queue ? json_integer(k->succeeded)
							    : json_null());
	/* A queue that ended nothing in the hour retried nothing. */
	json_object_set_new(q, "retried_1h",
			    k->retried_known || minutes ? json_integer(k->retried) : json_null());
	json_object_set_new(q, "failed_attempts_1h",
			    k->retried_known || minutes ? json_integer(k->failed + k->retried)
							: json_null());
	json_object_set_new(q, "failing", json_boolean(k->att == ATT_FAILING));
	json_object_set_new(q, "attention", json_string(attention_name(k->att)));
	page_entry(q);
	if (k->waiting)
		json_object_set_new(q, "has_waiting", json_true());
	if (k->blocked)
		json_object_set_new(q, "has_blocked", json_true());
	/* Only the page's queues get their hour minute by minute. */
	if (per_queue) {
		json_object_set_new(q, "per_minute", zero_minutes());
		json_object_set_new(q, "failed_per_minute", zero_minutes());
	}
	return q;
}

static int parse_args(const struct weboverview_args *a, int64_t *limit, int64_t *offset,
		      bool *by_name, json_t **out)
{
	*limit = WEBOVERVIEW_PAGE;
	*offset = 0;
	*by_name = false;
	if (a->limit && *a->limit && parse_i64(a->limit, 1, WEBOVERVIEW_PAGE_MAX, limit) < 0) {
		webjson_error(out, 400, "overview: limit '%.40s' is not a number from 1 to %d",
			      a->limit, WEBOVERVIEW_PAGE_MAX);
		return -1;
	}
	if (a->offset && *a->offset && parse_i64(a->offset, 0, INT32_MAX, offset) < 0) {
		webjson_error(out, 400, "overview: offset '%.40s' is not a number from 0 to %d",
			      a->offset, INT32_MAX);
		return -1;
	}
	if (a->sort && *a->sort && strcmp(a->sort, "attention") != 0 &&
	    strcmp(a->sort, "name") != 0) {
		webjson_error(out, 400, "overview: sort '%.40s' is not attention or name", a->sort);
		return -1;
	}
	*by_name = a->sort && strcmp(a->sort, "name") == 0;
	return 0;
}

/* Every queue that has waiting, running or blocked jobs, jobs that ended
 * in the last hour, or settings, with what orders the page: read for all
 * queues by loose scans of (status, queue, due), a few running rows,
 * kyu_minutes' hour and kyu_queues. Then, for the page's queues only,
 * what else the page shows: counts, retrying jobs, the hour minute by
 * minute, why they do not move (webstuck.h). */
unsigned weboverview_get(struct weboverview *cache, struct webdb *d,
			 const struct weboverview_args *a, json_t **out)
{
	static const char oldest[] = WEBDB_STMT_LIMIT ATTENTION_SQL_OLDEST;
	/* The queues with blocked jobs: a loose scan of the same index. */
	static const char blocked[] = WEBDB_STMT_LIMIT
		"SELECT queue FROM kyu_jobs WHERE status = 'blocked' GROUP BY queue";
	static const char running[] = WEBDB_STMT_LIMIT ATTENTION_SQL_RUNNING;
	static const char settings[] = WEBDB_STMT_LIMIT ATTENTION_SQL_SETTINGS;
	static const char now_sql[] = "SELECT NOW(6), " WEBPAGES_ZONE;
	const struct db_result *r;
	struct attention_table queues = { 0 };
	json_t *list = NULL, *now = NULL, *zone = NULL, *all, *kyud = NULL, *byname = NULL;
	json_t *unsettled = NULL;
	bool per_queue = false, workflows = false, minutes = false, by_name;
	int64_t limit, offset;
	long long n_failing = 0, n_stuck = 0, n_running = 0;
	size_t n = 0;

	if (parse_args(a, &limit, &offset, &by_name, out) < 0)
		return 400;
	all = json_pack("{s:i, s:i, s:n, s:o, s:o}", "succeeded_1h", 0, "failed_1h", 0,
			"retried_1h", "per_minute", zero_minutes(), "failed_per_minute",
			zero_minutes());
	if (read_minutes(cache, d, &queues, all, &minutes) < 0)
		goto failed;
	per_queue = minutes;
	if ((!minutes && have_queue_hour_index(d, &per_queue) < 0) ||
	    webdb_read(d, oldest, sizeof(oldest) - 1, &r) < 0)
		goto failed;
	attention_add_oldest(&queues, r);
	/* A schema older than version 5 has no workflows, nor the status
	 * blocked. */
	if (webdb_has_table(d, "kyu_after", &workflows) < 0 ||
	    (workflows && webdb_read(d, blocked, sizeof(blocked) - 1, &r) < 0))
		goto failed;
	for (size_t i = 0; workflows && i < r->n_rows; i++)
		qtab_cell(&queues, r, i)->blocked = true;
	if (webdb_read(d, running, sizeof(running) - 1, &r) < 0)
		goto failed;
	n_running = attention_add_running(&queues, r);
	if (!minutes) {
		if (read_hour_rows(cache, d, per_queue) < 0)
			goto failed;
		apply_hour_rows(cache, 0, NULL, NULL, all, per_queue);
		apply_hour_rows(cache, 1, &queues, NULL, all, per_queue);
	}
	if (webdb_read(d, settings, sizeof(settings) - 1, &r) < 0)
		goto failed;
	attention_add_names(&queues, r);
	if (read_kyud(d, &kyud) < 0)
		goto failed;
	if (webdb_read(d, now_sql, sizeof(now_sql) - 1, &r) == 0 && r->n_rows == 1 &&
	    db_cell(r, 0, 0)) {
		now = json_string(db_cell(r, 0, 0));
		zone = db_cell(r, 0, 1) ? json_string(db_cell(r, 0, 1)) : NULL;
	}
	n = queues.n;
	attention_sort(&queues, by_name);
	for (size_t i = 0; i < n; i++) {
		n_failing += queues.e[i].att == ATT_FAILING;
		n_stuck += queues.e[i].att == ATT_STUCK;
	}
	list = json_array();
	byname = json_object();
	for (size_t i = (size_t)offset; i < n && i < (size_t)(offset + limit); i++) {
		json_t *q = page_json(&queues.e[i], per_queue, minutes);
		json_array_append_new(list, q);
		json_object_set(byname, queues.e[i].name, q);
	}
	if (minutes ? page_minutes(d, list) < 0
		    : (apply_hour_rows(cache, 1, NULL, byname, all, per_queue), 0))
		goto failed;
	if (count_waiting(d, list) < 0 || page_settings(d, list) < 0)
		goto failed;
	json_object_set_new(all, "queues", json_integer((json_int_t)n));
	json_object_set_new(all, "running", json_integer(n_running));
	json_object_set_new(all, "failing", json_integer(n_failing));
	json_object_set_new(all, "stuck", json_integer(n_stuck));
	json_decref(byname);
	byname = NULL;
	attention_free(&queues);
	if (webstuck_explain(d, list, workflows, WEBOVERVIEW_COUNT_CAP,
			     json_is_object(kyud) && get_ll(kyud, "live") == 0, &unsettled) < 0) {
		json_decref(unsettled);
		goto failed;
	}
	*out = json_pack("{s:o, s:o, s:o, s:o, s:b, s:i, s:s, s:o, s:b, s:o}", "queues", list,
			 "all", all, "now", now ? now : json_null(), "zone",
			 zone ? zone : json_null(), "per_queue_hour", per_queue, "count_cap",
			 WEBOVERVIEW_COUNT_CAP, "hour_source", minutes ? "kyu_minutes" : "kyu_jobs",
			 "hour_age", minutes ? json_null() : json_real(mono_now() - cache->hour_at),
			 "workflows", workflows, "unsettled", unsettled ? unsettled : json_null());
	json_object_set_new(*out, "kyud", kyud);
	json_object_set_new(*out, "page",
			    json_pack("{s:I, s:I, s:I, s:s}", "offset", (json_int_t)offset, "limit",
				      (json_int_t)limit, "total", (json_int_t)n, "sort",
				      by_name ? "name" : "attention"));
	json_object_set_new(*out, "failing_min", json_integer(ATTENTION_FAILING_MIN));
	json_object_set_new(*out, "stuck_age", json_real(ATTENTION_STUCK_AGE));
	return 200;
failed:
	json_decref(list);
	json_decref(now);
	json_decref(zone);
	json_decref(kyud);
	json_decref(byname);
	attention_free(&queues);
	json_decref(all);
	return webdb_failed(d, out, "overview");
}

void weboverview_clear(struct weboverview *cache)
{
	json_decref(cache->hour[0]);
	json_decref(cache->hour[1]);
	json_decref(cache->minutes);
	free_sums(cache);
	cache->hour[0] = cache->hour[1] = cache->minutes = NULL;
}
