/* kyu daemons, wake, locks: the cluster beyond the job rows, the daemons
 * that kyu_daemons registers, waking them. See cmd_cluster.h. */
#include "cmd_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lock.h"
#include "common/registry.h"
#include "common/util.h"
#include "cli.h"
#include "table.h"

/* A row's refresh interval: live_until is REGISTRY_LIVE_INTERVALS of them
 * after last_seen (registry.h), whatever the daemon's lease. */
#define ROW_INTERVAL(d)                                                                            \
	"ROUND(TIMESTAMPDIFF(MICROSECOND, " d ".last_seen, " d                                     \
	".live_until) / 1e6 / " STR(REGISTRY_LIVE_INTERVALS) ")"
#define STR_(x) #x
#define STR(x) STR_(x)

/* "12 s", "5 min", "3 h", "2 days": how long ago, as a person reads it. */
static void ago(char *buf, size_t len, long long s)
{
	if (s < 0)
		s = 0;
	if (s < 120)
		snprintf(buf, len, "%lld s", s);
	else if (s < 7200)
		snprintf(buf, len, "%lld min", s / 60);
	else if (s < 172800)
		snprintf(buf, len, "%lld h", s / 3600);
	else
		snprintf(buf, len, "%lld days", s / 86400);
}

/* No live daemon: say so, with the last one seen. A stopped daemon
 * deletes its row, so with none left the last to end a job (kyu_minutes,
 * kept a week; its token begins host:pid) stands in. Read failures (a
 * client account without those privileges) only shorten the line. */
static void say_none_live(struct db *db, FILE *to)
{
	static const char rows[] =
		"SELECT host, pid, TIMESTAMPDIFF(SECOND, last_seen, NOW(6)) FROM kyu_daemons "
		"ORDER BY last_seen DESC LIMIT 1";
	static const char minutes[] =
		"SELECT SUBSTRING_INDEX(daemon, ':', 1), SUBSTRING_INDEX(SUBSTRING_INDEX(daemon, ':', 2), ':', -1), "
		"TIMESTAMPDIFF(SECOND, minute, UTC_TIMESTAMP()) FROM kyu_minutes ORDER BY minute DESC LIMIT 1";
	const struct db_reply *reply;
	const struct db_result *r;
	char when[32];

	if (db_query(db, rows, sizeof(rows) - 1, &reply) == DB_OK && reply->n > 0 &&
	    (r = &reply->r[0])->n_rows == 1 && db_cell(r, 0, 2)) {
		ago(when, sizeof(when), strtoll(db_cell(r, 0, 2), NULL, 10));
		fprintf(to,
			"no kyud is live: the last one seen was %s pid %s, %s ago (its row's last refresh); "
			"jobs wait until one runs\n",
			db_cell(r, 0, 0), db_cell(r, 0, 1), when);
		return;
	}
	if (db_query(db, minutes, sizeof(minutes) - 1, &reply) == DB_OK && reply->n > 0 &&
	    (r = &reply->r[0])->n_rows == 1 && db_cell(r, 0, 2)) {
		ago(when, sizeof(when), strtoll(db_cell(r, 0, 2), NULL, 10));
		fprintf(to,
			"no kyud is live: none is registered; the last to end a job was %s pid %s, "
			"%s ago; jobs wait until one runs\n",
			db_cell(r, 0, 0), db_cell(r, 0, 1), when);
		return;
	}
	fprintf(to, "no kyud is live: none is registered, and none ended a job in the last week; "
		    "jobs wait until one runs\n");
}

/* The daemons of kyu_daemons, live or not (kyud(8), "REGISTRY"), and a
 * line when none is live. */
