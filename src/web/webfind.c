/* The filters of the dashboard's job lists (kyu web: the Jobs tabs and
 * Retrying). See webfind.h. */
#include "webfind.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db_quote.h"
#include "common/util.h"
#include "webjson.h"
#include "webpages.h"

/* One request, checked: which index, which key, which way. */
struct find {
	const struct webfind_args *a;
	const char *status;
	bool retrying;
	bool by_queue; /* key seq on (queue, status); else (updated_at, seq) */
	bool residual; /* a filter no index serves: a bounded window */
	bool asc;      /* the newer page (after=), read oldest first */
	bool cursor;
	char t[64]; /* the cursor's updated_at (by_queue: unused) */
	unsigned long long seq;
	char since[32], until[32];
	bool win; /* the window was full: it ends at (win_t, win_seq) */
	char win_t[64];
	unsigned long long win_seq;
};

/* blocked: waiting for other jobs (kyu_jobs(7), "Workflows"); a schema
 * older than version 5 has none, and its list is empty. */
static const char *const statuses[] = { "waiting",   "running", "succeeded", "failed",
					"cancelled", "blocked", NULL };

/* A time as the server reads a DATETIME: "2026-11-24", "2026-11-24 06:35",
 * "...:00.123456"; the 'T' of an HTML datetime-local field becomes a space. */
static int parse_time(const char *s, char *out, size_t outlen)
{
	size_t n = strlen(s);

	if (n < 10 || n >= outlen || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == 'T')
			c = ' ';
		if (!strchr("0123456789-: .", c))
			return -EINVAL;
		out[i] = c;
	}
	out[n] = '\0';
	return 0;
}

static int parse_cursor(struct find *f, const char *s)
{
	int64_t v;

	f->cursor = true;
	if (!f->by_queue)
		return webpages_parse_cursor(s, f->t, sizeof(f->t), &f->seq);
	if (parse_i64(s, 1, INT64_MAX, &v) < 0)
		return -EINVAL;
	f->seq = (unsigned long long)v;
	return 0;
}

/* key OP (t, seq), OP one of < > <= >= (the keyset's comparison). */
static void key_cmp(struct strbuf *sb, const struct find *f, const char *op, const char *t,
		    unsigned long long seq)
{
	if (f->by_queue) {
		sb_printf(sb, " AND seq %s %llu", op, seq);
		return;
	}
	sb_printf(sb, " AND (updated_at %c ", op[0]);
	db_quotes(sb, t);
	sb_adds(sb, " OR (updated_at = ");
	db_quotes(sb, t);
	sb_printf(sb, " AND seq %s %llu))", op, seq);
}

/* FROM, the index and what it filters exactly; with_cursor: from the
 * cursor on, the way the page reads. */
static void exact(struct strbuf *sb, const struct find *f, bool with_cursor)
{
	sb_adds(sb, f->by_queue
			    ? " FROM kyu_jobs FORCE INDEX (kyu_jobs_queue_status) WHERE queue = "
			    : " FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) WHERE 1");
	if (f->by_queue)
		db_quotes(sb, f->a->queue);
	sb_adds(sb, " AND status = ");
	db_quotes(sb, f->status);
	if (!f->by_queue) {
		if (f->since[0]) {
			sb_adds(sb, " AND updated_at >= ");
			db_quotes(sb, f->since);
		}
		if (f->until[0]) {
			sb_adds(sb, " AND updated_at < ");
			db_quotes(sb, f->until);
		}
	}
	if (with_cursor && f->cursor)
		key_cmp(sb, f, f->asc ? ">" : "<", f->t, f->seq);
}

static void order(struct strbuf *sb, const struct find *f)
{
	if (f->by_queue)
		sb_adds(sb, f->asc ? " ORDER BY seq" : " ORDER BY seq DESC");
	else
		sb_adds(sb, f->asc ? " ORDER BY updated_at, seq"
				   : " ORDER BY updated_at DESC, seq DESC");
}

static void residual(struct strbuf *sb, const struct find *f)
{
	if (f->retrying)
		sb_adds(sb, " AND attempts > 0");
	if (f->by_queue && f->since[0]) {
		sb_adds(sb, " AND updated_at >= ");
		db_quotes(sb, f->since);
	}
	if (f->by_queue && f->until[0]) {
		sb_adds(sb, " AND updated_at < ");
		db_quotes(sb, f->until);
	}
	if (f->a->text && *f->a->text) {
		static const char *const cols[] = { "id", "command", "argv", "error", "output" };
		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
			sb_printf(sb, "%s%s LIKE ", i ? " OR " : " AND (", cols[i]);
			db_quote_like_anywhere(sb, f->a->text);
		}
		sb_adds(sb, ")");
	}
}

