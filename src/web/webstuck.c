#include "webstuck.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_quote.h"
#include "common/registry.h"
#include "common/util.h"

static long long cell_ll(const struct db_result *r, size_t row, unsigned col)
{
	const char *v = db_cell(r, row, col);
	return v ? strtoll(v, NULL, 10) : 0;
}

static json_t *find(json_t *queues, const char *name)
{
	size_t i;
	json_t *q;

	json_array_foreach(queues, i, q) {
		if (strcmp(json_string_value(json_object_get(q, "queue")) ?: "", name) == 0)
			return q;
	}
	return NULL;
}

static void why(json_t *q, const char *reason, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void why(json_t *q, const char *reason, const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	json_array_append_new(json_object_get(q, "why"), json_pack("{s:s, s:s}", "reason", reason, "detail", detail));
}

/* Per queue with due jobs, one SELECT of a UNION ALL: the live daemons
 * that serve it (when kyu_daemons exists), and how many of its
 * WEBSTUCK_KEY_SAMPLE oldest due jobs have a key a running job holds (on
 * the index (status, queue, due), then the unique running_key). */
static int per_queue(struct webdb *d, json_t *queues, bool registry)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	size_t i;
	json_t *q;
	int n = 0, rc = 0;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT * FROM (");
	json_array_foreach(queues, i, q) {
		const char *name = json_string_value(json_object_get(q, "queue"));
		if (json_integer_value(json_object_get(q, "due")) <= 0 || !name)
			continue;
		sb_adds(&sb, n++ ? " UNION ALL SELECT " : "SELECT ");
		sb_adds(&sb, "x.q, ");
		sb_adds(&sb, registry ? "(SELECT COUNT(*) FROM kyu_daemons AS d WHERE " REGISTRY_LIVE("d")
					" AND " REGISTRY_SERVES("d", "x.q") ")"
				      : "NULL");
		sb_adds(&sb, " AS serving, COUNT(*) AS sampled, IFNULL(SUM(w.concurrency_key IS NOT NULL AND "
			     "EXISTS (SELECT 1 FROM kyu_jobs AS h WHERE h.running_key = w.concurrency_key)), 0) "
			     "AS blocked FROM (SELECT ");
		db_quotes(&sb, name);
		sb_adds(&sb, " AS q) AS x, (SELECT concurrency_key FROM kyu_jobs WHERE status = 'waiting' AND queue = ");
		db_quotes(&sb, name);
		sb_printf(&sb, " AND due <= NOW(6) ORDER BY due LIMIT %d) AS w GROUP BY x.q", WEBSTUCK_KEY_SAMPLE);
	}
	sb_adds(&sb, ") AS s");
	if (n && webdb_read(d, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t row = 0; n && rc == 0 && row < r->n_rows; row++) {
		json_t *e = find(queues, db_cell(r, row, 0) ? db_cell(r, row, 0) : "");
		long long sampled = cell_ll(r, row, 2), blocked = cell_ll(r, row, 3);
		if (!e)
			continue;
		if (db_cell(r, row, 1)) {
			long long serving = cell_ll(r, row, 1);
			json_object_set_new(e, "daemons", json_integer(serving));
			if (serving == 0)
				why(e, "no daemon", "no live daemon serves this queue (kyu_daemons)");
		}
		if (blocked == 1 && sampled == 1)
			why(e, "key-blocked", "its due job waits for a concurrency key that a running job holds");
		else if (blocked > 0 && blocked == sampled)
			why(e, "key-blocked", "its %lld oldest due jobs wait for a concurrency key that a running job holds",
			    sampled);
		else if (blocked > 0)
			why(e, "key-blocked", "%lld of its %lld oldest due jobs wait for a concurrency key that a running "
					      "job holds", blocked, sampled);
	}
	sb_free(&sb);
	return rc;
}

/* The starts of each rate-limited queue within its period, as the claim
 * counts them (kyu_queue_starts, index (queue, at)). */
static int rates(struct webdb *d, json_t *queues)
{
	static const char q[] = WEBDB_STMT_LIMIT
		"SELECT name, (SELECT IFNULL(SUM(n), 0) FROM kyu_queue_starts AS s WHERE s.queue = q.name "
		"AND s.at > NOW(6) - INTERVAL q.rate_period SECOND) AS started FROM kyu_queues AS q "
		"WHERE rate_limit IS NOT NULL ORDER BY name LIMIT 10000";
	const struct db_result *r;

	if (webdb_read(d, q, sizeof(q) - 1, &r) < 0)
		return -1;
	for (size_t row = 0; row < r->n_rows; row++) {
		json_t *e = find(queues, db_cell(r, row, 0) ? db_cell(r, row, 0) : "");
		long long limit, started = cell_ll(r, row, 1);
		if (!e || json_integer_value(json_object_get(e, "due")) <= 0)
			continue;
		limit = json_integer_value(json_object_get(e, "rate_limit"));
		if (started >= limit)
			why(e, "rate-limited", "%lld started in the last %lld s, its rate_limit is %lld", started,
			    (long long)json_integer_value(json_object_get(e, "rate_period")), limit);
	}
	return 0;
}

int webstuck_explain(struct webdb *d, json_t *queues)
{
	bool registry = false;
	size_t i;
	json_t *q;

	json_array_foreach(queues, i, q) {
		json_t *max = json_object_get(q, "max_running");
		json_object_set_new(q, "why", json_array());
		json_object_set_new(q, "daemons", json_null());
		if (json_integer_value(json_object_get(q, "due")) <= 0)
			continue;
		if (json_is_true(json_object_get(q, "paused")))
			why(q, "paused", "paused: no job of it starts (kyu resume)");
		if (json_is_integer(max) &&
		    json_integer_value(json_object_get(q, "running")) >= json_integer_value(max))
			why(q, "max_running", "%lld running, as many as its max_running allows",
			    (long long)json_integer_value(max));
	}
	if (webdb_has_table(d, "kyu_daemons", &registry) < 0 || per_queue(d, queues, registry) < 0 ||
	    rates(d, queues) < 0)
		return -1;
	return 0;
}
