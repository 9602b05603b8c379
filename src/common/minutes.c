/* kyu_minutes: the jobs that ended, counted per minute, queue and worker
 * (kyu_jobs(7), "kyu_minutes"). See minutes.h. */
#include "minutes.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static bool counts(const struct finish *f)
{
	return f->outcome != OUT_RELEASE;
}

/* The rows to count, as a seq list ("1,2,3") or as the owner CASE's
 * branches; only the unsure ones when asked. */
enum list_form { SEQ_LIST, OWNER_CASE };

static void add_one(struct strbuf *sb, enum list_form form, int *k, uint64_t seq, uint64_t token)
{
	if (form == SEQ_LIST)
		sb_printf(sb, "%s%" PRIu64, (*k)++ ? "," : "", seq);
	else
		sb_printf(sb, " WHEN %" PRIu64 " THEN %" PRIu64, seq, token);
}

static void add_rows(struct strbuf *sb, const struct minutes_pending *p, const struct finish *f,
		     int n, enum list_form form, bool only_unsure)
{
	int k = 0;

	for (int i = 0; i < p->n; i++)
		if (!only_unsure || p->rows[i].unsure)
			add_one(sb, form, &k, p->rows[i].seq, p->rows[i].token);
	for (int i = 0; i < n; i++)
		if (counts(&f[i]) && (!only_unsure || f[i].unsure))
			add_one(sb, form, &k, f[i].seq, f[i].token);
}

bool minutes_count_build(struct strbuf *sb, const struct minutes_writer *wr,
			 const struct minutes_pending *p, const struct finish *f, int n)
{
	bool any = p->n > 0, unsure = false;

	for (int i = 0; i < p->n; i++)
		unsure |= p->rows[i].unsure;
	for (int i = 0; i < n; i++) {
		any |= counts(&f[i]);
		unsure |= counts(&f[i]) && f[i].unsure;
	}
	if (!any)
		return false;
	sb_adds(sb,
		"; INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) "
		"SELECT " MINUTES_NOW ", queue, ");
	db_quotes(sb, wr->daemon);
	/* The status the result left: a row whose result was rejected
	 * belongs to another claim, one the user cancelled stays
	 * 'cancelled'; neither is counted. */
	sb_printf(
		sb,
		", %d, SUM(status = 'succeeded'), SUM(status = 'failed'), SUM(status = 'waiting') "
		"FROM kyu_jobs WHERE seq IN (",
		wr->worker);
	add_rows(sb, p, f, n, SEQ_LIST, false);
	sb_adds(sb, ") AND owner = CASE seq");
	add_rows(sb, p, f, n, OWNER_CASE, false);
	sb_adds(sb, " END AND status IN ('succeeded', 'failed', 'waiting')");
	if (unsure) {
		/* Sent before, in a round trip whose reply was lost: if that
		 * one recorded the result, it counted it too (or died between
		 * the two); only a row this session changed is counted here. */
		sb_adds(sb, " AND (seq NOT IN (");
		add_rows(sb, p, f, n, SEQ_LIST, true);
		sb_adds(sb, ") OR updated_at >= " DB_SESSION_START ")");
	}
	sb_adds(sb,
		" GROUP BY queue ON DUPLICATE KEY UPDATE succeeded = succeeded + VALUES(succeeded), "
		"failed = failed + VALUES(failed), retried = retried + VALUES(retried)");
	return true;
}

size_t minutes_count_room(const struct minutes_pending *p, int n)
{
	/* The fixed text and the writer, then per row its seq three times
	 * (list, CASE, unsure list) and its token: 20 digits each. */
	return 1024 + (size_t)(p->n + n) * 128;
}

enum minutes_outcome minutes_split(const struct db_reply *r, int n_body, struct db_reply *body)
{
	*body = *r;
	if (r->fail == DB_OK && r->n == n_body + 1) {
		body->n = n_body;
		return MINUTES_DONE;
	}
	/* The failed statement is the last result: the count's own failure
	 * leaves every statement before it done. */
	if (r->fail != DB_LOST && r->n == n_body + 1) {
		body->n = n_body;
		body->fail = DB_OK;
		body->err = NULL;
		return MINUTES_FAILED;
	}
	return MINUTES_NOT_RUN;
}

void minutes_keep(struct minutes_pending *p, const struct finish *f, int n)
{
	for (int i = 0; i < n; i++) {
		if (!counts(&f[i]))
			continue;
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			p->rows = xrealloc(p->rows, (size_t)p->cap * sizeof(*p->rows));
		}
		p->rows[p->n++] = (struct minutes_row){ f[i].seq, f[i].token, f[i].unsure };
	}
}

void minutes_clear(struct minutes_pending *p)
{
	p->n = 0;
}

void minutes_free(struct minutes_pending *p)
{
	free(p->rows);
	memset(p, 0, sizeof(*p));
}

void minutes_cleanup_build(struct strbuf *sb, int batch)
{
	/* Oldest first along the primary key: a bounded delete of rows no
	 * page reads, each one of them a minute of one worker's queue. */
	sb_printf(sb,
		  "; DELETE FROM kyu_minutes WHERE @kyu_cleanup = 1 AND minute < " MINUTES_NOW
		  " - INTERVAL %d DAY LIMIT %d",
		  MINUTES_KEEP_DAYS, batch);
}