/* Where the window of WEBFIND_SCAN index entries from the cursor ends, if
 * there are that many: f->win and its key. Only the key's columns, which
 * the index holds: the entries skipped cost no row read. */
static int window_end(struct webdb *d, struct find *f)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT seq");
	if (!f->by_queue)
		sb_adds(&sb, ", updated_at");
	exact(&sb, f, true);
	order(&sb, f);
	sb_printf(&sb, " LIMIT 1 OFFSET %d", WEBFIND_SCAN - 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	f->win = r->n_rows > 0;
	if (f->win) {
		const char *seq = db_cell(r, 0, 0), *t = f->by_queue ? "" : db_cell(r, 0, 1);
		f->win_seq = strtoull(seq ? seq : "0", NULL, 10);
		snprintf(f->win_t, sizeof(f->win_t), "%s", t ? t : "");
	}
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

/* The exact filters' total, counted up to WEBFIND_COUNT_CAP + 1 entries of
 * the index (without the cursor: the same on every page). */
static int total(struct webdb *d, const struct find *f, json_t *page)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc = -1;

	sb_adds(&sb, WEBDB_STMT_LIMIT "SELECT COUNT(*) FROM (SELECT 1");
	exact(&sb, f, false);
	sb_printf(&sb, " LIMIT %d) AS c", WEBFIND_COUNT_CAP + 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	long long n = strtoll(db_cell(r, 0, 0) ? db_cell(r, 0, 0) : "0", NULL, 10);
	json_object_set_new(page, "total",
			    json_integer(n > WEBFIND_COUNT_CAP ? WEBFIND_COUNT_CAP : n));
	json_object_set_new(page, "total_capped", json_boolean(n > WEBFIND_COUNT_CAP));
	rc = 0;
cleanup:
	sb_free(&sb);
	return rc;
}

static json_t *cursor_of(const struct find *f, const char *t, unsigned long long seq)
{
	char buf[128];

	if (f->by_queue)
		snprintf(buf, sizeof(buf), "%llu", seq);
	else
		snprintf(buf, sizeof(buf), "%s,%llu", t ? t : "", seq);
	return json_string(buf);
}

static json_t *row_cursor(const struct find *f, const struct db_result *r, size_t row)
{
	const char *seq = db_cell(r, row, 0), *t = db_cell(r, row, 11);

	return cursor_of(f, t, strtoull(seq ? seq : "0", NULL, 10));
}

static int check(struct find *f, const struct webfind_args *a, bool retrying, json_t **out,
		 unsigned *st)
{
	bool known = false;

	f->a = a;
	f->retrying = retrying;
	f->status = retrying ? "waiting" : a->status;
	for (size_t i = 0; f->status && statuses[i]; i++)
		known |= strcmp(f->status, statuses[i]) == 0;
	if (!known)
		*st = webjson_error(out, 400,
				    "jobs: status: expected waiting, running, succeeded, "
				    "failed, cancelled or blocked, got '%s'",
				    f->status ? f->status : "");
	else if (a->queue && (!*a->queue || strlen(a->queue) > 64))
		*st = webjson_error(out, 400, "jobs: queue: expected a queue's name, got '%s'",
				    a->queue);
	else if (a->since && *a->since && parse_time(a->since, f->since, sizeof(f->since)) < 0)
		*st = webjson_error(out, 400, "jobs: since: not a time (YYYY-MM-DD hh:mm:ss): '%s'",
				    a->since);
	else if (a->until && *a->until && parse_time(a->until, f->until, sizeof(f->until)) < 0)
		*st = webjson_error(out, 400, "jobs: until: not a time (YYYY-MM-DD hh:mm:ss): '%s'",
				    a->until);
	else if (a->text && strlen(a->text) > 200)
		*st = webjson_error(out, 400, "jobs: q: at most 200 bytes to search for");
	else if (a->before && a->after)
		*st = webjson_error(out, 400, "jobs: before and after: one cursor at a time");
	else
		*st = 0;
	if (*st)
		return -1;
	f->by_queue = a->queue != NULL;
	f->residual =
		retrying || (a->text && *a->text) || (f->by_queue && (f->since[0] || f->until[0]));
	f->asc = a->after != NULL;
	if ((a->before || a->after) && parse_cursor(f, a->before ? a->before : a->after) < 0) {
		*st = webjson_error(out, 400, "jobs: %s: not a cursor of this list: '%s'",
				    a->before ? "before" : "after",
				    a->before ? a->before : a->after);
		return -1;
	}
	return 0;
}

/* Not seq nor owner: BIGINT UNSIGNED identifiers, sent as strings. */
static const char *const num_cols[] = { "attempts", "max_attempts", "exit_code", "signal", NULL };

unsigned webfind_jobs(struct webdb *d, const struct webfind_args *a, bool retrying, json_t **out)
{
	const char *what = retrying ? "retrying" : "jobs";
	struct find f = { 0 };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *page, *rows, *older, *newer;
	size_t shown;
	unsigned st;

	if (check(&f, a, retrying, out, &st) < 0)
		return st;
	if (f.residual && window_end(d, &f) < 0)
		return webdb_failed(d, out, what);
	page = json_object();
	if (!f.residual && total(d, &f, page) < 0) {
		json_decref(page);
		return webdb_failed(d, out, what);
	}
	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT seq, id, queue, status, attempts, max_attempts, exit_code, "
		"`signal`, LEFT(error, 500) AS error, run_at, finished_at, updated_at, host, "
		"LEFT(COALESCE(command, argv), 200) AS what, RIGHT(output, 600) AS output_tail");
	exact(&sb, &f, true);
	if (f.win)
		key_cmp(&sb, &f, f.asc ? "<=" : ">=", f.win_t, f.win_seq);
	residual(&sb, &f);
	order(&sb, &f);
	sb_printf(&sb, " LIMIT %d", WEBPAGES_PAGE + 1);
	/* The clock and zone of the rows' times, for "3 min ago" and the
	 * zone beside each (read before the page: r is the last result). */
	{
		static const char clock[] = "SELECT NOW(6), " WEBPAGES_ZONE;
		if (webdb_read(d, clock, sizeof(clock) - 1, &r) < 0) {
			json_decref(page);
			st = webdb_failed(d, out, what);
			goto cleanup;
		}
		json_object_set_new(page, "now", webjson_cell(r, 0, 0, NULL));
		json_object_set_new(page, "zone", webjson_cell(r, 0, 1, NULL));
	}
	if (webdb_read(d, sb.buf, sb.len, &r) < 0) {
		json_decref(page);
		st = webdb_failed(d, out, what);
		goto cleanup;
	}
	shown = r->n_rows > WEBPAGES_PAGE ? WEBPAGES_PAGE : r->n_rows;
	/* The page that goes on past this one, the way it was read: from its
	 * last row while there are more, else from the window's end. */
	json_t *onward = r->n_rows > WEBPAGES_PAGE ? row_cursor(&f, r, shown - 1)
			 : f.win                   ? cursor_of(&f, f.win_t, f.win_seq)
						   : json_null();
	/* And back the way it came: only when it came from a cursor. */
	json_t *back = !f.cursor ? json_null()
		       : shown   ? row_cursor(&f, r, 0)
				 : json_string(f.asc ? a->after : a->before);
	if (f.asc) {
		newer = onward;
		older = back;
		json_t *asc = webjson_rows(r, shown, num_cols);
		rows = json_array();
		for (size_t i = json_array_size(asc); i-- > 0;)
			json_array_append(rows, json_array_get(asc, i));
		json_decref(asc);
	} else {
		older = onward;
		newer = back;
		rows = webjson_rows(r, shown, num_cols);
	}
	json_object_set_new(page, "rows", rows);
	json_object_set_new(page, "next", older);
	json_object_set_new(page, "newer", newer);
	json_object_set_new(page, "status", json_string(f.status));
	json_object_set_new(page, "order", json_string(f.by_queue ? "submitted" : "changed"));
	json_object_set_new(page, "scanned", f.residual ? json_integer(WEBFIND_SCAN) : json_null());
	json_object_set_new(page, "window_ended",
			    json_boolean(f.win && r->n_rows <= WEBPAGES_PAGE));
	if (retrying)
		json_object_set_new(page, "window", json_integer(WEBFIND_SCAN));
	*out = page;
	st = 200;
cleanup:
	sb_free(&sb);
	return st;
}
