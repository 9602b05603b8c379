/* The dashboard's workflow pages (kyu web; kyu_jobs(7), "Workflows"). See
 * webflow.h. */
#include "webflow.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_quote.h"
#include "common/util.h"
#include "webjson.h"
#include "webpages.h"
#include "webstuck.h"

int webflow_present(struct webdb *d, bool *ret)
{
	return webdb_has_table(d, "kyu_after", ret);
}

/* Not seq: a BIGINT UNSIGNED identifier, sent as a string. */
static const char *const edge_num[] = { "state", "after_left", NULL };

static unsigned long long seq_of(const json_t *o, const char *key)
{
	return strtoull(json_string_value(json_object_get(o, key)) ?: "0", NULL, 10);
}

/* A side of the job page's edges: the first WEBFLOW_LIST rows of dir, and
 * how many there are in all (counted only when the list is full). */
static json_t *side(json_t *rows, long long total)
{
	size_t shown = json_array_size(rows);

	if (total < (long long)shown)
		total = (long long)shown;
	return json_pack("{s:o, s:I, s:b, s:I}", "rows", rows, "total",
			 (json_int_t)(total > WEBFLOW_COUNT_CAP ? WEBFLOW_COUNT_CAP : total),
			 "total_capped", total > WEBFLOW_COUNT_CAP, "more",
			 (json_int_t)((total > WEBFLOW_COUNT_CAP ? WEBFLOW_COUNT_CAP : total) -
				      (long long)shown));
}

/* The job's upstream jobs (its edges on the index (down_seq) of
 * kyu_after) and downstream ones (the primary key, up_seq first), each
 * in seq order with its status, a page of each; then, where a page is
 * full, the edges counted up to WEBFLOW_COUNT_CAP + 1 on the same
 * indexes. An upstream deleted since is an edge without a row: its id and
 * status are null. */
static int edges(struct webdb *d, unsigned long long seq, json_t *doc)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *up = json_array(), *down = json_array();
	long long n_up = 0, n_down = 0;
	int rc = -1;

	sb_printf(
		&sb,
		WEBDB_STMT_LIMIT
		"SELECT * FROM ("
		"(SELECT 'up' AS dir, e.up_seq AS seq, j.id, j.status, j.queue, e.state FROM kyu_after AS e "
		"LEFT JOIN kyu_jobs AS j ON j.seq = e.up_seq WHERE e.down_seq = %llu ORDER BY e.up_seq LIMIT %d) "
		"UNION ALL (SELECT 'down', e.down_seq, j.id, j.status, j.queue, e.state FROM kyu_after AS e "
		"LEFT JOIN kyu_jobs AS j ON j.seq = e.down_seq WHERE e.up_seq = %llu ORDER BY e.down_seq LIMIT %d)"
		") AS x ORDER BY dir DESC, seq",
		seq, WEBFLOW_LIST, seq, WEBFLOW_LIST);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	for (size_t i = 0; i < r->n_rows; i++) {
		json_t *row = json_object();
		for (unsigned c = 1; c < r->n_cols; c++)
			json_object_set_new(row, r->names[c], webjson_cell(r, i, c, edge_num));
		json_array_append_new(strcmp(db_cell(r, i, 0) ?: "", "up") == 0 ? up : down, row);
	}
	n_up = (long long)json_array_size(up);
	n_down = (long long)json_array_size(down);
	if (n_up >= WEBFLOW_LIST || n_down >= WEBFLOW_LIST) {
		sb_reset(&sb);
		sb_printf(
			&sb,
			WEBDB_STMT_LIMIT
			"SELECT "
			"(SELECT COUNT(*) FROM (SELECT 1 FROM kyu_after WHERE down_seq = %llu LIMIT %d) AS u), "
			"(SELECT COUNT(*) FROM (SELECT 1 FROM kyu_after WHERE up_seq = %llu LIMIT %d) AS d)",
			seq, WEBFLOW_COUNT_CAP + 1, seq, WEBFLOW_COUNT_CAP + 1);
		if (webdb_read(d, sb.buf, sb.len, &r) < 0 || r->n_rows != 1)
			goto cleanup;
		n_up = strtoll(db_cell(r, 0, 0) ?: "0", NULL, 10);
		n_down = strtoll(db_cell(r, 0, 1) ?: "0", NULL, 10);
	}
	json_object_set_new(doc, "upstream", side(up, n_up));
	json_object_set_new(doc, "downstream", side(down, n_down));
	up = down = NULL;
	rc = 0;
