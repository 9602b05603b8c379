/* Settling: the worker's calls of kyu_settle, the procedure that moves the
 * jobs waiting for others on. See settle.h. */
#include "settle.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"

/* After a failed call: the error is the schema's or the grants' (a
 * deadlock is retried inside the procedure), so the next try waits. */
#define SETTLE_RETRY 5.0

void settle_init(struct settle *s, struct conn *conn, void (*settled)(void *ctx), void *settled_ctx)
{
	s->conn = conn;
	s->settled = settled;
	s->settled_ctx = settled_ctx;
}

void settle_want(struct settle *s)
{
	s->wanted = true;
}

void settle_wake(struct settle *s)
{
	s->woken = true;
}

/* When a wake-up's call may go. */
static double wake_at(const struct settle *s)
{
	return s->wake_after > s->after ? s->wake_after : s->after;
}

void settle_probed(struct settle *s, const struct db_result *r)
{
	const char *v;

	if (r->err_no || r->n_rows != 1 || r->n_cols != 1)
		return;
	v = db_cell(r, 0, 0);
	if (v && strcmp(v, "0") != 0)
		settle_want(s);
}

bool settle_due(void *settle, struct stmt_turn *t)
{
	const struct settle *s = settle;

	return (s->wanted && t->now >= s->after) || (s->woken && t->now >= wake_at(s));
}

double settle_when(void *settle, double now)
{
	const struct settle *s = settle;

	(void)now;
	if (s->wanted)
		return s->after;
	return s->woken ? wake_at(s) : 0;
}

bool settle_send(void *settle, struct stmt_turn *t, struct strbuf *sb)
{
	struct settle *s = settle;

	if (s->woken)
		s->wake_after = t->now + SETTLE_WAKE_GAP;
	s->wanted = false;
	s->woken = false;
	sb_printf(sb, "CALL kyu_settle(%d)", SETTLE_ITEMS);
	return true;
}

void settle_reply(void *settle, const struct db_reply *r)
{
	struct settle *s = settle;

	switch (r->fail) {
	case DB_OK:
		s->calls++;
		if (spell_end(&s->failing))
			log_notice("settling workflows works again");
		/* What it freed may be due now, and this worker may run it:
		 * the next step of a chain starts without a wake-up. */
		s->settled(s->settled_ctx);
		break;
	case DB_LOST:
	case DB_BUSY:
		s->wanted = true;
		conn_failed(s->conn, r, "settling workflows");
		break;
	case DB_RETRY:
	case DB_ERROR:
		s->wanted = true;
		s->after = mono_now() + SETTLE_RETRY;
		if (spell_begin(&s->failing))
			log_err("settling workflows (CALL kyu_settle) failed: %s; jobs that wait for "
				"others stay blocked until it works (tried again every %.0f s)",
				r->err, SETTLE_RETRY);
		break;
	}
}
