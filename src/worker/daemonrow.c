#include "daemonrow.h"

#include <stdio.h>

#include "common/log.h"
#include "common/util.h"

void daemonrow_init(struct daemonrow *d, const struct kyu_config *cfg, int worker,
		    const char *daemon_id, const char *host, struct conn *conn,
		    const struct parent *parent, const struct jobs *jobs)
{
	d->cfg = cfg;
	d->host = host;
	d->conn = conn;
	d->parent = parent;
	d->jobs = jobs;
	if (worker == 1 && daemon_id) {
		snprintf(d->id, sizeof(d->id), "%s", daemon_id);
		d->on = true;
	}
}

void daemonrow_refresh(struct daemonrow *d)
{
	d->next = 0;
}

void daemonrow_drain(struct daemonrow *d)
{
	if (!d->jobs->draining)
		d->remove = d->on;
}

bool daemonrow_due(void *daemonrow, struct stmt_turn *t)
{
	const struct daemonrow *d = daemonrow;

	if (!d->on)
		return false;
	if (d->jobs->draining)
		return d->remove;
	return t->now >= d->next;
}

double daemonrow_when(void *daemonrow, double now)
{
	const struct daemonrow *d = daemonrow;

	if (!d->on || d->jobs->draining)
		return 0;
	return d->next > 0 ? d->next : now;
}

bool daemonrow_send(void *daemonrow, struct stmt_turn *t, struct strbuf *sb)
{
	struct daemonrow *d = daemonrow;

	(void)t;
	d->sending_remove = d->jobs->draining;
	if (d->jobs->draining)
		registry_remove_build(sb, d->id);
	else
		registry_refresh_build(sb, d->cfg, d->id, d->host, d->parent->pid);
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
			log_warn("cannot remove this daemon's row of kyu_daemons (%s): it is skipped "
				 "once its live_until has passed, and deleted by another daemon",
				 msg);
		return;
	}
	switch (res) {
	case REG_DONE:
		if (spell_end(&d->failing))
			log_notice("the daemon registry is written again");
		else
			log_debug("registered in kyu_daemons as %s", d->id);
		d->next = now + registry_interval(d->cfg);
		break;
	case REG_LOCKED:
		/* A submitter's open transaction holds the row: never wait. */
		log_debug("kyu_daemons: row locked (%s); trying again in %.0f s", msg, REGISTRY_RETRY);
		d->next = now + REGISTRY_RETRY;
		break;
	case REG_MISSING:
		if (spell_begin(&d->failing))
			log_notice("no kyu_daemons table (%s): this daemon is not registered, and wake-ups "
				   "reach it only at its listen address; run `kyu schema upgrade` (kyu(1))",
				   msg);
		d->next = now + registry_interval(d->cfg);
		break;
	case REG_FAILED:
		if (spell_begin(&d->failing))
			log_warn("writing this daemon's row of kyu_daemons failed: %s; wake-ups from "
				 "other hosts may miss it until it is written (kyud(8), grants)",
				 msg);
		d->next = now + registry_interval(d->cfg);
		break;
	}
}
