/* What the binary log's events mean for this daemon. See follow.h. */
#include "follow.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

void follow_init(struct follow *f, const struct kyu_config *cfg)
{
	memset(f, 0, sizeof(*f));
	f->cfg = cfg;
}

bool follow_serves(const struct kyu_config *cfg, const uint8_t *queue, size_t len)
{
	if (cfg->n_queues == 0)
		return true;
	for (int i = 0; i < cfg->n_queues; i++)
		if (strlen(cfg->queues[i]) == len && memcmp(cfg->queues[i], queue, len) == 0)
			return true;
	return false;
}

static bool same(const char *a, size_t alen, const char *b)
{
	return a && alen == strlen(b) && memcmp(a, b, alen) == 0;
}

static void take_map(struct follow *f, const struct binlog_table_map *m)
{
	struct follow_map *slot = NULL;
	enum follow_table t = FT_OTHER;

	if (same(m->db, m->db_len, f->cfg->db_name)) {
		if (same(m->table, m->table_len, "kyu_jobs"))
			t = FT_JOBS;
		else if (same(m->table, m->table_len, "kyu_queues"))
			t = FT_QUEUES;
		else if (same(m->table, m->table_len, "kyu_schedules"))
			t = FT_SCHEDULES;
	}
	for (int i = 0; i < f->n_maps; i++)
		if (f->maps[i].id == m->table_id)
			slot = &f->maps[i];
	if (!slot && t == FT_OTHER)
		return; /* rows of unknown tables are not ours anyway */
	if (!slot) {
		if (f->n_maps < FOLLOW_MAPS) {
			slot = &f->maps[f->n_maps++];
		} else {
			slot = &f->maps[f->next_evict];
			f->next_evict = (f->next_evict + 1) % FOLLOW_MAPS;
		}
	}
	slot->id = m->table_id;
	slot->table = t;
	if (t == FT_JOBS &&
	    rowimage_table_init(&slot->cols, m->types, m->n_cols, m->meta, m->meta_len) < 0)
		slot->cols.is_jobs = false;
}

static const struct follow_map *find_map(const struct follow *f, uint64_t id)
{
	for (int i = 0; i < f->n_maps; i++)
		if (f->maps[i].id == id)
			return &f->maps[i];
	return NULL;
}

static bool ours(const struct follow *f, const struct rowimage_cols *a,
		 const struct rowimage_cols *b)
{
	const struct rowimage_cols *c = a && a->has_queue ? a : b && b->has_queue ? b : NULL;

	/* A queue the image does not name may be any: serve it. */
	return !c || follow_serves(f->cfg, c->queue, c->queue_len);
}

/* One row of kyu_jobs: before is NULL for an insert, after NULL for a
 * delete. */
static unsigned row_hints(const struct follow *f, const struct rowimage_cols *before,
			  const struct rowimage_cols *after)
{
	if (!after && !before)
		return 0;
	if (!after) /* delete */
		return before->has_status && before->status == RI_RUNNING && ours(f, before, NULL)
			       ? FOLLOW_CANCEL
			       : 0;
	if (!before) { /* insert */
		if (after->has_status && after->status != RI_WAITING && after->status != RI_RUNNING)
			return 0; /* blocked, or inserted as ended */
		return ours(f, after, NULL) ? FOLLOW_WAKE : 0;
	}
	if (!after->has_status) {
		/* A minimal image: the status did not change. A new run_at or
		 * queue may make a waiting job due. */
		return (after->has_run_at || after->has_queue) && ours(f, after, before)
			       ? FOLLOW_WAKE
			       : 0;
	}
	if (after->status == RI_CANCELLED)
		return before->has_status && before->status == RI_RUNNING && ours(f, after, before)
			       ? FOLLOW_CANCEL
			       : 0;
	if (after->status != RI_WAITING)
		return 0; /* claims, heartbeats, results */
	if (!before->has_status || before->status != RI_WAITING)
		return ours(f, after, before) ? FOLLOW_WAKE : 0;
	/* Waiting before and after: due earlier, or moved to another queue. */
	if (after->has_run_at && (!before->has_run_at || before->run_at_len != after->run_at_len ||
				  memcmp(before->run_at, after->run_at, after->run_at_len) != 0))
		return ours(f, after, before) ? FOLLOW_WAKE : 0;
	if (after->has_queue && before->has_queue &&
	    (before->queue_len != after->queue_len ||
	     memcmp(before->queue, after->queue, after->queue_len) != 0))
		return ours(f, after, before) ? FOLLOW_WAKE : 0;
	return 0;
}