cleanup:
	json_decref(up);
	json_decref(down);
	sb_free(&sb);
	return rc;
}

unsigned webflow_job(struct webdb *d, const char *id, json_t **out)
{
	bool workflows = false;
	json_t *job, *why = NULL;
	unsigned st;

	if (id && *id && webflow_present(d, &workflows) < 0)
		return webdb_failed(d, out, "job");
	st = webpages_job(d, id, workflows, out);
	if (st != 200 || !workflows)
		return st;
	job = json_object_get(*out, "job");
	if (edges(d, seq_of(job, "seq"), *out) < 0 || webstuck_job(d, job, &why) < 0) {
		json_decref(why);
		json_decref(*out);
		return webdb_failed(d, out, "job");
	}
	json_object_set_new(*out, "why", why);
	return 200;
}

/* ---- the graph around a job */

struct graph {
	json_t *level; /* seq (text) -> its level */
	json_t *order; /* the seqs, as found */
	json_t *edges; /* [{"up", "down", "state"}] */
	bool truncated;
};

static void add_node(struct graph *g, const char *seq, int level)
{
	json_object_set_new(g->level, seq, json_integer(level));
	json_array_append_new(g->order, json_string(seq));
}

/* One level of the walk, one way: the edges of the jobs of frontier
 * (upward: the edges that end at them, on the index (down_seq);
 * downward: those that start at them, on the primary key), at most
 * 2 * WEBFLOW_NODES of them in index order. The jobs at their far ends not
 * seen yet join the graph at level, while it has room, and make the next
 * frontier. Edges are found once: upward from the jobs above the root,
 * downward from those below it, and no edge goes from below to above (a
 * job can only wait for jobs inserted before it). */
