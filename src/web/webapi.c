#include "webapi.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "webdb.h"
#include "webfind.h"
#include "webflow.h"
#include "webjson.h"
#include "weboverview.h"
#include "webpages.h"

struct webapi {
	struct webdb db;
	struct weboverview overview;
};

struct webapi *webapi_new(const struct kyu_config *cfg)
{
	struct webapi *w = xcalloc(1, sizeof(*w));

	webdb_init(&w->db, cfg);
	return w;
}

void webapi_free(struct webapi *w)
{
	if (!w)
		return;
	webdb_close(&w->db);
	weboverview_clear(&w->overview);
	free(w);
}

unsigned webapi_get(struct webapi *w, const char *path, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	if (strcmp(path, "/api/overview") == 0)
		return weboverview_get(&w->overview, &w->db, out);
	if (strcmp(path, "/api/running") == 0)
		return webpages_running(&w->db, arg(ctx, "before"), out);
	if (strcmp(path, "/api/jobs") == 0 || strcmp(path, "/api/retrying") == 0) {
		const struct webfind_args a = {
			.status = arg(ctx, "status"), .queue = arg(ctx, "queue"),
			.since = arg(ctx, "since"), .until = arg(ctx, "until"), .text = arg(ctx, "q"),
			.before = arg(ctx, "before"), .after = arg(ctx, "after"),
		};
		return webfind_jobs(&w->db, &a, strcmp(path, "/api/retrying") == 0, out);
	}
	if (strcmp(path, "/api/job") == 0)
		return webflow_job(&w->db, arg(ctx, "id"), out);
	if (strcmp(path, "/api/graph") == 0)
		return webflow_graph(&w->db, arg(ctx, "id"), arg(ctx, "depth"), out);
	if (strcmp(path, "/api/batch") == 0)
		return webflow_batch(&w->db, arg(ctx, "label"), arg(ctx, "after"), out);
	if (strcmp(path, "/api/schedules") == 0)
		return webpages_schedules(&w->db, arg(ctx, "after"), arg(ctx, "from"), out);
	if (strcmp(path, "/api/locks") == 0)
		return webpages_locks(&w->db, out);
	if (strcmp(path, "/api/daemons") == 0)
		return webpages_daemons(&w->db, out);
	return webjson_error(out, 404, "no such endpoint: %s", path);
}

/* After a job's cancel, retry or delete: its dependents move on now, in a
 * round trip of its own (common/action.h). Its failure changes nothing
 * that was done, and kyud settles the same items later: a log line. */
static bool settle(struct webapi *w, enum action a, const char *target)
{
	static const char sql[] = ACTION_SETTLE_SQL;
	const struct db_result *r;

	if (webdb_run(&w->db, sql, sizeof(sql) - 1, &r, false) == 0)
		return true;
	log_warn("%s job '%s': done, but settling its dependents (%s) failed: %s; kyud settles them later",
		 action_name(a), target, ACTION_SETTLE_SQL, db_error(w->db.db));
	return false;
}

static void wake_note(const void *ctx, const char *msg)
{
	log_debug("wake-up after %s: %s", (const char *)ctx, msg);
}

/* What kyu sends after the same action (common/action.h), so that a job
 * the action made due starts now, not at the daemons' next poll. A
 * wake-up is a hint: its failure is logged (at debug: a dashboard whose
 * daemons listen for none would log every action) and changes nothing. */
static void wake(struct webapi *w, const char *what, const char *queue)
{
	if (queue)
		(void)action_wake(w->db.db, w->db.cfg->listen, w->db.cfg->path, queue, wake_note, what);
}

unsigned webapi_action(struct webapi *w, enum action a, const char *target, json_t **out)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	char why[1024];
	unsigned st;

	if (!target || !*target)
		return webjson_error(out, 400, "%s: %s missing", action_name(a),
				     action_on_queue(a) ? "queue" : "id");
	action_sql(&sb, a, target);
	if (webdb_run(&w->db, sb.buf, sb.len, &r, false) < 0)
		st = action_unique_taken(w->db.db, a, target, why, sizeof(why))
			     ? webjson_error(out, 409, "%s: %s", action_name(a), why)
			     : webdb_failed(&w->db, out, action_name(a));
	else if (!action_on_queue(a) && r->affected == 0)
		st = webjson_error(out, 409, "%s: no %s job with id '%s'", action_name(a),
				   action_needs(a), target);
	else if (r->affected == 0)
		st = webjson_error(out, 404,
				   a == ACT_RESET ? "%s: queue '%s' has no settings"
						  : "%s: no queue '%s' (no job, no settings)",
				   action_name(a), target);
	else if (a == ACT_CANCEL || a == ACT_RETRY || a == ACT_DELETE)
		st = (*out = json_pack("{s:b, s:s, s:b}", "ok", 1, "done", action_done(a), "settled",
				       settle(w, a, target)), 200);
	else
		st = (*out = json_pack("{s:b, s:s}", "ok", 1, "done", action_done(a)), 200);
	if (st == 200)
		wake(w, action_name(a), action_wake_queue(a, target));
	sb_free(&sb);
	return st;
}

unsigned webapi_schedule_action(struct webapi *w, enum action_schedule a, const char *name,
				json_t **out)
{
	static const char job[] = "SELECT id, queue FROM kyu_jobs WHERE seq = LAST_INSERT_ID()";
	const char *what = action_schedule_name(a);
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned st;
	bool sent;

	if (!name || !*name)
		return webjson_error(out, 400, "%s: name missing", what);
	action_schedule_sql(&sb, a, name);
	/* enable of an enabled row changes nothing but, with found rows
	 * (db.c), still counts it: 0 means no such schedule. */
	sent = webdb_run(&w->db, sb.buf, sb.len, &r, false) >= 0;
	if (sent && r->affected == 0)
		st = webjson_error(out, 404, "%s: no schedule named '%s'", what, name);
	else if (sent && a != ACT_SCHED_RUN_NOW) {
		st = (*out = json_pack("{s:b, s:s}", "ok", 1, "done", action_schedule_done(a)), 200);
		/* kyud reads kyu_schedules again at an "any queue" wake-up. */
		wake(w, what, "");
	} else if (!sent || webdb_run(&w->db, job, sizeof(job) - 1, &r, false) < 0 || r->n_rows < 1 ||
		   !db_cell(r, 0, 0) || !db_cell(r, 0, 1)) {
		st = webdb_failed(&w->db, out, what);
	} else {
		st = (*out = json_pack("{s:b, s:s, s:s}", "ok", 1, "done", action_schedule_done(a), "job",
				       db_cell(r, 0, 0)), 200);
		/* Those that serve the job's queue (action_wake copies the
		 * name before its query replaces r). */
		wake(w, what, db_cell(r, 0, 1));
	}
	sb_free(&sb);
	return st;
}

/* The names the unit tests (and web.c) know, over the modules that do
 * the work. */
json_t *webapi_text(const char *s, size_t len)
{
	return webjson_text(s, len);
}

int webapi_parse_cursor(const char *s, char *time, size_t timelen, unsigned long long *seq)
{
	return webpages_parse_cursor(s, time, timelen, seq);
}
