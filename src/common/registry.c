/* The daemon registry: each running kyud's row of kyu_daemons (kyu_jobs(7)),
 * which tells the wake-up triggers of sql/notify.sql. See registry.h. */
#include "registry.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

double registry_interval(const struct kyu_config *cfg)
{
	double i = cfg->lease * 2.0;
	/* A stale row only costs a datagram sent to nobody, for at most a few
	 * intervals, and a dead daemon's jobs wait a lease anyway: an idle
	 * daemon need not write more often than this, however short its
	 * lease (the refresh is most of what an idle daemon costs). */
	if (i < REGISTRY_MIN_INTERVAL)
		return REGISTRY_MIN_INTERVAL;
	return i > REGISTRY_MAX_INTERVAL ? REGISTRY_MAX_INTERVAL : i;
}

void registry_make_id(char *buf, size_t len, const char *host, pid_t pid)
{
	char h[65];
	size_t n = 0;

	/* Only what registry_id_valid accepts: a host name is that already,
	 * anything else becomes '_'. */
	for (const char *p = host; *p && n < sizeof(h) - 1; p++, n++) {
		char c = *p;
		if (c <= ' ' || c >= 0x7f || c == '\'' || c == '"' || c == '\\' || c == ':')
			c = '_';
		h[n] = c;
	}
	h[n] = '\0';
	snprintf(buf, len, "%s:%d:%016" PRIx64, n ? h : "unknown", (int)pid, random_token());
}

bool registry_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n >= REGISTRY_ID_MAX)
		return false;
	for (const char *p = id; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == '\'' || *p == '"' || *p == '\\')
			return false;
	return true;
}

/* Runs body (statements ending in ';') with lock waits of at most
 * lock_wait seconds, so that any error is caught inside the compound
 * statement: lock waits (1205) and deadlocks (1213) end it at once instead
 * of being retried by db.c, which would count them as deadlocks and hold
 * the connection. Done, it returns no result set (the server counts two
 * statements: the compound one and the write); failed, one row of the
 * error number and message. */
static void wrap(struct strbuf *sb, int lock_wait, const char *body)
{
	sb_printf(
		sb,
		"SET STATEMENT innodb_lock_wait_timeout = %d FOR BEGIN NOT ATOMIC "
		"DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN "
		"GET DIAGNOSTICS CONDITION 1 @kyu_reg_errno = MYSQL_ERRNO, @kyu_reg_msg = MESSAGE_TEXT; "
		"SELECT @kyu_reg_errno, @kyu_reg_msg; "
		"END; "
		"%s"
		"END",
		lock_wait, body);
}

void registry_refresh_build(struct strbuf *sb, const struct kyu_config *cfg, const char *id,
			    const char *host, pid_t pid, unsigned running, bool old)
{
	struct strbuf body = { 0 }, queues = { 0 };
	const char *addr = config_wake_addr(cfg);
	int live = (int)(registry_interval(cfg) * REGISTRY_LIVE_INTERVALS + 0.5);

	for (int i = 0; i < cfg->n_queues; i++)
		sb_printf(&queues, "%s%s", i ? "," : "", cfg->queues[i]);
	sb_printf(&body,
		  "INSERT INTO kyu_daemons (id, host, pid, wake_addr, queues, version, %s"
		  "started, last_seen, live_until) VALUES (",
		  old ? "" : "slots, running, ");
	db_quotes(&body, id);
	sb_adds(&body, ", ");
	db_quotes(&body, host);
	sb_printf(&body, ", %d, ", (int)pid);
	db_quotes(&body, addr);
	sb_adds(&body, ", ");
	db_quote(&body, queues.len ? queues.buf : "", queues.len);
	sb_adds(&body, ", ");
	db_quotes(&body, KYU_VERSION);
	if (!old)
		sb_printf(&body, ", %lld, %u", (long long)cfg->workers * cfg->slots, running);
	sb_printf(
		&body,
		", NOW(6), NOW(6), NOW(6) + INTERVAL %d SECOND) "
		"ON DUPLICATE KEY UPDATE host = VALUES(host), pid = VALUES(pid), "
		"wake_addr = VALUES(wake_addr), queues = VALUES(queues), version = VALUES(version), %s"
		"last_seen = VALUES(last_seen), live_until = VALUES(live_until); ",
		live, old ? "" : "slots = VALUES(slots), running = VALUES(running), ");
	/* An operator's drain (kyu drain): a result set only when it is set,
	 * tested in a condition that the server counts as no statement. */
	if (!old) {
		sb_adds(&body, "IF (SELECT drain FROM kyu_daemons WHERE id = ");
		db_quotes(&body, id);
		sb_adds(&body,
			") IS NOT NULL THEN SELECT 'kyu_drain', drain, drain_by FROM kyu_daemons WHERE id = ");
		db_quotes(&body, id);
		sb_adds(&body, "; END IF; ");
	}
	sb_adds(&body,
		/* A daemon that died without deleting its row: gone for the
		   * wake-ups already, deleted here by whoever comes next. The
		   * condition, which the server does not count as a statement,
		   * saves the DELETE's statement while no such row exists (it
		   * reads with shared locks, so a lock wait fails it at once:
		   * no DELETE then). Failing is not worth reporting: the next
		   * refresh tries again. */
		"BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION BEGIN END; "
		"IF (SELECT MIN(live_until) FROM kyu_daemons) < NOW(6) THEN "
		"DELETE FROM kyu_daemons WHERE live_until < NOW(6); "
		"END IF; "
		"END; ");
	/* Never waits for a lock (registry.h). */
	wrap(sb, 0, body.buf);
	sb_free(&body);
	sb_free(&queues);
}

