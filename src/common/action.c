/* What an operator does to a job, a queue or a schedule. See action.h. */
#include "action.h"

#include <errno.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cause.h"
#include "registry.h"
#include "wake.h"

struct action_def {
	const char *name;
	const char *done;
	const char *needs;
	/* The statement up to the quoted target. For cancel, retry and
	 * delete: up to its WHERE, which says the statuses below, then
	 * "id = " (one job) or the batch of a bulk action. */
	const char *head;
	/* The statuses the job actions that may be done in bulk apply to. */
	const char *statuses[4];
	/* After the target. */
	const char *tail;
	/* Queue upserts: after the condition. */
	const char *tail2;
};

static const struct action_def defs[ACT_N] = {
	[ACT_CANCEL] = { "cancel",
			 "cancelled",
			 "waiting, blocked or running",
			 "UPDATE kyu_jobs SET status = 'cancelled' WHERE ",
			 { "waiting", "blocked", "running" },
			 "",
			 NULL },
	[ACT_RETRY] = { "retry",
			"retrying",
			"failed or cancelled",
			"UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, "
			"tempfails = 0, error = NULL WHERE ",
			{ "failed", "cancelled" },
			"",
			NULL },
	/* Only a job that is not due yet: moving run_at of a due job would
	 * only put it behind others of the same priority. */
	[ACT_RUN_NOW] = { "run-now",
			  "due now",
			  "waiting and due later",
			  "UPDATE kyu_jobs SET run_at = NOW(6) "
			  "WHERE status = 'waiting' AND run_at > NOW(6) AND id = ",
			  { NULL },
			  "",
			  NULL },
	/* Never a waiting or running row: that is what cancel is for, and a
	 * running job's worker still has to record its end. */
	[ACT_DELETE] = { "delete",
			 "deleted",
			 "succeeded, failed or cancelled",
			 "DELETE FROM kyu_jobs WHERE ",
			 { "succeeded", "failed", "cancelled" },
			 "",
			 NULL },
	/* The queue actions: head, the name, tail (action_sql adds the
	 * condition that the queue exists in between, unless asked not to). */
	[ACT_PAUSE] = { "pause",
			"paused",
			NULL,
			"INSERT INTO kyu_queues (name, paused) SELECT ",
			{ NULL },
			", 1 ",
			" ON DUPLICATE KEY UPDATE paused = VALUES(paused)" },
	[ACT_RESUME] = { "resume",
			 "resumed",
			 NULL,
			 "INSERT INTO kyu_queues (name, paused) SELECT ",
			 { NULL },
			 ", 0 ",
			 " ON DUPLICATE KEY UPDATE paused = VALUES(paused)" },
	/* Every setting back to its default: the row goes. */
	[ACT_RESET] = { "reset",
			"settings removed",
			NULL,
			"DELETE FROM kyu_queues WHERE name = ",
			{ NULL },
			"",
			"" },
};

const char *action_name(enum action a)
{
	return a < ACT_N ? defs[a].name : "?";
}

