/* Failures grouped by cause (cause.h): kyu causes and the dashboard's
 * "Failed by cause" section. See causes.h. */
#include "causes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_quote.h"
#include "util.h"

/* The groups by id while they are merged: open addressing, indexes into
 * c->g plus one (0: empty). */
struct index {
	size_t *slot;
	size_t mask;
};

static struct cause_group *group_of(struct causes *c, struct index *ix, const char *text,
				    size_t len)
{
	uint32_t id = cause_id(text, len);
	size_t h = id & ix->mask;
	struct cause_group *g;

	for (; ix->slot[h]; h = (h + 1) & ix->mask) {
		g = &c->g[ix->slot[h] - 1];
		if (g->id == id && strcmp(g->text, text) == 0)
			return g;
	}
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->g = xrealloc(c->g, c->cap * sizeof(*c->g));
	}
	g = &c->g[c->n++];
	memset(g, 0, sizeof(*g));
	memcpy(g->text, text, len + 1);
	g->id = id;
	ix->slot[h] = c->n;
	return g;
}

static void add_queue(struct cause_group *g, const char *queue)
{
	int i;

	for (i = 0; i < g->n_queues && strcmp(g->queues[i], queue) != 0; i++)
		;
	if (i < g->n_queues)
		return;
	if (g->n_queues < CAUSES_QUEUES) {
		/* In order of name. */
		for (i = g->n_queues; i > 0 && strcmp(g->queues[i - 1], queue) > 0; i--)
			g->queues[i] = g->queues[i - 1];
		g->queues[i] = xstrdup(queue);
		g->n_queues++;
	} else
		/* Counted once per row; a row is a (line, queue) pair, so a
		 * queue past the first few may count twice: "+N more" is a
		 * hint, the names before it are exact. */
		g->more_queues++;
}

static int by_size(const void *a, const void *b)
{
	const struct cause_group *x = a, *y = b;
	long long nx = x->failed + x->retrying, ny = y->failed + y->retrying;
	int d;

	if (nx != ny)
		return nx > ny ? -1 : 1;
	d = strcmp(y->last, x->last);
	return d ? d : strcmp(x->text, y->text);
}

/* The rows of the read: line, queue, kind (1 failed, 2 retrying, 0 a
 * waiting row of the window that is not retrying), count, first, last. */
static const char causes_sql[] =
	"SELECT " CAUSE_LINE_SQL ", queue, kind, COUNT(*), MIN(updated_at), MAX(updated_at) FROM ("
	"(SELECT error, queue, 1 AS kind, updated_at FROM kyu_jobs WHERE status = 'failed'%s"
	" ORDER BY updated_at DESC LIMIT %d) UNION ALL "
	"(SELECT error, queue, IF(attempts > 0, 2, 0), updated_at FROM kyu_jobs WHERE status = 'waiting'%s"
	" ORDER BY updated_at DESC LIMIT %d)) w GROUP BY 1, 2, 3";

int causes_read(struct causes *c, const char *queue, const char *read_prefix, action_run_fn *run,
		void *ctx)
{
	struct strbuf sb = { 0 }, q = { 0 };
	const struct db_result *r;
	struct index ix = { 0 };
	long long seen[3] = { 0 };
	int rc = -1;

	memset(c, 0, sizeof(*c));
	if (queue) {
		sb_adds(&q, " AND queue = ");
		db_quotes(&q, queue);
	}
	sb_adds(&sb, read_prefix ? read_prefix : "");
	sb_printf(&sb, causes_sql, q.buf ? q.buf : "", CAUSES_SCAN, q.buf ? q.buf : "",
		  CAUSES_SCAN);
	if (run(ctx, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	for (ix.mask = 63; ix.mask < r->n_rows * 2; ix.mask = ix.mask * 2 + 1)
		;
	ix.slot = xcalloc(ix.mask + 1, sizeof(*ix.slot));
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *line = db_cell(r, i, 0), *queue_i = db_cell(r, i, 1);
		const char *first = db_cell(r, i, 4), *last = db_cell(r, i, 5);
		long kind = db_cell(r, i, 2) ? strtol(db_cell(r, i, 2), NULL, 10) : 0;
		long long n = db_cell(r, i, 3) ? strtoll(db_cell(r, i, 3), NULL, 10) : 0;
		char text[CAUSE_MAX];
		struct cause_group *g;
		size_t len;

		seen[kind == 1 ? 1 : 2] += n;
		if (kind == 0)
			continue;
		len = cause_fold(line ? line : "", line ? strlen(line) : 0, text, sizeof(text));
		g = group_of(c, &ix, text, len);
		*(kind == 1 ? &g->failed : &g->retrying) += n;
		if (first && (!g->first[0] || strcmp(first, g->first) < 0))
			snprintf(g->first, sizeof(g->first), "%s", first);
		if (last && strcmp(last, g->last) > 0)
			snprintf(g->last, sizeof(g->last), "%s", last);
		if (queue_i)
			add_queue(g, queue_i);
	}
	if (c->n)
		qsort(c->g, c->n, sizeof(*c->g), by_size);
	c->window_full = seen[1] >= CAUSES_SCAN || seen[2] >= CAUSES_SCAN;
	rc = 0;
cleanup:
	free(ix.slot);
	sb_free(&sb);
	sb_free(&q);
	return rc;
}

void causes_free(struct causes *c)
{
	for (size_t i = 0; i < c->n; i++)
		for (int k = 0; k < c->g[i].n_queues; k++)
			free(c->g[i].queues[k]);
	free(c->g);
	memset(c, 0, sizeof(*c));
}

const struct cause_group *causes_find(const struct causes *c, uint32_t id)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->g[i].id == id)
			return &c->g[i];
	return NULL;
}