static int walk(struct webdb *d, struct graph *g, json_t *frontier, bool upward, int level,
		json_t **next)
{
	const int limit = 2 * WEBFLOW_NODES;
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	*next = json_array();
	sb_printf(&sb,
		  WEBDB_STMT_LIMIT "SELECT up_seq, down_seq, state FROM kyu_after WHERE %s IN (",
		  upward ? "down_seq" : "up_seq");
	for (size_t i = 0; i < json_array_size(frontier); i++)
		sb_printf(
			&sb, "%s%llu", i ? ", " : "",
			strtoull(json_string_value(json_array_get(frontier, i)) ?: "0", NULL, 10));
	sb_printf(&sb, ") ORDER BY %s LIMIT %d", upward ? "down_seq, up_seq" : "up_seq, down_seq",
		  limit);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	if (r->n_rows >= (size_t)limit)
		g->truncated = true;
	for (size_t row = 0; row < r->n_rows; row++) {
		const char *far = db_cell(r, row, upward ? 0 : 1) ?: "0";
		if (!json_object_get(g->level, far)) {
			if (json_array_size(g->order) >= WEBFLOW_NODES) {
				g->truncated = true;
				continue;
			}
			add_node(g, far, level);
			json_array_append_new(*next, json_string(far));
		}
		json_array_append_new(g->edges,
				      json_pack("{s:s, s:s, s:o}", "up", db_cell(r, row, 0) ?: "0",
						"down", db_cell(r, row, 1) ?: "0", "state",
						webjson_cell(r, row, 2, edge_num)));
	}
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

/* Each job of the graph's row: id, status, queue, batch (null for one
 * deleted since its edge was made). */
static int node_rows(struct webdb *d, struct graph *g, json_t **nodes)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *byseq = json_object();
	int rc = -1;

	*nodes = json_array();
	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT seq, id, status, queue, batch FROM kyu_jobs WHERE seq IN (");
	for (size_t i = 0; i < json_array_size(g->order); i++)
		sb_printf(
			&sb, "%s%llu", i ? ", " : "",
			strtoull(json_string_value(json_array_get(g->order, i)) ?: "0", NULL, 10));
	sb_adds(&sb, ")");
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	for (size_t row = 0; row < r->n_rows; row++) {
		json_t *o = json_object();
		for (unsigned c = 1; c < r->n_cols; c++)
			json_object_set_new(o, r->names[c], webjson_cell(r, row, c, NULL));
		json_object_set_new(byseq, db_cell(r, row, 0) ?: "0", o);
	}
	for (size_t i = 0; i < json_array_size(g->order); i++) {
		const char *seq = json_string_value(json_array_get(g->order, i));
		json_t *o = json_object_get(byseq, seq);
		o = o ? json_incref(o)
		      : json_pack("{s:n, s:n, s:n, s:n}", "id", "status", "queue", "batch");
		json_object_set_new(o, "seq", json_string(seq));
		json_object_set(o, "level", json_object_get(g->level, seq));
		json_array_append_new(*nodes, o);
	}
	rc = 0;
cleanup:
	json_decref(byseq);
	sb_free(&sb);
	return rc;
}

unsigned webflow_graph(struct webdb *d, const char *id, const char *depth, json_t **out)
{
	struct graph g = { .level = json_object(), .order = json_array(), .edges = json_array() };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *up = NULL, *down = NULL, *nodes = NULL;
	bool workflows = false;
	int64_t levels = WEBFLOW_DEPTH;
	unsigned st;

	if (!id || !*id) {
		st = webjson_error(out, 400, "graph: id: missing");
		goto cleanup;
	}
	if (depth && parse_i64(depth, 1, WEBFLOW_DEPTH_MAX, &levels) < 0) {
		st = webjson_error(out, 400, "graph: depth: expected 1 to %d, got '%s'",
				   WEBFLOW_DEPTH_MAX, depth);
		goto cleanup;
	}
	if (webflow_present(d, &workflows) < 0) {
		st = webdb_failed(d, out, "graph");
		goto cleanup;
	}
	if (!workflows) {
		st = webjson_error(out, 404,
				   "graph: this database has no workflows (schema version 5)");
		goto cleanup;
	}
	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT seq FROM kyu_jobs WHERE id = ");
	db_quotes(&sb, id);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0) {
		st = webdb_failed(d, out, "graph");
		goto cleanup;
	}
	if (r->n_rows == 0) {
		st = webjson_error(out, 404, "graph: no job with id '%s'", id);
		goto cleanup;
	}
	add_node(&g, db_cell(r, 0, 0) ?: "0", 0);
	up = json_copy(g.order);
	down = json_copy(g.order);
	for (int level = 1; level <= levels; level++) {
		json_t *next_up = NULL, *next_down = NULL;
		int rc = 0;
		if (json_array_size(up))
			rc = walk(d, &g, up, true, -level, &next_up);
		if (rc == 0 && json_array_size(down))
			rc = walk(d, &g, down, false, level, &next_down);
		json_decref(up);
		json_decref(down);
		up = next_up ? next_up : json_array();
		down = next_down ? next_down : json_array();
		if (rc < 0) {
			st = webdb_failed(d, out, "graph");
			goto cleanup;
		}
	}
	if (node_rows(d, &g, &nodes) < 0) {
		st = webdb_failed(d, out, "graph");
		goto cleanup;
	}
	*out = json_pack("{s:O, s:I, s:i, s:b, s:O, s:O}", "root", json_array_get(nodes, 0),
			 "depth", (json_int_t)levels, "max_nodes", WEBFLOW_NODES, "truncated",
			 g.truncated, "nodes", nodes, "edges", g.edges);
	st = 200;
cleanup:
	json_decref(nodes);
	json_decref(up);
	json_decref(down);
	json_decref(g.level);
	json_decref(g.order);
	json_decref(g.edges);
	sb_free(&sb);
	return st;
}

/* ---- a batch */

static const char *const statuses[] = { "blocked",   "waiting", "running",
					"succeeded", "failed",  "cancelled" };

/* The batch's jobs by status: the first WEBFLOW_BATCH_CAP by seq, on the
 * index (batch), whose entries end with seq; and whether there are more
 * (the row '+', 1). */
static int batch_counts(struct webdb *d, const char *label, json_t *doc)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *counts = json_object();
	long long total = 0;
	bool capped = false;
	int rc = -1;

	for (size_t i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
		json_object_set_new(counts, statuses[i], json_integer(0));
	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT status, COUNT(*) FROM (SELECT status FROM kyu_jobs "
				      "FORCE INDEX (kyu_jobs_batch) WHERE batch = ");
	db_quotes(&sb, label);
	sb_printf(
		&sb,
		" ORDER BY seq LIMIT %d) AS m GROUP BY status UNION ALL SELECT '+', COUNT(*) FROM "
		"(SELECT 1 FROM kyu_jobs FORCE INDEX (kyu_jobs_batch) WHERE batch = ",
		WEBFLOW_BATCH_CAP);
	db_quotes(&sb, label);
	sb_printf(&sb, " ORDER BY seq LIMIT 1 OFFSET %d) AS x", WEBFLOW_BATCH_CAP);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *status = db_cell(r, i, 0) ?: "";
		long long n = strtoll(db_cell(r, i, 1) ?: "0", NULL, 10);
		if (strcmp(status, "+") == 0) {
			capped = n > 0;
			continue;
		}
		json_object_set_new(counts, status, json_integer(n));
		total += n;
	}
	json_object_set_new(doc, "counts", counts);
	json_object_set_new(doc, "total", json_integer(total));
	json_object_set_new(doc, "total_capped", json_boolean(capped));
	counts = NULL;
	rc = 0;