int action_parse(const char *name, enum action *ret)
{
	for (int i = 0; i < ACT_N; i++) {
		if (strcmp(name, defs[i].name) == 0) {
			*ret = (enum action)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool action_on_queue(enum action a)
{
	return a == ACT_PAUSE || a == ACT_RESUME || a == ACT_RESET;
}

const char *action_needs(enum action a)
{
	return a < ACT_N ? defs[a].needs : NULL;
}

const char *action_done(enum action a)
{
	return a < ACT_N ? defs[a].done : "?";
}

/* "status IN ('waiting', 'blocked', 'running')": the statuses a applies to. */
static void status_cond(struct strbuf *sb, enum action a)
{
	sb_adds(sb, "status IN (");
	for (int i = 0; defs[a].statuses[i]; i++)
		sb_printf(sb, "%s'%s'", i ? ", " : "", defs[a].statuses[i]);
	sb_adds(sb, ")");
}

void action_sql(struct strbuf *sb, enum action a, const char *target)
{
	action_sql_create(sb, a, target, false);
}

void action_sql_create(struct strbuf *sb, enum action a, const char *target, bool create)
{
	if (a >= ACT_N)
		return;
	sb_adds(sb, defs[a].head);
	if (defs[a].statuses[0]) {
		status_cond(sb, a);
		sb_adds(sb, " AND id = ");
	}
	db_quotes(sb, target);
	sb_adds(sb, defs[a].tail);
	if (a != ACT_PAUSE && a != ACT_RESUME)
		return;
	/* A queue exists when it has jobs (the (queue, status) index answers)
	 * or settings. With found rows (db.c), an upsert that changes nothing
	 * still counts its row: 0 rows means that the queue does not exist,
	 * and a mistyped name leaves no row behind. */
	sb_adds(sb, "FROM DUAL");
	if (!create)
		action_queue_exists(sb, target);
	sb_adds(sb, defs[a].tail2);
}

void action_queue_exists(struct strbuf *sb, const char *queue)
{
	sb_adds(sb, " WHERE EXISTS (SELECT 1 FROM kyu_jobs WHERE queue = ");
	db_quotes(sb, queue);
	sb_adds(sb, ") OR EXISTS (SELECT 1 FROM kyu_queues WHERE name = ");
	db_quotes(sb, queue);
	sb_adds(sb, ")");
}

bool action_unique_taken(struct db *db, enum action a, const char *id, char *msg, size_t len)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r;
	bool ok = false;

	if (a != ACT_RETRY || db_error_code(db) != ER_DUP_ENTRY ||
	    !strstr(db_error(db), "kyu_jobs_unique_key"))
		return false;
	sb_adds(&sb,
		"SELECT j.unique_key, o.id, o.status FROM kyu_jobs AS j LEFT JOIN kyu_jobs AS o "
		"ON o.unique_live = j.unique_key WHERE j.id = ");
	db_quotes(&sb, id);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 &&
	    reply->r[0].n_rows > 0 && db_cell(&reply->r[0], 0, 0)) {
		r = &reply->r[0];
		if (db_cell(r, 0, 1))
			snprintf(
				msg, len,
				"job '%s' cannot be retried: its unique key '%s' is held by job '%s' "
				"(%s), which has not ended",
				id, db_cell(r, 0, 0), db_cell(r, 0, 1),
				db_cell(r, 0, 2) ? db_cell(r, 0, 2) : "?");
		else
			snprintf(
				msg, len,
				"job '%s' cannot be retried: its unique key '%s' was held by another "
				"job that had not ended (it has since: try again)",
				id, db_cell(r, 0, 0));
		ok = true;
	}
	sb_free(&sb);
	return ok;
}

const char *action_wake_queue(enum action a, const char *target)
{
	switch (a) {
	case ACT_PAUSE:
		return NULL;
	case ACT_RESUME:
	case ACT_RESET:
		return target;
	case ACT_CANCEL:
		return WAKE_CANCEL;
	default:
		return "";
	}
}

__attribute__((format(printf, 3, 4))) static void notef(action_note_fn *note, const void *ctx,
							const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(ctx, msg);
}

/* Send msg to one address; 0 or -1. */
static int wake_one(const char *addr, const char *msg, size_t n, action_note_fn *note,
		    const void *ctx)
{
	char err[256];
	int fd, r;

	fd = wake_socket(addr, false, err, sizeof(err));
	if (fd < 0) {
		notef(note, ctx, "%s", err);
		return -1;
	}
	r = send(fd, msg, n, 0) == (ssize_t)n ? 0 : -1;
	if (r < 0)
		notef(note, ctx, "send to %s: %s", addr, strerror(errno));
	close(fd);
	return r;
}

int action_wake(struct db *db, const char *listen, const char *path, const char *queue,
		action_note_fn *note, const void *ctx)
{
	char msg[sizeof(WAKE_PREFIX) + WAKE_QUEUE_MAX];
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r = NULL;
	int n, sent = 0, failed = 0;
	/* The cancel hint goes where "any queue" goes. */
	bool any = !*queue || strcmp(queue, WAKE_CANCEL) == 0;

	if (strlen(queue) > WAKE_QUEUE_MAX) {
		notef(note, ctx, "queue name longer than %d bytes", WAKE_QUEUE_MAX);
		return -1;
	}
	/* Copied first: queue may point into a reply the query below replaces
	 * (the dashboard's run-now passes a cell of its own last reply); from
	 * here on only the copy is read. */
	n = snprintf(msg, sizeof(msg), "%s%s", WAKE_PREFIX, queue);
	queue = msg + sizeof(WAKE_PREFIX) - 1;
	/* Every live daemon that serves the queue, as the triggers of
	 * sql/notify.sql pick them; "" (any queue) reaches them all. */
	if (!any) {
		sb_adds(&sb, "SET @kyu_q = ");
		db_quotes(&sb, queue);
		sb_adds(&sb, "; ");
	}
	sb_adds(&sb,
		"SELECT DISTINCT d.wake_addr FROM kyu_daemons AS d WHERE d.wake_addr IS NOT NULL "
		"AND " REGISTRY_LIVE("d"));
	if (!any)
		sb_adds(&sb, " AND " REGISTRY_SERVES("d", "@kyu_q"));
	/* Without the table (an older schema), without the privilege to read
	 * it, or without a live row: the configured address, as before. */
	if (db && db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0)
		r = &reply->r[reply->n - 1];
	else if (db)
		notef(note, ctx, "cannot read kyu_daemons (%s); sending to [kyud] listen",
		      db_error(db));
	for (size_t i = 0; r && i < r->n_rows; i++) {
		const char *addr = db_cell(r, i, 0);
		if (!addr)
			continue;
		if (wake_one(addr, msg, (size_t)n, note, ctx) == 0)
			sent++;
		else
			failed++;
	}
	sb_free(&sb);
	if (sent + failed > 0)
		return sent > 0 ? 0 : -1;
	if (!listen || !*listen) {
		notef(note, ctx,
		      "no live daemon in kyu_daemons serves %s%s, and [kyud] listen is not set in %s",
		      !any ? "queue " : "any queue", !any ? queue : "",
		      path ? path : "the configuration");
		return -1;
	}
	return wake_one(listen, msg, (size_t)n, note, ctx);
}

bool action_bulk(enum action a)
{
	return a == ACT_CANCEL || a == ACT_RETRY || a == ACT_DELETE;
}

bool action_filter_empty(const struct action_filter *f)
{
	return !f->queue && !f->status && !f->since && !f->until && !f->search && !f->error &&
	       f->older_than <= 0 && !f->cause;
}

/* A time as the server reads a DATETIME, checked before it is quoted. */
static bool time_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 10 && n < 32 && s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789-: .T") == n;
}

