/* Why a queue of the overview (kyu web) is not moving. See webstuck.h. */
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

	json_array_foreach(queues, i, q)
	{
		if (strcmp(json_string_value(json_object_get(q, "queue")) ?: "", name) == 0)
			return q;
	}
	return NULL;
}

static json_t *why(json_t *q, const char *reason, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends the reason to q's "why" and returns it, for more members. */
static json_t *why(json_t *q, const char *reason, const char *fmt, ...)
{
	char detail[512];
	json_t *w;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	w = json_pack("{s:s, s:s}", "reason", reason, "detail", detail);
	json_array_append_new(json_object_get(q, "why"), w);
	return w;
}

/* Per queue with due jobs, one SELECT (all in one round trip): the live daemons
 * that serve it (when kyu_daemons exists), and how many of its
 * WEBSTUCK_KEY_SAMPLE oldest due jobs have a key a running job holds (on
 * the index (status, queue, due), then the unique running_key). */
static int per_queue(struct webdb *d, json_t *queues, bool registry, bool quiet_no_daemon)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply = NULL;
	size_t i;
	json_t *q;
	int n = 0, rc = 0;

	/* A statement per queue, one round trip (webdb_read_each). */
	json_array_foreach(queues, i, q)
	{
		const char *name = json_string_value(json_object_get(q, "queue"));
		if (json_integer_value(json_object_get(q, "due")) <= 0 || !name)
			continue;
		sb_adds(&sb, n++ ? "; " WEBDB_STMT_LIMIT "SELECT " : WEBDB_STMT_LIMIT "SELECT ");
		sb_adds(&sb, "x.q, ");
		sb_adds(&sb,
			registry ? "(SELECT COUNT(*) FROM kyu_daemons AS d WHERE " REGISTRY_LIVE(
					   "d") " AND " REGISTRY_SERVES("d", "x.q") ")"
				 : "NULL");
		sb_adds(&sb,
			" AS serving, COUNT(*) AS sampled, IFNULL(SUM(w.concurrency_key IS NOT NULL AND "
			"EXISTS (SELECT 1 FROM kyu_jobs AS h WHERE h.running_key = w.concurrency_key)), 0) "
			"AS blocked FROM (SELECT ");
		db_quotes(&sb, name);
		sb_adds(&sb,
			" AS q) AS x, (SELECT concurrency_key FROM kyu_jobs WHERE status = 'waiting' AND queue = ");
		db_quotes(&sb, name);
		sb_printf(&sb, " AND due <= NOW(6) ORDER BY due LIMIT %d) AS w GROUP BY x.q",
			  WEBSTUCK_KEY_SAMPLE);
	}
	if (n && webdb_read_each(d, sb.buf, sb.len, &reply) < 0)
		rc = -1;
	for (int k = 0; n && rc == 0 && k < reply->n; k++) {
		const struct db_result *r = &reply->r[k];
		json_t *e = r->n_rows == 1 ? find(queues, db_cell(r, 0, 0) ? db_cell(r, 0, 0) : "")
					   : NULL;
		long long sampled, blocked;
		if (!e)
			continue;
		sampled = cell_ll(r, 0, 2);
		blocked = cell_ll(r, 0, 3);
		if (db_cell(r, 0, 1)) {
			long long serving = cell_ll(r, 0, 1);
			json_object_set_new(e, "daemons", json_integer(serving));
			if (serving == 0 && !quiet_no_daemon)
				why(e, "no daemon",
				    "no live daemon serves this queue (kyu_daemons)");
		}
		if (blocked == 1 && sampled == 1)
			why(e, "key-blocked",
			    "its due job waits for a concurrency key that a running job holds");
		else if (blocked > 0 && blocked == sampled)
			why(e, "key-blocked",
			    "its %lld oldest due jobs wait for a concurrency key that a running job holds",
			    sampled);
		else if (blocked > 0)
			why(e, "key-blocked",
			    "%lld of its %lld oldest due jobs wait for a concurrency key that a running "
			    "job holds",
			    blocked, sampled);
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
			why(e, "rate-limited",
			    "%lld started in the last %lld s, its rate_limit is %lld", started,
			    (long long)json_integer_value(json_object_get(e, "rate_period")),
			    limit);
	}
	return 0;
}

