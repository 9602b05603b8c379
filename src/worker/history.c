/* kyu_attempts: one row per attempt that ended (kyu_jobs(7), "Attempts";
 * [kyud] history and attempt_output). See history.h. */
#include "history.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/db.h"

/* Whether f gets a row: every attempt but kyud's own give-backs; under
 * [kyud] history = failures, not a first attempt that succeeded either
 * (its job's row holds all the row would: the default keeps plain jobs'
 * statements and rows as they were without history). */
static bool is_attempt(const struct finish *f, bool all)
{
	return f->outcome != OUT_RELEASE && (all || f->outcome != OUT_SUCCEEDED || !f->first);
}

/* Which rows a list names: all of them, the unsure ones, the timed out. */
enum pick { PICK_ALL, PICK_UNSURE, PICK_TIMEOUT };
/* How: "1,2,3", or the owner CASE's branches. */
enum list_form { SEQ_LIST, OWNER_CASE };

static bool picked(enum pick pick, bool unsure, bool timeout)
{
	return pick == PICK_ALL || (pick == PICK_UNSURE && unsure) ||
	       (pick == PICK_TIMEOUT && timeout);
}

static void add_one(struct strbuf *sb, enum list_form form, int *k, uint64_t seq, uint64_t token)
{
	if (form == SEQ_LIST)
		sb_printf(sb, "%s%" PRIu64, (*k)++ ? "," : "", seq);
	else
		sb_printf(sb, " WHEN %" PRIu64 " THEN %" PRIu64, seq, token);
}

static void add_rows(struct strbuf *sb, const struct history_pending *p, const struct finish *f,
		     int n, bool all, enum list_form form, enum pick pick)
{
	int k = 0;

	for (int i = 0; i < p->n; i++)
		if (picked(pick, p->rows[i].unsure, p->rows[i].timeout))
			add_one(sb, form, &k, p->rows[i].seq, p->rows[i].token);
	for (int i = 0; i < n; i++)
		if (is_attempt(&f[i], all) && picked(pick, f[i].unsure, f[i].timeout))
			add_one(sb, form, &k, f[i].seq, f[i].token);
}

bool history_build(struct strbuf *sb, const struct history_writer *wr,
		   const struct history_pending *p, const struct finish *f, int n)
{
	bool any = p->n > 0, unsure = false, timeout = false;

	for (int i = 0; i < p->n; i++) {
		unsure |= p->rows[i].unsure;
		timeout |= p->rows[i].timeout;
	}
	for (int i = 0; i < n; i++) {
		if (!is_attempt(&f[i], wr->all))
			continue;
		any = true;
		unsure |= f[i].unsure;
		timeout |= f[i].timeout;
	}
	if (!any)
		return false;
	sb_adds(sb,
		"; INSERT INTO kyu_attempts (job_seq, job_id, attempt, queue, daemon, host, pid, "
		"started_at, finished_at, outcome, exit_code, `signal`, error, cpu_user, cpu_sys, "
		"max_rss, output_tail) SELECT seq, id, attempts, queue, ");
	if (wr->daemon)
		db_quotes(sb, wr->daemon);
	else
		sb_adds(sb, "NULL");
	/* The status the result left says how it ended, but for a time
	 * limit; a row the user cancelled says so whatever the attempt did. */
	sb_adds(sb, ", host, pid, started_at, COALESCE(finished_at, NOW(6)), CASE "
		    "WHEN status = 'cancelled' THEN 'cancelled' ");
	if (timeout) {
		sb_adds(sb, "WHEN seq IN (");
		add_rows(sb, p, f, n, wr->all, SEQ_LIST, PICK_TIMEOUT);
		sb_adds(sb, ") THEN 'timeout' ");
	}
	sb_adds(sb,
		"WHEN status = 'succeeded' THEN 'succeeded' WHEN status = 'waiting' THEN 'retried' "
		"ELSE 'failed' END, exit_code, `signal`, error, cpu_user, cpu_sys, max_rss, ");
	/* output is a BLOB: RIGHT counts bytes. */
	if (wr->output > 0)
		sb_printf(sb, "RIGHT(output, %d)", wr->output);
	else
		sb_adds(sb, "NULL");
	sb_adds(sb, " FROM kyu_jobs WHERE seq IN (");
	add_rows(sb, p, f, n, wr->all, SEQ_LIST, PICK_ALL);
	sb_adds(sb, ") AND owner = CASE seq");
	add_rows(sb, p, f, n, wr->all, OWNER_CASE, PICK_ALL);
	/* A result rejected because its row passed to another claim is no
	 * attempt of this daemon's: the row's owner is another. */
	sb_adds(sb, " END AND status IN ('succeeded', 'failed', 'waiting', 'cancelled')");
	if (unsure) {
		/* Sent before, in a round trip whose reply was lost: if that
		 * one recorded the result, it wrote the row too (or died
		 * between the two); only a row this session changed is
		 * copied here. */
		sb_adds(sb, " AND (seq NOT IN (");
		add_rows(sb, p, f, n, wr->all, SEQ_LIST, PICK_UNSURE);
		sb_adds(sb, ") OR updated_at >= " DB_SESSION_START ")");
	}
	return true;
}

size_t history_room(const struct history_pending *p, int n)
{
	/* The fixed text and the daemon's id, then per row its seq four
	 * times (list, CASE, unsure and timeout lists) and its token: 20
	 * digits each. */
	return 1536 + (size_t)(p->n + n) * 160;
}

void history_keep(struct history_pending *p, bool all, const struct finish *f, int n)
{
	for (int i = 0; i < n; i++) {
		if (!is_attempt(&f[i], all))
			continue;
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			p->rows = xrealloc(p->rows, (size_t)p->cap * sizeof(*p->rows));
		}
		p->rows[p->n++] =
			(struct history_row){ f[i].seq, f[i].token, f[i].unsure, f[i].timeout };
	}
}

void history_clear(struct history_pending *p)
{
	p->n = 0;
}

void history_free(struct history_pending *p)
{
	free(p->rows);
	memset(p, 0, sizeof(*p));
}
