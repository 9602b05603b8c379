/* The dashboard's failures by cause (kyu web). See webcauses.h. */
#include "webcauses.h"

#include <string.h>

#include "common/causes.h"
#include "webjson.h"
#include "webpages.h"

int webcauses_run(void *ctx, const char *sql, size_t len, const struct db_result **res)
{
	return webdb_read(ctx, sql, len, res);
}

/* The clock and zone the times are read in, into doc: 0 or -1. */
static int clock_of(struct webdb *d, json_t *doc)
{
	static const char clock[] = "SELECT NOW(6), " WEBPAGES_ZONE;
	const struct db_result *r;

	if (webdb_read(d, clock, sizeof(clock) - 1, &r) < 0 || r->n_rows < 1)
		return -1;
	json_object_set_new(doc, "now", webjson_cell(r, 0, 0, NULL));
	json_object_set_new(doc, "zone", webjson_cell(r, 0, 1, NULL));
	return 0;
}

static json_t *group_json(const struct cause_group *g)
{
	json_t *queues = json_array();
	char id[9];

	cause_id_text(g->id, id);
	for (int k = 0; k < g->n_queues; k++)
		json_array_append_new(queues, webjson_text(g->queues[k], strlen(g->queues[k])));
	return json_pack("{s:s, s:s, s:I, s:I, s:o, s:i, s:s, s:s}", "id", id, "text", g->text,
			 "failed", (json_int_t)g->failed, "retrying", (json_int_t)g->retrying,
			 "queues", queues, "more_queues", g->more_queues, "first", g->first, "last",
			 g->last);
}

static unsigned list_groups(struct webdb *d, const char *queue, json_t **out)
{
	json_t *doc, *list;
	struct causes c;

	if (causes_read(&c, queue, WEBDB_STMT_LIMIT, webcauses_run, d) < 0)
		return webdb_failed(d, out, "causes");
	list = json_array();
	for (size_t i = 0; i < c.n; i++)
		json_array_append_new(list, group_json(&c.g[i]));
	doc = json_pack("{s:o, s:b, s:i}", "causes", list, "window_full", c.window_full, "scan",
			CAUSES_SCAN);
	causes_free(&c);
	if (clock_of(d, doc) < 0) {
		json_decref(doc);
		return webdb_failed(d, out, "causes");
	}
	*out = doc;
	return 200;
}

static unsigned list_jobs(struct webdb *d, const char *queue, const char *key, json_t **out)
{
	char text[CAUSE_MAX], id[9];
	struct cause_job *jobs;
	json_t *doc, *list;
	size_t n;
	int r = causes_resolve(key, queue, WEBDB_STMT_LIMIT, webcauses_run, d, text);

	if (r < 0)
		return webdb_failed(d, out, "causes");
	if (r > 0) {
		/* Not an error: the page of a cause whose jobs were all
		 * just retried or cancelled refreshes into this. */
		*out = json_pack("{s:n, s:[], s:i}", "cause", "jobs", "limit", WEBCAUSES_JOBS);
		return clock_of(d, *out) < 0 ? (json_decref(*out), webdb_failed(d, out, "causes"))
					     : 200;
	}
	if (causes_jobs(text, queue, WEBCAUSES_JOBS, WEBDB_STMT_LIMIT, webcauses_run, d, &jobs,
			&n) < 0)
		return webdb_failed(d, out, "causes");
	list = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(
			list, json_pack("{s:o, s:o, s:s, s:s, s:o}", "id",
					webjson_text(jobs[i].id, strlen(jobs[i].id)), "queue",
					webjson_text(jobs[i].queue, strlen(jobs[i].queue)),
					"status", jobs[i].retrying ? "retrying" : "failed",
					"updated", jobs[i].updated, "error",
					webjson_text(jobs[i].line, strlen(jobs[i].line))));
	causes_jobs_free(jobs, n);
	cause_id_text(cause_id(text, strlen(text)), id);
	doc = json_pack("{s:{s:s, s:s}, s:o, s:i}", "cause", "id", id, "text", text, "jobs", list,
			"limit", WEBCAUSES_JOBS);
	if (clock_of(d, doc) < 0) {
		json_decref(doc);
		return webdb_failed(d, out, "causes");
	}
	*out = doc;
	return 200;
}

unsigned webcauses_get(struct webdb *d, const char *queue, const char *cause, json_t **out)
{
	if (queue && !*queue)
		queue = NULL;
	if (queue && strlen(queue) > 255)
		return webjson_error(out, 400, "causes: queue: expected a queue's name");
	if (cause && *cause) {
		if (strlen(cause) >= CAUSE_MAX)
			return webjson_error(out, 400, "causes: cause: at most %d bytes",
					     CAUSE_MAX - 1);
		return list_jobs(d, queue, cause, out);
	}
	return list_groups(d, queue, out);
}