/* An id as a reason names it: at most 60 bytes, cut at a character's
 * start (ids are UTF-8), "..." after a cut. */
static void add_id(struct strbuf *sb, const char *id)
{
	size_t n = strlen(id ? id : "");

	if (n <= 60) {
		sb_adds(sb, id ? id : "");
		return;
	}
	n = 57;
	while (n > 0 && ((unsigned char)id[n] & 0xC0) == 0x80)
		n--;
	sb_add(sb, id, n);
	sb_adds(sb, "...");
}

/* For each job of jobs (objects with "seq", a string of digits), the
 * upstream jobs it waits for that have not ended, in seq order, at most
 * WEBSTUCK_UPSTREAMS + 1 (the one more says that there are more): its
 * "open", [{"seq", "id", "status"}]. One statement: per job, its edges of
 * state 0 on the index (down_seq) of kyu_after, and the upstream's row. */
static int open_upstreams(struct webdb *d, json_t *jobs)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *byseq = json_object();
	size_t n = json_array_size(jobs);
	int rc = 0;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT * FROM (");
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_array_get(jobs, i);
		const char *seq = json_string_value(json_object_get(j, "seq")) ?: "0";
		json_object_set_new(j, "open", json_array());
		json_object_set(byseq, seq, j);
		sb_printf(
			&sb,
			"%s(SELECT %llu AS down, e.up_seq, u.id, u.status FROM kyu_after AS e "
			"JOIN kyu_jobs AS u ON u.seq = e.up_seq WHERE e.down_seq = %llu AND e.state = 0 "
			"AND u.status IN ('waiting', 'running', 'blocked') ORDER BY e.up_seq LIMIT %d)",
			i ? " UNION ALL " : "", strtoull(seq, NULL, 10), strtoull(seq, NULL, 10),
			WEBSTUCK_UPSTREAMS + 1);
	}
	sb_adds(&sb, ") AS o ORDER BY down, up_seq");
	if (n && webdb_read(d, sb.buf, sb.len, &r) < 0)
		rc = -1;
	for (size_t row = 0; n && rc == 0 && row < r->n_rows; row++) {
		json_t *j = json_object_get(byseq, db_cell(r, row, 0) ?: "");
		if (j)
			json_array_append_new(json_object_get(j, "open"),
					      json_pack("{s:s, s:s, s:s}", "seq",
							db_cell(r, row, 1) ?: "", "id",
							db_cell(r, row, 2) ?: "", "status",
							db_cell(r, row, 3) ?: ""));
	}
	json_decref(byseq);
	sb_free(&sb);
	return rc;
}

/* What a blocked job (an entry of open_upstreams' jobs, with its
 * "after_left": what kyu_settle counted, null before it has) waits for,
 * as words: "waits for a (running), b (waiting) and 4 more". Sets its
 * "waits_for" to the jobs named. */
static void waits_phrase(struct strbuf *sb, json_t *job)
{
	json_t *open = json_object_get(job, "open"), *left = json_object_get(job, "after_left"),
	       *named;
	size_t n = json_array_size(open);

	if (n == 0) {
		sb_adds(sb,
			json_is_integer(left)
				? "waits for no job that has not ended: kyu_settle has not moved it on yet "
				  "(kyud calls it; so does CALL kyu_settle(1000))"
				: "has not had its upstream jobs counted: kyu_settle has not run since it "
				  "was inserted (kyud calls it; so does CALL kyu_settle(1000))");
		json_object_set_new(job, "waits_for", json_null());
		return;
	}
	named = json_array();
	sb_adds(sb, "waits for ");
	for (size_t i = 0; i < n && i < WEBSTUCK_UPSTREAMS; i++) {
		json_t *u = json_array_get(open, i);
		bool last = i + 1 == n;
		sb_adds(sb, i == 0 ? "" : last ? " and " : ", ");
		add_id(sb, json_string_value(json_object_get(u, "id")));
		sb_printf(sb, " (%s)", json_string_value(json_object_get(u, "status")) ?: "");
		json_array_append(named, u);
	}
	/* One more than WEBSTUCK_UPSTREAMS was read: there are more. */
	if (n > WEBSTUCK_UPSTREAMS && json_integer_value(left) > WEBSTUCK_UPSTREAMS)
		sb_printf(sb, " and %lld more",
			  (long long)json_integer_value(left) - WEBSTUCK_UPSTREAMS);
	else if (n > WEBSTUCK_UPSTREAMS)
		sb_adds(sb, " and more");
	json_object_set_new(job, "waits_for", named);
}