int cmd_daemons(struct db *db)
{
	static const char q[] =
		"SELECT host, pid, IFNULL(wake_addr, '-') AS wake_addr, "
		"IF(queues = '', '*', queues) AS queues, version, "
		"IF(slots = 0, '-', slots) AS slots, running, "
		"IF(slots = 0, '-', GREATEST(CAST(slots AS SIGNED) - running, 0)) AS free, "
		"IF(drain IS NULL, 'no', CONCAT('since ', drain, ' ', " CLI_ZONE ", "
		"IFNULL(CONCAT(' by ', drain_by), ''))) AS draining, " CLI_TIME("started") ", " CLI_TIME(
			"last_seen") ", "
				     /* Against the daemon's own refresh interval: 100 s since the
		 * last refresh is nothing for a daemon that refreshes every
		 * 120 s, and the sign of a wedged one that refreshes every 20. */
				     "CONCAT(TIMESTAMPDIFF(SECOND, last_seen, NOW(6)), ' s ago (refreshes every ', " ROW_INTERVAL(
					     "d") ", ' s)') AS seen, "
						  "IF(" REGISTRY_LIVE(
							  "d") ", 'yes', 'no') AS live, id "
							       "FROM kyu_daemons AS d ORDER BY host, pid, id";
	static const char live[] =
		"SELECT COUNT(*) FROM kyu_daemons AS d WHERE " REGISTRY_LIVE("d");
	static const char any[] = "SELECT 1 FROM kyu_daemons LIMIT 1";
	const struct db_reply *reply;
	long n;

	if (db_query(db, live, sizeof(live) - 1, &reply) != DB_OK || reply->n < 1 ||
	    reply->r[0].n_rows != 1)
		return cli_die_db(db, "daemons");
	n = strtol(db_cell(&reply->r[0], 0, 0) ? db_cell(&reply->r[0], 0, 0) : "0", NULL, 10);
	if (n == 0 && table_format() == TABLE_JSON) {
		/* stdout stays one JSON array, empty or of the rows left. */
		if (cli_print_query(db, q, sizeof(q) - 1, false) < 0)
			return cli_die_db(db, "daemons");
		say_none_live(db, stderr);
		return 0;
	}
	if (n == 0) {
		/* The rows left by daemons that died, if any, then the line. */
		if (db_query(db, any, sizeof(any) - 1, &reply) == DB_OK && reply->n > 0 &&
		    reply->r[0].n_rows > 0 && cli_print_query(db, q, sizeof(q) - 1, false) < 0)
			return cli_die_db(db, "daemons");
		say_none_live(db, stdout);
		return 0;
	}
	return cli_print_query(db, q, sizeof(q) - 1, false) < 0 ? cli_die_db(db, "daemons") : 0;
}

int cmd_drain(struct db *db, const struct kyu_config *cfg, const char *daemon)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r;
	int rc = 1;

	/* By its token, or by host:pid as kyu daemons prints them. */
	registry_drain_build(&sb, daemon);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK || reply->n < 2) {
		rc = cli_die_db(db, "drain");
		goto out;
	}
	r = &reply->r[1];
	if (r->n_rows == 0) {
		fprintf(stderr,
			"kyu: drain: no live daemon '%s' in kyu_daemons (kyu daemons lists them: "
			"its id, or HOST:PID)\n",
			daemon);
		goto out;
	}
	for (size_t i = 0; i < r->n_rows; i++)
		printf("draining %s pid %s (%s), asked at %s by %s: it stops claiming, lets its "
		       "running jobs finish, then exits\n",
		       db_cell(r, i, 0), db_cell(r, i, 1), db_cell(r, i, 2), db_cell(r, i, 3),
		       db_cell(r, i, 4));
	/* An any-queue wake-up brings each daemon's refresh forward, which
	 * reads the drain (else it comes within a refresh interval). */
	(void)cli_send_wake(db, cfg, "", true);
	rc = 0;
out:
	sb_free(&sb);
	return rc;
}

int cmd_wake(struct db *db, const struct kyu_config *cfg, const char *queue)
{
	return cli_send_wake(db, cfg, queue, false) < 0;
}

int cmd_locks(struct db *db, const char *name)
{
	struct strbuf sb = { 0 };
	int rc;

	/* lock_sql_list's rows (the dashboard's too), with acquired_at as
	 * kyu prints times (cli.h). */
	sb_adds(&sb, "SELECT name, slot, host, pid, IF(acquired_at = '-', '-', " CLI_UTC_TIME(
			     "acquired_at") ") AS acquired_at, lease_left FROM (");
	lock_sql_list(&sb, name);
	sb_adds(&sb, ") AS l ORDER BY name, slot");
	rc = cli_print_query(db, sb.buf, sb.len, false) < 0 ? cli_die_db(db, "locks") : 0;
	sb_free(&sb);
	return rc;
}