cleanup:
	json_decref(counts);
	sb_free(&sb);
	return rc;
}

/* A page of the batch's jobs, in seq order from the cursor on. */
static int batch_page(struct webdb *d, const char *label, unsigned long long after, json_t *doc)
{
	static const char *const num[] = { "attempts", "max_attempts", "exit_code", "signal",
					   NULL };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT seq, id, queue, status, attempts, max_attempts, exit_code, "
		"`signal`, LEFT(error, 300) AS error, run_at, finished_at, updated_at, "
		"LEFT(COALESCE(command, argv), 200) AS what FROM kyu_jobs FORCE INDEX (kyu_jobs_batch) "
		"WHERE batch = ");
	db_quotes(&sb, label);
	if (after)
		sb_printf(&sb, " AND seq > %llu", after);
	sb_printf(&sb, " ORDER BY seq LIMIT %d", WEBPAGES_PAGE + 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	json_object_set_new(doc, "rows", webjson_rows(r, WEBPAGES_PAGE, num));
	json_object_set_new(doc, "next",
			    r->n_rows > WEBPAGES_PAGE
				    ? json_string(db_cell(r, WEBPAGES_PAGE - 1, 0) ?: "0")
				    : json_null());
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

/* The jobs that wait for the batch by after_batch. No index on
 * after_batch: they are found through their edges, from the batch's first
 * job (by seq), which existed when each of them was inserted if any job of
 * the batch did (a job of after_batch waits for every job of the batch
 * there is at its INSERT). One inserted before any job of the batch
 * existed, or after all of those it found were deleted, is not found. */
static int batch_waiters(struct webdb *d, const char *label, json_t *doc)
{
	static const char *const num[] = { "after_left", NULL };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT j.seq, j.id, j.status, j.queue, j.after_policy, j.after_left "
		"FROM kyu_after AS e JOIN kyu_jobs AS j ON j.seq = e.down_seq WHERE e.up_seq = "
		"(SELECT seq FROM kyu_jobs FORCE INDEX (kyu_jobs_batch) WHERE batch = ");
	db_quotes(&sb, label);
	sb_adds(&sb, " ORDER BY seq LIMIT 1) AND j.after_batch = ");
	db_quotes(&sb, label);
	sb_printf(&sb, " ORDER BY e.down_seq LIMIT %d", WEBFLOW_LIST + 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	json_object_set_new(doc, "waiters",
			    json_pack("{s:o, s:b}", "rows", webjson_rows(r, WEBFLOW_LIST, num),
				      "more", r->n_rows > WEBFLOW_LIST));
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

unsigned webflow_batch(struct webdb *d, const char *label, const char *after, json_t **out)
{
	static const char clock[] = "SELECT NOW(6), " WEBPAGES_ZONE;
	const struct db_result *r;
	bool workflows = false;
	int64_t cursor = 0;
	json_t *doc;

	if (!label || !*label || strlen(label) > 255)
		return webjson_error(out, 400, "batch: label: expected a batch's label, got '%s'",
				     label ? label : "");
	if (after && parse_i64(after, 1, INT64_MAX, &cursor) < 0)
		return webjson_error(out, 400, "batch: after: not a row number: '%s'", after);
	if (webflow_present(d, &workflows) < 0)
		return webdb_failed(d, out, "batch");
	if (!workflows)
		return webjson_error(out, 404,
				     "batch: this database has no workflows (schema version 5)");
	doc = json_pack("{s:o}", "batch", webjson_text(label, strlen(label)));
	if (batch_counts(d, label, doc) < 0 ||
	    batch_page(d, label, (unsigned long long)cursor, doc) < 0 ||
	    batch_waiters(d, label, doc) < 0 || webdb_read(d, clock, sizeof(clock) - 1, &r) < 0) {
		json_decref(doc);
		return webdb_failed(d, out, "batch");
	}
	json_object_set_new(doc, "now", webjson_cell(r, 0, 0, NULL));
	json_object_set_new(doc, "zone", webjson_cell(r, 0, 1, NULL));
	*out = doc;
	return 200;
}