/* The workflow changes kyu_settle has still to act on: how many (up to
 * WEBSTUCK_TODO_CAP, and whether more) and the oldest one's age. Items of
 * kyu_after_todo, and jobs whose end their dependents have not heard of
 * (after_changed; their updated_at is kept by the flag's clearing, so it
 * dates the end). */
static int unsettled_items(struct webdb *d, json_t **out)
{
	static const char q[] = WEBDB_STMT_LIMIT
		"SELECT COUNT(*), IFNULL(MAX(TIMESTAMPDIFF(MICROSECOND, at, NOW(6))), 0) / 1000000 FROM "
		"((SELECT at FROM kyu_after_todo ORDER BY seq LIMIT 1001) UNION ALL "
		"(SELECT updated_at FROM kyu_jobs WHERE after_changed = 1 LIMIT 1001)) AS t";
	const struct db_result *r;
	long long n;

	if (webdb_read(d, q, sizeof(q) - 1, &r) < 0 || r->n_rows != 1)
		return -1;
	n = cell_ll(r, 0, 0);
	*out = json_pack("{s:I, s:b, s:f}", "items",
			 (json_int_t)(n > WEBSTUCK_TODO_CAP ? WEBSTUCK_TODO_CAP : n), "capped",
			 n > WEBSTUCK_TODO_CAP, "oldest_age",
			 strtod(db_cell(r, 0, 1) ?: "0", NULL));
	return 0;
}

/* The reason "unsettled" on o, when the oldest item is late. */
static void why_unsettled(json_t *o, const json_t *unsettled)
{
	double age = json_real_value(json_object_get(unsettled, "oldest_age"));
	json_int_t items = json_integer_value(json_object_get(unsettled, "items"));

	if (items == 0 || age < WEBSTUCK_SETTLE_LATE)
		return;
	why(o, "unsettled",
	    "%s%lld workflow change%s not settled, the oldest %.0f s old: no kyud of schema version 5 "
	    "settles them (CALL kyu_settle(1000) does it once)",
	    json_is_true(json_object_get(unsettled, "capped")) ? "more than " : "",
	    (long long)items, items == 1 ? "" : "s", age);
}

/* Per queue with blocked jobs, its oldest one (on the index (queue,
 * status), whose entries end with seq) and what it waits for. */
