/* The dashboard's data (kyu web): each page's query against the kyu tables,
 * answered as a JSON document, and the actions. See webapi.h. */
#include "webapi.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/registry.h"
#include "common/util.h"
#include "common/causes.h"
#include "webcauses.h"
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
	if (strcmp(path, "/api/overview") == 0) {
		const struct weboverview_args a = {
			.limit = arg(ctx, "limit"),
			.offset = arg(ctx, "offset"),
			.sort = arg(ctx, "sort"),
		};
		return weboverview_get(&w->overview, &w->db, &a, out);
	}
	if (strcmp(path, "/api/running") == 0)
		return webpages_running(&w->db, arg(ctx, "before"), out);
	if (strcmp(path, "/api/jobs") == 0 || strcmp(path, "/api/retrying") == 0) {
		const struct webfind_args a = {
			.status = arg(ctx, "status"),
			.queue = arg(ctx, "queue"),
			.since = arg(ctx, "since"),
			.until = arg(ctx, "until"),
			.text = arg(ctx, "q"),
			.before = arg(ctx, "before"),
			.after = arg(ctx, "after"),
		};
		return webfind_jobs(&w->db, &a, strcmp(path, "/api/retrying") == 0, out);
	}
	if (strcmp(path, "/api/causes") == 0)
		return webcauses_get(&w->db, arg(ctx, "queue"), arg(ctx, "cause"), out);
	if (strcmp(path, "/api/bulk") == 0)
		return webapi_bulk_count(w, arg, ctx, out);
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
	log_warn(
		"%s job '%s': done, but settling its dependents (%s) failed: %s; kyud settles them later",
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
		(void)action_wake(w->db.db, w->db.cfg->listen, w->db.cfg->path, queue, wake_note,
				  what);
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
		st = (*out = json_pack("{s:b, s:s, s:b}", "ok", 1, "done", action_done(a),
				       "settled", settle(w, a, target)),
		      200);
	else
		st = (*out = json_pack("{s:b, s:s}", "ok", 1, "done", action_done(a)), 200);
	if (st == 200)
		wake(w, action_name(a), action_wake_queue(a, target));
	sb_free(&sb);
	return st;
}

/* A request's filter (the list's parameters; an empty one is absent):
 * 0, or the 400 in *out. A cause (an id of /api/causes, or a text) is
 * resolved into cause (CAUSE_MAX bytes), and with no status names what
 * its group counts: the failed jobs for retry and delete, the retrying
 * ones for cancel. */
static unsigned bulk_filter(struct webapi *w, enum action a, webapi_arg_fn *arg, void *ctx,
			    struct action_filter *f, char *cause, json_t **out)
{
	const char *what = action_name(a);
	const char **fields[] = {
		&f->status, &f->queue, &f->search, &f->since, &f->until, &f->cause
	};
	const char *names[] = { "status", "queue", "q", "since", "until", "cause" };
	int r;
	char err[256];

	memset(f, 0, sizeof(*f));
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *v = arg(ctx, names[i]);
		*fields[i] = v && *v ? v : NULL;
	}
	if (!action_bulk(a))
		return webjson_error(out, 400,
				     "%s: not done in bulk (cancel, retry and delete are)", what);
	if (action_filter_empty(f))
		return webjson_error(out, 400,
				     "%s: no filter: a bulk action needs at least one (status, "
				     "queue, q, since, until, cause)",
				     what);
	if (f->cause && !f->status)
		f->status = a == ACT_CANCEL ? "retrying" : "failed";
	if (f->queue && strlen(f->queue) > 64)
		return webjson_error(out, 400, "%s: queue: expected a queue's name, got '%s'", what,
				     f->queue);
	if (f->search && strlen(f->search) > 200)
		return webjson_error(out, 400, "%s: q: at most 200 bytes to search for", what);
	if (action_filter_check(a, f, err, sizeof(err)) < 0)
		return webjson_error(out, 400, "%s: %s", what, err);
	if (f->cause) {
		r = causes_resolve(f->cause, f->queue, WEBDB_STMT_LIMIT, webcauses_run, &w->db,
				   cause);
		if (r < 0)
			return webdb_failed(&w->db, out, what);
		if (r > 0)
			return webjson_error(out, 404,
					     "%s: no cause %s among the failed and retrying jobs",
					     what, f->cause);
		f->cause = cause;
	}
	return 0;
}

static int bulk_run(void *ctx, const char *sql, size_t len, const struct db_result **res)
{
	return webdb_run(ctx, sql, len, res, false);
}

unsigned webapi_bulk_count(struct webapi *w, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	const char *name = arg(ctx, "action");
	struct action_filter f;
	char cause[CAUSE_MAX];
	unsigned long long upto;
	char buf[32];
	long long n;
	enum action a;
	unsigned st;

	if (!name || action_parse(name, &a) < 0 || !action_bulk(a))
		return webjson_error(out, 400,
				     "bulk: action: expected cancel, retry or delete, got '%s'",
				     name ? name : "");
	st = bulk_filter(w, a, arg, ctx, &f, cause, out);
	if (st)
		return st;
	if (action_bulk_count(a, &f, WEBDB_STMT_LIMIT, bulk_run, &w->db, &n, &upto) < 0)
		return webdb_failed(&w->db, out, name);
	snprintf(buf, sizeof(buf), "%llu", upto);
	*out = json_pack("{s:s, s:I, s:s}", "action", action_name(a), "count", (json_int_t)n,
			 "upto", buf);
	return 200;
}

static long long mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The walk's position from the request (at_queue, after_seq: a reply's),
 * and its bound (upto, else the rows there are now). 0 or the 400. */