static unsigned jobs_rows(struct follow *f, const struct follow_map *m, const struct binlog_rows *r)
{
	const uint8_t *p = r->data;
	size_t left = r->len;
	unsigned hints = 0;

	if (r->compressed || !m->cols.is_jobs || r->n_cols != m->cols.n_cols ||
	    (r->type == BINLOG_UPDATE && !r->present_after))
		goto unreadable;
	while (left > 0) {
		struct rowimage_cols a, b;
		long n = rowimage_read(&m->cols, r->present, p, left, &a);
		if (n < 0)
			goto unreadable;
		p += n;
		left -= (size_t)n;
		f->rows++;
		if (r->type == BINLOG_UPDATE) {
			n = rowimage_read(&m->cols, r->present_after, p, left, &b);
			if (n < 0)
				goto unreadable;
			p += n;
			left -= (size_t)n;
			hints |= row_hints(f, &a, &b);
		} else if (r->type == BINLOG_WRITE) {
			hints |= row_hints(f, NULL, &a);
		} else {
			hints |= row_hints(f, &a, NULL);
		}
	}
	return hints;
unreadable:
	f->unreadable++;
	return hints | FOLLOW_WAKE;
}

/* Case-insensitive search in a statement that is not NUL-terminated. */
static bool mentions(const char *text, size_t len, const char *word)
{
	size_t w = strlen(word);

	for (size_t i = 0; i + w <= len; i++)
		if (strncasecmp(text + i, word, w) == 0)
			return true;
	return false;
}

/* The statement's first word, past blanks and comments. */
static bool starts_with(const char *text, size_t len, const char *word)
{
	size_t i = 0, w = strlen(word);

	for (;;) {
		while (i < len &&
		       (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
			i++;
		if (i + 1 < len && text[i] == '/' && text[i + 1] == '*') {
			const char *end = NULL;
			for (size_t k = i + 2; k + 1 < len; k++)
				if (text[k] == '*' && text[k + 1] == '/') {
					end = text + k + 2;
					break;
				}
			if (!end)
				return false;
			i = (size_t)(end - text);
			continue;
		}
		break;
	}
	return i + w <= len && strncasecmp(text + i, word, w) == 0;
}

static void query(struct follow *f, const char *db, size_t db_len, const char *text, size_t len)
{
	/* The session's database, or ours named in the text (other
	 * databases on the server may have tables of the same names). */
	if (!same(db, db_len, f->cfg->db_name)) {
		char q1[160], q2[160];
		snprintf(q1, sizeof(q1), "%s.", f->cfg->db_name);
		snprintf(q2, sizeof(q2), "`%s`.", f->cfg->db_name);
		if (!mentions(text, len, q1) && !mentions(text, len, q2))
			return;
	}
	if (mentions(text, len, "kyu_jobs")) {
		if (starts_with(text, len, "INSERT") || starts_with(text, len, "REPLACE")) {
			f->pending |= FOLLOW_WAKE;
		} else {
			f->slow |= FOLLOW_WAKE;
			if (mentions(text, len, "cancelled") || starts_with(text, len, "DELETE"))
				f->slow |= FOLLOW_CANCEL;
		}
	}
	if (mentions(text, len, "kyu_queues"))
		f->slow |= FOLLOW_WAKE;
	if (mentions(text, len, "kyu_schedules"))
		f->slow |= FOLLOW_SCHEDULES;
}

void follow_event(struct follow *f, const struct binlog_event *ev)
{
	const struct follow_map *m;

	f->events++;
	switch (ev->kind) {
	case BINLOG_TABLE_MAP:
		take_map(f, &ev->u.map);
		return;
	case BINLOG_ROWS:
		m = find_map(f, ev->u.rows.table_id);
		if (!m)
			return;
		if (m->table == FT_JOBS)
			f->pending |= jobs_rows(f, m, &ev->u.rows);
		else if (m->table == FT_QUEUES)
			f->pending |= FOLLOW_WAKE;
		else if (m->table == FT_SCHEDULES)
			f->pending |= FOLLOW_SCHEDULES;
		return;
	case BINLOG_QUERY:
		query(f, ev->u.query.db, ev->u.query.db_len, ev->u.query.text,
		      ev->u.query.text_len);
		return;
	default:
		return;
	}
}

unsigned follow_take(struct follow *f, bool slow_ok)
{
	unsigned h = f->pending;

	f->pending = 0;
	if (slow_ok) {
		h |= f->slow;
		f->slow = 0;
	}
	return h;
}