static int why_blocked(struct webdb *d, json_t *queues, long long count_cap,
		       const json_t *unsettled)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *jobs = json_array(), *q, *j;
	size_t i;
	int n = 0, rc = -1;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT * FROM (");
	json_array_foreach(queues, i, q)
	{
		const char *name = json_string_value(json_object_get(q, "queue"));
		if (json_integer_value(json_object_get(q, "blocked")) <= 0 || !name)
			continue;
		sb_adds(&sb, n++ ? " UNION ALL (SELECT " : "(SELECT ");
		db_quotes(&sb, name);
		sb_adds(&sb,
			" AS q, seq, id, after_left FROM kyu_jobs FORCE INDEX (kyu_jobs_queue_status) WHERE queue = ");
		db_quotes(&sb, name);
		sb_adds(&sb, " AND status = 'blocked' ORDER BY seq LIMIT 1)");
	}
	sb_adds(&sb, ") AS b");
	if (n == 0) {
		rc = 0;
		goto cleanup;
	}
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	for (size_t row = 0; row < r->n_rows; row++) {
		const char *left = db_cell(r, row, 3);
		json_array_append_new(
			jobs,
			json_pack("{s:s, s:s, s:s, s:o}", "queue", db_cell(r, row, 0) ?: "", "seq",
				  db_cell(r, row, 1) ?: "0", "id", db_cell(r, row, 2) ?: "",
				  "after_left",
				  left ? json_integer(strtoll(left, NULL, 10)) : json_null()));
	}
	if (open_upstreams(d, jobs) < 0)
		goto cleanup;
	json_array_foreach(jobs, i, j)
	{
		json_t *e = find(queues, json_string_value(json_object_get(j, "queue")));
		long long count = e ? json_integer_value(json_object_get(e, "blocked")) : 0;
		struct strbuf w = { 0 };
		json_t *reason;
		if (!e)
			continue;
		if (count > count_cap)
			sb_printf(&w, "more than %lld blocked jobs; the oldest, ", count_cap);
		else if (count > 1)
			sb_printf(&w, "%lld blocked jobs; the oldest, ", count);
		else
			sb_adds(&w, "its blocked job, ");
		add_id(&w, json_string_value(json_object_get(j, "id")));
		sb_adds(&w, ", ");
		waits_phrase(&w, j);
		reason = why(e, "blocked", "%s", w.buf);
		json_object_set(reason, "job", json_object_get(j, "id"));
		json_object_set(reason, "waits_for", json_object_get(j, "waits_for"));
		sb_free(&w);
	}
	json_array_foreach(queues, i, q)
	{
		if (json_integer_value(json_object_get(q, "blocked")) > 0)
			why_unsettled(q, unsettled);
	}
	rc = 0;
cleanup:
	json_decref(jobs);
	sb_free(&sb);
	return rc;
}

int webstuck_explain(struct webdb *d, json_t *queues, bool workflows, long long count_cap,
		     bool quiet_no_daemon, json_t **unsettled)
{
	bool registry = false;
	size_t i;
	json_t *q;

	*unsettled = NULL;
	json_array_foreach(queues, i, q)
	{
		json_t *max = json_object_get(q, "max_running");
		json_object_set_new(q, "why", json_array());
		json_object_set_new(q, "daemons", json_null());
		if (json_integer_value(json_object_get(q, "due")) <= 0)
			continue;
		if (json_is_true(json_object_get(q, "paused")))
			why(q, "paused", "no job of it starts (kyu resume)");
		if (json_is_integer(max) &&
		    json_integer_value(json_object_get(q, "running")) >= json_integer_value(max))
			why(q, "max_running", "%lld running, as many as its max_running allows",
			    (long long)json_integer_value(max));
	}
	if (webdb_has_table(d, "kyu_daemons", &registry) < 0 ||
	    per_queue(d, queues, registry, quiet_no_daemon) < 0 || rates(d, queues) < 0)
		return -1;
	if (!workflows)
		return 0;
	if (unsettled_items(d, unsettled) < 0)
		return -1;
	return why_blocked(d, queues, count_cap, *unsettled);
}

int webstuck_job(struct webdb *d, const json_t *job, json_t **why_out)
{
	const char *status = json_string_value(json_object_get(job, "status"));
	json_t *jobs, *o, *unsettled = NULL, *reason;
	struct strbuf w = { 0 };
	int rc = -1;

	*why_out = json_array();
	if (!status || strcmp(status, "blocked") != 0)
		return 0;
	/* why() appends to the "why" of an object: this one's. */
	o = json_pack("{s:O}", "why", *why_out);
	jobs = json_pack("[{s:O, s:O}]", "seq", json_object_get(job, "seq"), "after_left",
			 json_object_get(job, "after_left") ?: json_null());
	if (!jobs || open_upstreams(d, jobs) < 0 || unsettled_items(d, &unsettled) < 0)
		goto cleanup;
	waits_phrase(&w, json_array_get(jobs, 0));
	reason = why(o, "blocked", "%s", w.buf);
	json_object_set(reason, "waits_for", json_object_get(json_array_get(jobs, 0), "waits_for"));
	why_unsettled(o, unsettled);
	rc = 0;
cleanup:
	sb_free(&w);
	json_decref(unsettled);
	json_decref(jobs);
	json_decref(o);
	return rc;
}