int causes_resolve(const char *key, const char *queue, const char *read_prefix, action_run_fn *run,
		   void *ctx, char *text)
{
	const struct cause_group *g;
	struct causes c;
	uint32_t id;

	if (cause_id_parse(key, &id) < 0) {
		cause_fold(key, strlen(key), text, CAUSE_MAX);
		return 0;
	}
	if (causes_read(&c, queue, read_prefix, run, ctx) < 0)
		return -1;
	g = causes_find(&c, id);
	if (g)
		memcpy(text, g->text, CAUSE_MAX);
	causes_free(&c);
	return g ? 0 : 1;
}

int causes_jobs(const char *text, const char *queue, size_t max, const char *read_prefix,
		action_run_fn *run, void *ctx, struct cause_job **ret, size_t *n)
{
	char pat[CAUSE_MAX * 2 + 8], folded[CAUSE_MAX];
	struct strbuf sb = { 0 };
	const struct db_result *r;
	struct cause_job *jobs = NULL;
	int rc = -1;

	*ret = NULL;
	*n = 0;
	if (cause_like(text, pat, sizeof(pat)) < 0)
		return 0;
	sb_adds(&sb, read_prefix ? read_prefix : "");
	sb_adds(&sb,
		"SELECT id, queue, status = 'waiting', updated_at, " CAUSE_LINE_SQL
		" FROM kyu_jobs WHERE (status = 'failed' OR (status = 'waiting' AND attempts > 0))");
	if (queue) {
		sb_adds(&sb, " AND queue = ");
		db_quotes(&sb, queue);
	}
	sb_adds(&sb, " AND IFNULL(error, '') LIKE ");
	db_quotes(&sb, pat);
	sb_printf(&sb, " ORDER BY updated_at DESC LIMIT %d", CAUSES_SCAN);
	if (run(ctx, sb.buf, sb.len, &r) < 0)
		goto cleanup;
	jobs = xcalloc(max ? max : 1, sizeof(*jobs));
	for (size_t i = 0; i < r->n_rows && *n < max; i++) {
		const char *line = db_cell(r, i, 4);
		cause_fold(line ? line : "", line ? strlen(line) : 0, folded, sizeof(folded));
		if (strcmp(folded, text) != 0 || !db_cell(r, i, 0))
			continue;
		jobs[*n].id = xstrdup(db_cell(r, i, 0));
		jobs[*n].queue = xstrdup(db_cell(r, i, 1) ? db_cell(r, i, 1) : "");
		jobs[*n].retrying = db_cell(r, i, 2) && strcmp(db_cell(r, i, 2), "1") == 0;
		jobs[*n].updated = xstrdup(db_cell(r, i, 3) ? db_cell(r, i, 3) : "");
		jobs[*n].line = xstrdup(line ? line : "");
		(*n)++;
	}
	*ret = jobs;
	jobs = NULL;
	rc = 0;
cleanup:
	free(jobs);
	sb_free(&sb);
	return rc;
}

void causes_jobs_free(struct cause_job *jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++) {
		free(jobs[i].id);
		free(jobs[i].queue);
		free(jobs[i].updated);
		free(jobs[i].line);
	}
	free(jobs);
}