void registry_drain_build(struct strbuf *sb, const char *daemon)
{
	struct strbuf where = { 0 };

	/* Live rows only: a daemon past its live_until is gone or wedged,
	 * and reads nothing. drain_by first: the SET reads drain as it was. */
	sb_adds(&where, " WHERE (id = ");
	db_quotes(&where, daemon);
	sb_adds(&where, " OR CONCAT(host, ':', pid) = ");
	db_quotes(&where, daemon);
	sb_adds(&where, ") AND " REGISTRY_LIVE("kyu_daemons"));
	sb_printf(sb,
		  "UPDATE kyu_daemons SET drain_by = IF(drain IS NULL, USER(), drain_by), "
		  "drain = IFNULL(drain, NOW(6))%s; "
		  "SELECT host, pid, id, drain, IFNULL(drain_by, '?') FROM kyu_daemons%s "
		  "ORDER BY host, pid",
		  where.buf, where.buf);
	sb_free(&where);
}

void registry_remove_build(struct strbuf *sb, const char *id)
{
	struct strbuf body = { 0 };

	/* A stopping daemon may wait a little for a submitter's commit: it
	 * has no leases left to renew on this connection's behalf once its
	 * jobs are done, and a row left behind is only skipped until it is
	 * deleted by another daemon. */
	sb_adds(&body, "DELETE FROM kyu_daemons WHERE id = ");
	db_quotes(&body, id);
	sb_adds(&body, "; ");
	wrap(sb, 2, body.buf);
	sb_free(&body);
}

enum registry_result registry_read(const struct db_reply *r, char *msg, size_t len)
{
	const struct db_result *res = NULL;
	const char *e, *m;
	long n;

	msg[0] = '\0';
	if (r->fail != DB_OK || r->n < 1) {
		snprintf(msg, len, "%s", r->err ? r->err : "no reply");
		return REG_FAILED;
	}
	/* Only a failure returns rows: the handler's one row. */
	for (int i = 0; i < r->n && !res; i++)
		if (r->r[i].n_cols > 0)
			res = &r->r[i];
	if (!res)
		return REG_DONE;
	if (res->n_cols == 3 && res->n_rows == 1 && (e = db_cell(res, 0, 0)) &&
	    strcmp(e, "kyu_drain") == 0) {
		m = db_cell(res, 0, 2);
		snprintf(msg, len, "%s%s%s", db_cell(res, 0, 1) ? db_cell(res, 0, 1) : "?",
			 m ? " by " : "", m ? m : "");
		return REG_DRAIN;
	}
	if (res->n_rows != 1 || res->n_cols < 2 || !(e = db_cell(res, 0, 0))) {
		snprintf(msg, len, "unexpected reply");
		return REG_FAILED;
	}
	n = strtol(e, NULL, 10);
	m = db_cell(res, 0, 1);
	snprintf(msg, len, "%s", m ? m : "");
	switch (n) {
	case 0:
		/* A handler that ran always has an error; a server that says
		 * 0 has not told us what happened. */
		snprintf(msg, len, "error 0%s%s", m ? ": " : "", m ? m : "");
		return REG_FAILED;
	case ER_LOCK_WAIT_TIMEOUT:
	case ER_LOCK_DEADLOCK:
		return REG_LOCKED;
	case ER_NO_SUCH_TABLE:
		return REG_MISSING;
	case ER_BAD_FIELD_ERROR:
		return REG_OLD;
	default:
		if (!m)
			snprintf(msg, len, "error %ld", n);
		return REG_FAILED;
	}
}