static bool applies_to(enum action a, const char *status)
{
	for (int i = 0; defs[a].statuses[i]; i++)
		if (strcmp(defs[a].statuses[i], status) == 0)
			return true;
	return false;
}

int action_filter_check(enum action a, const struct action_filter *f, char *err, size_t len)
{
	const char *bad_time = f->since && !time_ok(f->since)   ? f->since
			       : f->until && !time_ok(f->until) ? f->until
								: NULL;

	if (!action_bulk(a))
		snprintf(err, len, "%s: not done in bulk (cancel, retry and delete are)",
			 action_name(a));
	else if (f->queue && !*f->queue)
		snprintf(err, len, "queue: the queue name must not be empty");
	else if (f->status && !applies_to(a, f->status) &&
		 !(a == ACT_CANCEL && strcmp(f->status, "retrying") == 0))
		snprintf(err, len, "status: %s applies to %s jobs%s, not '%s'", action_name(a),
			 action_needs(a), a == ACT_CANCEL ? " (or retrying)" : "", f->status);
	else if (bad_time)
		snprintf(
			err, len,
			"%s: '%s' is not a time (YYYY-MM-DD [hh:mm[:ss]], the database's time zone)",
			bad_time == f->since ? "since" : "until", bad_time);
	else if ((f->search && !*f->search) || (f->error && !*f->error))
		snprintf(err, len, "%s: nothing to search for",
			 f->search && !*f->search ? "search" : "error");
	else if (f->cause && (!*f->cause || strlen(f->cause) >= CAUSE_MAX))
		snprintf(err, len, "cause: expected a cause of kyu causes, 1 to %d bytes",
			 CAUSE_MAX - 1);
	else if (f->older_than < 0)
		snprintf(err, len, "older than: %lld is a negative age", f->older_than);
	else
		return 0;
	return -EINVAL;
}

