/* The daemon's row of kyu_daemons (common/registry.h), kept by worker 1. See
 * daemonrow.h. */
#include "daemonrow.h"

#include <limits.h>
#include <stdio.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"

void daemonrow_init(struct daemonrow *d, const struct kyu_config *cfg, int worker,
		    const char *daemon_id, const char *host, struct conn *conn,
		    const struct parent *parent, const struct jobs *jobs, const struct board *board)
{
	d->cfg = cfg;
	d->host = host;
	d->conn = conn;
	d->parent = parent;
	d->jobs = jobs;
	d->board = board;
	if (worker == 1 && daemon_id) {
		snprintf(d->id, sizeof(d->id), "%s", daemon_id);
		d->on = true;
	}
}

void daemonrow_refresh(struct daemonrow *d)
{
	d->next = 0;
	/* An upgrade may have come meanwhile. */
	d->old = false;
}

void daemonrow_hint(struct daemonrow *d, double now)
{
	double soon = d->sent_at + DAEMONROW_HINT_GAP;

	if (soon < now)
		soon = now;
	if (d->next > soon)
		d->next = soon;
}

void daemonrow_drain(struct daemonrow *d)
{
	if (!d->jobs->draining)
		d->remove = d->on;
}

/* Whether the row is still refreshed: always until a drain, and during a
 * drain that lets this worker's jobs finish, until they have. */
static bool keeps_row(const struct daemonrow *d)
{
	return !d->jobs->draining || (d->jobs->finishing && d->jobs->n_running > 0);
}

bool daemonrow_due(void *daemonrow, struct stmt_turn *t)
{
	const struct daemonrow *d = daemonrow;

	if (!d->on)
		return false;
	if (!keeps_row(d))
		return d->remove;
	return t->now >= d->next;
}

double daemonrow_when(void *daemonrow, double now)
{
	const struct daemonrow *d = daemonrow;

	if (!d->on || !keeps_row(d))
		return 0;
	return d->next > 0 ? d->next : now;
}

/* The jobs the daemon runs: every worker's, as they last wrote them on
 * the scoreboard (a worker started by hand has none: its own). */
static unsigned running(const struct daemonrow *d)
{
	uint64_t n = d->board ? board_running(d->board) : (uint64_t)d->jobs->n_running;

	return n > UINT_MAX ? UINT_MAX : (unsigned)n;
}

bool daemonrow_send(void *daemonrow, struct stmt_turn *t, struct strbuf *sb)
{
	struct daemonrow *d = daemonrow;

	d->sent_at = t->now;
	d->sending_remove = !keeps_row(d);
	if (d->sending_remove)
		registry_remove_build(sb, d->id);
	else
		registry_refresh_build(sb, d->cfg, d->id, d->host, d->parent->pid, running(d),
				       d->old);
	return true;
}

void daemonrow_unsent(void *daemonrow)
{
	struct daemonrow *d = daemonrow;

	d->remove = false;
	d->next = mono_now() + registry_interval(d->cfg);
}

void daemonrow_reply(void *daemonrow, const struct db_reply *r)
{
	struct daemonrow *d = daemonrow;
	double now = mono_now();
	char msg[256];
	enum registry_result res;

	if (r->fail == DB_LOST) {
		/* The next connection refreshes at once (daemonrow_refresh); a
		 * stopping daemon's row is left to expire. */
		conn_failed(d->conn, r, "the daemon registry");
		d->remove = false;
		return;
	}
	res = registry_read(r, msg, sizeof(msg));
	if (d->sending_remove) {
		d->remove = false;
		if (res == REG_DONE)
			log_debug("removed this daemon's row of kyu_daemons");
		else if (res != REG_MISSING)
			log_warn(
				"cannot remove this daemon's row of kyu_daemons (%s): it is skipped "
				"once its live_until has passed, and deleted by another daemon",
				msg);
		return;
	}
	switch (res) {
	case REG_DRAIN:
		/* Told once: later refreshes of a draining daemon read it too. */
		if (!d->drain_told && !d->jobs->draining) {
			log_notice(
				"kyu_daemons.drain is set (%s): draining: no new claims; the running "
				"jobs finish, then kyud exits 0",
				msg);
			parent_send(d->parent, KYU_DRAIN, 0);
		}
		d->drain_told = true;
		/* fall through */
	case REG_DONE:
		if (!d->old)
			spell_end(&d->old_said);
		if (spell_end(&d->failing))
			log_notice("the daemon registry is written again");
		else
			log_debug("registered in kyu_daemons as %s", d->id);
		d->next = now + registry_interval(d->cfg);
		break;
	case REG_OLD:
		/* Schema version 8 or older: the row without what step 9
		 * adds, at once. */
		if (spell_begin(&d->old_said))
			log_notice(
				"kyu_daemons has no slots, running or drain (%s): this daemon's row goes "
				"without them, and kyu drain cannot reach it; run `kyu schema upgrade` "
				"(kyu(1))",
				msg);
		d->old = true;
		d->next = now;
		break;
	case REG_LOCKED:
		/* A submitter's open transaction holds the row: never wait. */
		log_debug("kyu_daemons: row locked (%s); trying again in %.0f s", msg,
			  REGISTRY_RETRY);
		d->next = now + REGISTRY_RETRY;
		break;
	case REG_MISSING:
		if (spell_begin(&d->failing))
			log_notice(
				"no kyu_daemons table (%s): this daemon is not registered, and wake-ups "
				"reach it only at its listen address; run `kyu schema upgrade` (kyu(1))",
				msg);
		d->next = now + registry_interval(d->cfg);
		break;
	case REG_FAILED:
		if (spell_begin(&d->failing))
			log_warn(
				"writing this daemon's row of kyu_daemons failed: %s; wake-ups from "
				"other hosts may miss it until it is written (kyud(8), grants)",
				msg);
		d->next = now + registry_interval(d->cfg);
		break;
	}
}
