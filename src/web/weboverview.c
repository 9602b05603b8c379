#include "weboverview.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/minutes.h"
#include "common/util.h"
#include "webjson.h"
#include "webpages.h"
#include "webstuck.h"

#define HOUR_CACHE 30.0 /* seconds, for a schema without kyu_minutes */

static const char *const count_cols[] = { "waiting", "due", "running", "blocked", "oldest_due_age", "paused",
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
		json_object_set_new(q, "failed_per_minute", per_queue ? zero_minutes() : json_null());
		/* Jobs waiting for others (workflows), counted as waiting are. */
		json_object_set_new(q, "blocked", json_integer(0));
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
 * per_minute array (and of failed_per_minute for the failed). */
static void count_ended(json_t *o, const char *k, long long ago, long long n)
{
	json_t *pm = json_object_get(o, "per_minute"), *fm = json_object_get(o, "failed_per_minute");
	size_t slot = (size_t)(59 - (ago < 0 ? 0 : ago > 59 ? 59 : ago));

	json_object_set_new(o, k, json_integer(json_integer_value(json_object_get(o, k)) + n));
	if (json_is_array(pm))
		json_array_set_new(pm, slot, json_integer(json_integer_value(json_array_get(pm, slot)) + n));
	/* The failed among them, for the chart's two colours. */
	if (json_is_array(fm) && strcmp(k, "failed_1h") == 0)
		json_array_set_new(fm, slot, json_integer(json_integer_value(json_array_get(fm, slot)) + n));
}

/* The last hour from kyu_minutes (schema version 4 or later), which kyud
 * writes as jobs end: a row per minute, queue and worker, however many
 * jobs ended. *rows gets [queue, minutes ago, succeeded, failed, retried]
 * per queue and minute; NULL when the table is not there or not
 * readable. */
static int read_minutes(struct webdb *d, json_t **rows)
{
	static const char q[] = WEBDB_STMT_LIMIT MINUTES_HOUR_SQL;
	const struct db_result *r;

	unsigned e;

	*rows = NULL;
	if (webdb_read(d, q, sizeof(q) - 1, &r) < 0) {
		/* An older schema, or an account granted the tables one by
		 * one before there was this one: the page still works. */
		e = db_connected(d->db) ? db_error_code(d->db) : 0;
		return e == ER_NO_SUCH_TABLE || e == ER_TABLEACCESS_DENIED_ERROR ? 0 : -1;
	}
	*rows = json_array();
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *row =
			json_pack("[o]", webjson_text(db_cell(r, i, 0) ? db_cell(r, i, 0) : "",
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

/* The waiting and due jobs of each queue that has waiting or blocked ones
 * (the keys of queues so far), and with workflows its blocked jobs,
 * counted on the index (status, queue, due) up to WEBOVERVIEW_COUNT_CAP + 1
 * each: a backlog of millions costs no more than one of a thousand, and
 * the page says "more than". One statement for all queues. */
static int count_waiting(struct webdb *d, json_t *queues, bool per_queue, bool workflows)
{
	static const char *const what[] = { "waiting", "due", "blocked" };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	const char *name;
	json_t *value;
	int n = 0, rc = 0;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT q, w, n FROM (");
	json_object_foreach(queues, name, value) {
		for (int w = 0; w < (workflows ? 3 : 2); w++) {
			sb_adds(&sb, n++ ? " UNION ALL SELECT " : "SELECT ");
			db_quotes(&sb, name);
			sb_printf(&sb, " AS q, %d AS w, COUNT(*) AS n FROM (SELECT 1 FROM kyu_jobs "
				       "WHERE status = '%s' AND queue = ",
				  w, w == 2 ? "blocked" : "waiting");
			db_quotes(&sb, name);
			sb_printf(&sb, "%s LIMIT %d) AS c", w == 1 ? " AND due <= NOW(6)" : "",
				  WEBOVERVIEW_COUNT_CAP + 1);
		}
	}
	sb_adds(&sb, ") AS counts");
	if (n && webdb_read(d, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t i = 0; n && rc == 0 && i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		long w = strtol(db_cell(r, i, 1) ? db_cell(r, i, 1) : "0", NULL, 10);
		json_object_set_new(q, what[w >= 0 && w <= 2 ? w : 0],
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
unsigned weboverview_get(struct weboverview *cache, struct webdb *d, json_t **out)
{
	/* A loose scan of (status, queue, due): one index dive per queue. */
	static const char oldest[] = WEBDB_STMT_LIMIT
		"SELECT queue, GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(due), NOW(6)), "
		"0)) / 1000000 AS oldest_due_age FROM kyu_jobs WHERE status IN ('waiting', 'running') "
		"GROUP BY status, queue HAVING status = 'waiting'";
	/* The queues with blocked jobs: a loose scan of the same index. */
	static const char blocked[] = WEBDB_STMT_LIMIT
		"SELECT queue FROM kyu_jobs WHERE status = 'blocked' GROUP BY queue LIMIT 10000";
	/* The running rows are few: there are never more than slots. */
	static const char running[] =
		WEBDB_STMT_LIMIT "SELECT queue, COUNT(*) AS running FROM kyu_jobs "
				 "WHERE status = 'running' GROUP BY queue";
#define ENDED_WHERE "AND updated_at >= NOW(6) - INTERVAL 1 HOUR "
#define MINUTES_AGO "LEAST(59, TIMESTAMPDIFF(MINUTE, updated_at, NOW(6)))"
	static const char hour_all[] =
		WEBDB_STMT_LIMIT "SELECT '', status, " MINUTES_AGO " AS ago, COUNT(*) "
		"FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE status IN ('succeeded', 'failed') "
		ENDED_WHERE "GROUP BY status, ago";
	static const char hour_failed[] = WEBDB_STMT_LIMIT
		"SELECT queue, status, 0, COUNT(*) FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) "
		"WHERE status = 'failed' " ENDED_WHERE "GROUP BY queue";
	static const char hour_queues[] = WEBDB_STMT_LIMIT
		"SELECT queue, status, " MINUTES_AGO " AS ago, COUNT(*) FROM kyu_jobs "
		"WHERE status IN ('succeeded', 'failed') " ENDED_WHERE
		"GROUP BY queue, status, ago";
	static const char settings[] =
		WEBDB_STMT_LIMIT "SELECT name, paused, max_running, rate_limit, "
				 "rate_period, weight, max_waiting FROM kyu_queues "
				 "ORDER BY name LIMIT 10000";
	static const char now_sql[] = "SELECT NOW(6), " WEBPAGES_ZONE;
	const struct db_result *r;
	json_t *queues = json_object(), *list, *now = NULL, *zone = NULL, *all, *minutes = NULL;
	json_t *unsettled = NULL;
	const char **names = NULL;
	const char *key;
	json_t *value;
	bool per_queue = false, workflows = false;
	size_t n = 0;

	all = json_pack("{s:i, s:i, s:n, s:o, s:o}", "succeeded_1h", 0, "failed_1h", 0, "retried_1h", "per_minute",
			zero_minutes(), "failed_per_minute", zero_minutes());
	if (read_minutes(d, &minutes) < 0)
		goto failed;
	per_queue = minutes != NULL;
	if ((!minutes && have_queue_hour_index(d, &per_queue) < 0) ||
	    webdb_read(d, oldest, sizeof(oldest) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		json_object_set_new(q, "oldest_due_age", webjson_cell(r, i, 1, count_cols));
	}
	/* A schema older than version 5 has no workflows, nor the status
	 * blocked. */
	if (webdb_has_table(d, "kyu_after", &workflows) < 0 ||
	    (workflows && webdb_read(d, blocked, sizeof(blocked) - 1, &r) < 0))
		goto failed;
	for (size_t i = 0; workflows && i < r->n_rows; i++)
		queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
	if (count_waiting(d, queues, per_queue, workflows) < 0 ||
	    webdb_read(d, running, sizeof(running) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		json_object_set_new(q, "running", webjson_cell(r, i, 1, count_cols));
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
	if (!minutes && (!cache->hour[0] || mono_now() - cache->hour_at >= HOUR_CACHE ||
			 cache->hour_per_queue != per_queue)) {
		for (int pass = 0; pass < 2; pass++) {
			/* Pass 0: all queues together; pass 1: per queue. */
			const char *sql = pass == 0 ? hour_all : per_queue ? hour_queues : hour_failed;
			size_t len = pass == 0 ? sizeof(hour_all) - 1
				     : per_queue ? sizeof(hour_queues) - 1
						 : sizeof(hour_failed) - 1;
			json_t *rows = json_array();
			if (webdb_read(d, sql, len, &r) < 0) {
				json_decref(rows);
				goto failed;
			}
			for (size_t i = 0; i < r->n_rows; i++)
				json_array_append_new(
					rows, json_pack("[o, b, I, I]", webjson_text(db_cell(r, i, 0) ? db_cell(r, i, 0) : "",
										      r->lens[i * r->n_cols]),
							db_cell(r, i, 1) && strcmp(db_cell(r, i, 1), "succeeded") == 0,
							(json_int_t)strtoll(db_cell(r, i, 2) ? db_cell(r, i, 2) : "0", NULL, 10),
							(json_int_t)strtoll(db_cell(r, i, 3) ? db_cell(r, i, 3) : "0", NULL, 10)));
			json_decref(cache->hour[pass]);
			cache->hour[pass] = rows;
		}
		cache->hour_at = mono_now();
		cache->hour_per_queue = per_queue;
	}
	for (int pass = 0; pass < 2 && !minutes; pass++) {
		size_t i;
		json_t *row;
		json_array_foreach(cache->hour[pass], i, row) {
			json_t *o = pass == 0 ? all
					      : queue_entry(queues, json_string_value(json_array_get(row, 0)), per_queue);
			count_ended(o, json_is_true(json_array_get(row, 1)) ? "succeeded_1h" : "failed_1h",
				    json_integer_value(json_array_get(row, 2)), json_integer_value(json_array_get(row, 3)));
		}
	}
	if (webdb_read(d, settings, sizeof(settings) - 1, &r) < 0)
		goto failed;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *q = queue_entry(queues, db_cell(r, i, 0) ? db_cell(r, i, 0) : "", per_queue);
		for (unsigned c = 1; c < r->n_cols; c++) {
			json_t *v = webjson_cell(r, i, c, count_cols);
			if (strcmp(r->names[c], "paused") == 0) {
				json_t *b = json_boolean(json_integer_value(v) != 0);
				json_decref(v);
				v = b;
			}
			json_object_set_new(q, r->names[c], v);
		}
		json_object_set_new(q, "settings", json_true());
	}
	if (webdb_read(d, now_sql, sizeof(now_sql) - 1, &r) == 0 && r->n_rows == 1 && db_cell(r, 0, 0)) {
		now = json_string(db_cell(r, 0, 0));
		zone = db_cell(r, 0, 1) ? json_string(db_cell(r, 0, 1)) : NULL;
	}
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
	queues = NULL;
	if (webstuck_explain(d, list, workflows, WEBOVERVIEW_COUNT_CAP, &unsettled) < 0) {
		json_decref(unsettled);
		json_decref(list);
		json_decref(now);
		json_decref(zone);
		goto failed;
	}
	*out = json_pack("{s:o, s:o, s:o, s:o, s:b, s:i, s:s, s:o, s:b, s:o}", "queues", list, "all", all, "now",
			 now ? now : json_null(), "zone", zone ? zone : json_null(), "per_queue_hour", per_queue, "count_cap",
			 WEBOVERVIEW_COUNT_CAP, "hour_source", minutes ? "kyu_minutes" : "kyu_jobs",
			 "hour_age",
			 minutes ? json_null() : json_real(mono_now() - cache->hour_at), "workflows", workflows,
			 "unsettled", unsettled ? unsettled : json_null());
	json_decref(minutes);
	return 200;
failed:
	json_decref(minutes);
	json_decref(queues);
	json_decref(all);
	return webdb_failed(d, out, "overview");
}

void weboverview_clear(struct weboverview *cache)
{
	json_decref(cache->hour[0]);
	json_decref(cache->hour[1]);
	cache->hour[0] = cache->hour[1] = NULL;
}