/* A time quoted, the 'T' of an HTML datetime-local field a space. */
static void quote_time(struct strbuf *sb, const char *t)
{
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(buf) - 1 && t[i]; i++)
		buf[i] = (char)(t[i] == 'T' ? ' ' : t[i]);
	buf[i] = '\0';
	db_quotes(sb, buf);
}

/* The conditions besides status and queue, each " AND ...". */
static void residual(struct strbuf *sb, const struct action_filter *f)
{
	if (f->status && strcmp(f->status, "retrying") == 0)
		sb_adds(sb, " AND attempts > 0");
	if (f->since) {
		sb_adds(sb, " AND updated_at >= ");
		quote_time(sb, f->since);
	}
	if (f->until) {
		sb_adds(sb, " AND updated_at < ");
		quote_time(sb, f->until);
	}
	if (f->older_than > 0)
		sb_printf(sb, " AND updated_at < NOW(6) - INTERVAL %lld SECOND", f->older_than);
	if (f->error) {
		sb_adds(sb, " AND error LIKE ");
		db_quote_like_anywhere(sb, f->error);
	}
	if (f->search) {
		static const char *const cols[] = { "id", "command", "argv", "error", "output" };
		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
			sb_printf(sb, "%s%s LIKE ", i ? " OR " : " AND (", cols[i]);
			db_quote_like_anywhere(sb, f->search);
		}
		sb_adds(sb, ")");
	}
	if (f->cause) {
		char pat[CAUSE_MAX * 2 + 8];
		/* A cause that fits CAUSE_MAX fits: each byte at most
		 * doubled, and the two ends. */
		if (cause_like(f->cause, pat, sizeof(pat)) == 0) {
			sb_adds(sb, " AND IFNULL(error, '') LIKE ");
			db_quotes(sb, pat);
		} else {
			sb_adds(sb, " AND FALSE");
		}
	}
}

/* Whether line (a CAUSE_LINE_SQL, NULL for no error) folds to cause. */
static bool cause_is(const char *line, const char *cause)
{
	char buf[CAUSE_MAX];

	cause_fold(line ? line : "", line ? strlen(line) : 0, buf, sizeof(buf));
	return strcmp(buf, cause) == 0;
}

/* The statuses the filter leaves to the action: its own, or the one
 * asked for ("retrying" is waiting, and a residual condition). */
static int walk_statuses(enum action a, const struct action_filter *f, const char **out)
{
	int n = 0;

	if (f->status) {
		out[n++] = strcmp(f->status, "retrying") == 0 ? "waiting" : f->status;
		return n;
	}
	for (; defs[a].statuses[n]; n++)
		out[n] = defs[a].statuses[n];
	return n;
}

/* " status IN (...)", or "status = ..." for one, of the walk. */
static void filter_statuses(struct strbuf *sb, enum action a, const struct action_filter *f)
{
	const char *st[4];
	int n = walk_statuses(a, f, st);

	sb_adds(sb, n == 1 ? "status = " : "status IN (");
	for (int i = 0; i < n; i++) {
		sb_adds(sb, i ? ", " : "");
		db_quotes(sb, st[i]);
	}
	sb_adds(sb, n == 1 ? "" : ")");
}

/* The count of a filter with a cause: the candidates the server finds,
 * ACTION_CAUSE_PAGE at a time by seq, each folded here. */
static int cause_count(enum action a, const struct action_filter *f, const char *read_prefix,
		       action_run_fn *run, void *ctx, long long *n, unsigned long long *upto)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned long long last = 0;
	int rc = -1;

	*n = 0;
	*upto = 0;
	for (;;) {
		sb_reset(&sb);
		sb_adds(&sb, read_prefix ? read_prefix : "");
		sb_adds(&sb, "SELECT seq, " CAUSE_LINE_SQL " FROM kyu_jobs WHERE ");
		filter_statuses(&sb, a, f);
		if (f->queue) {
			sb_adds(&sb, " AND queue = ");
			db_quotes(&sb, f->queue);
		}
		residual(&sb, f);
		sb_printf(&sb, " AND seq > %llu ORDER BY seq LIMIT %d", last, ACTION_CAUSE_PAGE);
		if (run(ctx, sb.buf, sb.len, &r) < 0)
			goto cleanup;
		for (size_t i = 0; i < r->n_rows; i++) {
			unsigned long long seq =
				strtoull(db_cell(r, i, 0) ? db_cell(r, i, 0) : "0", NULL, 10);
			if (cause_is(db_cell(r, i, 1), f->cause)) {
				(*n)++;
				*upto = seq;
			}
			last = seq;
		}
		if (r->n_rows < ACTION_CAUSE_PAGE)
			break;
	}
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