static unsigned bulk_position(struct webapi *w, struct action_walk *wk, webapi_arg_fn *arg,
			      void *ctx, json_t **out)
{
	const char *what = action_name(wk->a), *upto = arg(ctx, "upto");
	const char *at = arg(ctx, "at_queue"), *after = arg(ctx, "after_seq");
	int64_t v;

	if (upto && *upto) {
		if (parse_i64(upto, 0, INT64_MAX, &v) < 0)
			return webjson_error(out, 400, "%s: upto: not a seq: '%s'", what, upto);
		wk->upto = (unsigned long long)v;
	} else {
		long long n;
		if (action_bulk_count(wk->a, wk->f, WEBDB_STMT_LIMIT, bulk_run, &w->db, &n,
				      &wk->upto) < 0)
			return webdb_failed(&w->db, out, what);
	}
	wk->over = wk->upto == 0;
	if (after && *after) {
		if (parse_i64(after, 0, INT64_MAX, &v) < 0)
			return webjson_error(out, 400, "%s: after_seq: not a seq: '%s'", what,
					     after);
		wk->last = (unsigned long long)v;
	}
	if (at && *at && !wk->f->queue) {
		if (strlen(at) >= sizeof(wk->queue))
			return webjson_error(out, 400, "%s: at_queue: not a queue's name", what);
		snprintf(wk->queue, sizeof(wk->queue), "%s", at);
		wk->in_queue = true;
	}
	return 0;
}

unsigned webapi_bulk(struct webapi *w, enum action a, webapi_arg_fn *arg, void *ctx, json_t **out)
{
	static const char settle_sql[] = ACTION_SETTLE_SQL;
	const struct db_result *r;
	struct action_filter f;
	struct action_walk wk;
	char cause[CAUSE_MAX];
	long long start = mono_ms(), changed;
	bool settled = true;
	char last[32];
	unsigned st;
	int step = 0;

	st = bulk_filter(w, a, arg, ctx, &f, cause, out);
	if (st)
		return st;
	action_walk_init(&wk, a, &f, 1);
	wk.read_prefix = WEBDB_STMT_LIMIT;
	st = bulk_position(w, &wk, arg, ctx, out);
	if (st)
		return st;
	/* Batches until the slice is spent: each one statement, one
	 * transaction; its dependents settled before the next (one batch
	 * ends at most as many jobs as one call settles). */
	while (mono_ms() - start < WEBAPI_BULK_SLICE_MS &&
	       (step = action_walk_step(&wk, bulk_run, &w->db, &changed)) > 0) {
		if (changed > 0 && settled &&
		    webdb_run(&w->db, settle_sql, sizeof(settle_sql) - 1, &r, false) < 0) {
			log_warn(
				"%s: done, but settling the dependents (%s) failed: %s; kyud settles them later",
				action_name(a), ACTION_SETTLE_SQL, db_error(w->db.db));
			settled = false;
		}
	}
	if (step < 0 && wk.done == 0)
		return webdb_failed(&w->db, out, action_name(a));
	if (step < 0)
		log_warn("%s: stopped after %lld jobs: %s", action_name(a), wk.done,
			 db_error(w->db.db));
	snprintf(last, sizeof(last), "%llu", wk.last);
	*out = json_pack("{s:b, s:s, s:I, s:b, s:s?, s:s, s:b, s:s?}", "ok", 1, "done",
			 action_done(a), "count", (json_int_t)wk.done, "more",
			 step != 0 && !wk.over, "at_queue",
			 wk.in_queue && !f.queue ? wk.queue : NULL, "after_seq", last, "settled",
			 settled, "error", step < 0 ? db_error(w->db.db) : NULL);
	if (wk.done > 0)
		wake(w, action_name(a), action_wake_queue(a, ""));
	return 200;
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
		st = (*out = json_pack("{s:b, s:s}", "ok", 1, "done", action_schedule_done(a)),
		      200);
		/* kyud reads kyu_schedules again at an "any queue" wake-up. */
		wake(w, what, "");
	} else if (!sent || webdb_run(&w->db, job, sizeof(job) - 1, &r, false) < 0 ||
		   r->n_rows < 1 || !db_cell(r, 0, 0) || !db_cell(r, 0, 1)) {
		st = webdb_failed(&w->db, out, what);
	} else {
		st = (*out = json_pack("{s:b, s:s, s:s}", "ok", 1, "done", action_schedule_done(a),
				       "job", db_cell(r, 0, 0)),
		      200);
		/* Those that serve the job's queue (action_wake copies the
		 * name before its query replaces r). */
		wake(w, what, db_cell(r, 0, 1));
	}
	sb_free(&sb);
	return st;
}

unsigned webapi_drain(struct webapi *w, const char *daemon, json_t **out)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned st;

	if (!daemon || !*daemon)
		return webjson_error(out, 400, "drain: id missing");
	registry_drain_build(&sb, daemon);
	if (webdb_run(&w->db, sb.buf, sb.len, &r, false) < 0)
		st = webdb_failed(&w->db, out, "drain");
	else if (r->n_rows == 0)
		st = webjson_error(out, 404, "drain: no live daemon '%s' in kyu_daemons", daemon);
	else {
		st = (*out = json_pack("{s:b, s:s, s:s, s:s}", "ok", 1, "done", "draining", "host",
				       db_cell(r, 0, 0) ? db_cell(r, 0, 0) : "", "pid",
				       db_cell(r, 0, 1) ? db_cell(r, 0, 1) : ""),
		      200);
		/* Its refresh reads the drain at an any-queue wake-up. */
		wake(w, "drain", "");
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