int action_bulk_count(enum action a, const struct action_filter *f, const char *read_prefix,
		      action_run_fn *run, void *ctx, long long *n, unsigned long long *upto)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	if (f->cause)
		return cause_count(a, f, read_prefix, run, ctx, n, upto);
	sb_adds(&sb, read_prefix ? read_prefix : "");
	sb_adds(&sb, "SELECT COUNT(*), MAX(seq) FROM kyu_jobs WHERE ");
	filter_statuses(&sb, a, f);
	if (f->queue) {
		sb_adds(&sb, " AND queue = ");
		db_quotes(&sb, f->queue);
	}
	residual(&sb, f);
	if (run(ctx, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	*n = r->n_rows && db_cell(r, 0, 0) ? strtoll(db_cell(r, 0, 0), NULL, 10) : 0;
	*upto = r->n_rows && db_cell(r, 0, 1) ? strtoull(db_cell(r, 0, 1), NULL, 10) : 0;
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

void action_walk_init(struct action_walk *w, enum action a, const struct action_filter *f,
		      unsigned long long upto)
{
	memset(w, 0, sizeof(*w));
	w->a = a;
	w->f = f;
	w->upto = upto;
	w->over = upto == 0;
	if (f->queue) {
		snprintf(w->queue, sizeof(w->queue), "%s", f->queue);
		w->in_queue = true;
	}
}

/* The next queue by name after w->queue (the first when none yet), on
 * the index (queue, status): 1, 0 when there is none, -1. */
static int next_queue(struct action_walk *w, action_run_fn *run, void *ctx)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	sb_adds(&sb, w->read_prefix ? w->read_prefix : "");
	sb_adds(&sb, "SELECT queue FROM kyu_jobs FORCE INDEX (kyu_jobs_queue_status)");
	if (w->in_queue) {
		sb_adds(&sb, " WHERE queue > ");
		db_quotes(&sb, w->queue);
	}
	sb_adds(&sb, " ORDER BY queue LIMIT 1");
	if (run(ctx, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	rc = r->n_rows > 0 && db_cell(r, 0, 0) && strlen(db_cell(r, 0, 0)) < sizeof(w->queue);
	if (rc) {
		snprintf(w->queue, sizeof(w->queue), "%s", db_cell(r, 0, 0));
		w->in_queue = true;
		w->last = 0;
	}
cleanup:
	sb_free(&sb);
	return rc;
}

/* The seqs of the walk's next batch in its queue: one part per status on
 * (queue, status), whose entries end with seq, so that each reads the
 * batch's entries only, in order. */
static void batch_select(struct strbuf *sb, const struct action_walk *w)
{
	const char *st[4];
	int n = walk_statuses(w->a, w->f, st);

	sb_adds(sb, w->read_prefix ? w->read_prefix : "");
	for (int i = 0; i < n; i++) {
		sb_adds(sb, i ? " UNION ALL (" : "(");
		sb_adds(sb, w->f->cause ? "SELECT seq, " CAUSE_LINE_SQL : "SELECT seq");
		sb_adds(sb, " FROM kyu_jobs FORCE INDEX (kyu_jobs_queue_status) WHERE queue = ");
		db_quotes(sb, w->queue);
		sb_adds(sb, " AND status = ");
		db_quotes(sb, st[i]);
		sb_printf(sb, " AND seq > %llu AND seq <= %llu", w->last, w->upto);
		residual(sb, w->f);
		sb_printf(sb, " ORDER BY seq LIMIT %d)", ACTION_BATCH);
	}
	sb_printf(sb, " ORDER BY seq LIMIT %d", ACTION_BATCH);
}

/* The action on the rows of r (seqs, in order; with a cause, those whose
 * line folds to it), with the action's own statuses and the filter
 * checked again. Returns the rows it names. */
static size_t batch_act(struct strbuf *sb, const struct action_walk *w, const struct db_result *r)
{
	size_t n = 0;

	sb_adds(sb, defs[w->a].head);
	status_cond(sb, w->a);
	sb_adds(sb, " AND ");
	filter_statuses(sb, w->a, w->f);
	sb_adds(sb, " AND queue = ");
	db_quotes(sb, w->queue);
	residual(sb, w->f);
	sb_adds(sb, " AND seq IN (");
	for (size_t i = 0; i < r->n_rows; i++)
		if (!w->f->cause || cause_is(db_cell(r, i, 1), w->f->cause))
			sb_printf(sb, "%s%s", n++ ? "," : "",
				  db_cell(r, i, 0) ? db_cell(r, i, 0) : "0");
	sb_adds(sb, ")");
	sb_adds(sb, defs[w->a].tail);
	return n;
}

int action_walk_step(struct action_walk *w, action_run_fn *run, void *ctx, long long *changed)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	unsigned long long last;
	int rc = -1;

	if (changed)
		*changed = 0;
	while (!w->over) {
		if (!w->in_queue) {
			rc = next_queue(w, run, ctx);
			if (rc <= 0) {
				w->over = rc == 0;
				goto cleanup;
			}
		}
		sb_reset(&sb);
		batch_select(&sb, w);
		if (run(ctx, sb.buf, sb.len, &r) < 0) {
			rc = -1;
			goto cleanup;
		}
		if (r->n_rows > 0)
			break;
		/* This queue is done: the next one, unless the filter names it. */
		if (w->f->queue)
			w->over = true;
		else if ((rc = next_queue(w, run, ctx)) <= 0) {
			w->over = rc == 0;
			goto cleanup;
		}
	}
	if (w->over) {
		rc = 0;
		goto cleanup;
	}
	last = strtoull(db_cell(r, r->n_rows - 1, 0) ? db_cell(r, r->n_rows - 1, 0) : "0", NULL,
			10);
	sb_reset(&sb);
	if (batch_act(&sb, w, r) == 0) {
		/* Candidates of another cause only: nothing to send. */
		w->last = last;
		rc = 1;
		goto cleanup;
	}
	if (run(ctx, sb.buf, sb.len, &r) < 0) {
		rc = -1;
		goto cleanup;
	}
	w->last = last;
	w->done += (long long)r->affected;
	if (changed)
		*changed = (long long)r->affected;
	rc = 1;
cleanup:
	sb_free(&sb);
	return rc;
}

static const char *const sched_names[ACT_SCHED_N] = { "enable", "disable", "run-now", "remove" };
static const char *const sched_done[ACT_SCHED_N] = { "enabled", "disabled", "enqueued", "removed" };

int action_schedule_parse(const char *name, enum action_schedule *ret)
{
	for (int i = 0; i < ACT_SCHED_N; i++) {
		if (strcmp(name, sched_names[i]) == 0) {
			*ret = (enum action_schedule)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *action_schedule_name(enum action_schedule a)
{
	return a < ACT_SCHED_N ? sched_names[a] : "?";
}

const char *action_schedule_done(enum action_schedule a)
{
	return a < ACT_SCHED_N ? sched_done[a] : "?";
}

void action_schedule_sql(struct strbuf *sb, enum action_schedule a, const char *name)
{
	switch (a) {
	case ACT_SCHED_RUN_NOW:
		/* A job from the template now, outside the instants: next_run
		 * and the overlap rule are left alone. */
		sb_adds(sb,
			"INSERT INTO kyu_jobs (id, queue, command, argv, env, cwd, priority, "
			"max_attempts, time_limit, concurrency_key) SELECT CONCAT('cron:', name, "
			"':now:', DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%fZ')), queue, "
			"command, argv, env, cwd, priority, max_attempts, time_limit, "
			"IF(overlap = 'queue', IFNULL(concurrency_key, CONCAT('cron:', name)), "
			"concurrency_key) FROM kyu_schedules WHERE name = ");
		break;
	case ACT_SCHED_REMOVE:
		sb_adds(sb, "DELETE FROM kyu_schedules WHERE name = ");
		break;
	case ACT_SCHED_ENABLE:
	case ACT_SCHED_DISABLE:
		sb_printf(sb, "UPDATE kyu_schedules SET enabled = %d WHERE name = ",
			  a == ACT_SCHED_ENABLE);
		break;
	default:
		return;
	}
	db_quotes(sb, name);
}
