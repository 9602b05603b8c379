#include "cmd_queue.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/action.h"
#include "common/minutes.h"
#include "common/util.h"
#include "cli.h"

/* kyu queues' failed_1h: the jobs that failed for good in the last hour,
 * as the dashboard's overview counts them (kyu-web(1)): from kyu_minutes,
 * or on a schema without it from kyu_jobs' rows that became failed in the
 * hour. Not the failed rows the table holds, which depend on retention.
 * blocked (jobs waiting for others, kyu_jobs(7) "Workflows") comes last,
 * after the settings: scripts that read the columns before it by position
 * read what they read before it was added; key_max_running, added later
 * still, after it. */
#define QUEUES_HEAD                                                                                 \
	"SELECT n.name AS queue, IFNULL(c.waiting, 0) AS waiting, IFNULL(c.due, 0) AS due, "         \
	"IFNULL(c.running, 0) AS running, IFNULL(h.failed_1h, 0) AS failed_1h, "                     \
	"IFNULL(s.paused, 0) AS paused, IFNULL(s.max_running, '-') AS max_running, "                 \
	"IFNULL(CONCAT(s.rate_limit, '/', s.rate_period, 's'), '-') AS rate, "                       \
	"IFNULL(s.weight, 1) AS weight, IFNULL(s.max_waiting, '-') AS max_waiting, "                 \
	"IFNULL(c.blocked, 0) AS blocked, IFNULL(s.key_max_running, 1) AS key_max_running "          \
	"FROM (SELECT DISTINCT queue AS name FROM kyu_jobs UNION SELECT name FROM kyu_queues) AS n "  \
	"LEFT JOIN (SELECT queue, SUM(status = 'waiting') AS waiting, "                               \
	"SUM(status = 'waiting' AND run_at <= NOW(6)) AS due, SUM(status = 'running') AS running, "  \
	"SUM(status = 'blocked') AS blocked "                                                         \
	"FROM kyu_jobs GROUP BY queue) AS c ON c.queue = n.name LEFT JOIN "
#define QUEUES_TAIL \
	" AS h ON h.queue = n.name LEFT JOIN kyu_queues AS s ON s.name = n.name ORDER BY n.name"

int cmd_queues(struct db *db)
{
	/* Every queue that has rows or settings. The counts read the
	 * (queue, status) index; the due count reads the rows it counts. */
	static const char minutes[] = QUEUES_HEAD
		"(SELECT queue, SUM(failed) AS failed_1h FROM kyu_minutes WHERE minute > " MINUTES_NOW
		" - INTERVAL 60 MINUTE GROUP BY queue)" QUEUES_TAIL;
	static const char rows[] = QUEUES_HEAD
		"(SELECT queue, COUNT(*) AS failed_1h FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) "
		"WHERE status = 'failed' AND updated_at >= NOW(6) - INTERVAL 1 HOUR GROUP BY queue)" QUEUES_TAIL;

	if (cli_print_query(db, minutes, sizeof(minutes) - 1, false) >= 0)
		return 0;
	if (db_error_code(db) != ER_NO_SUCH_TABLE)
		return cli_die_db(db, "queues");
	return cli_print_query(db, rows, sizeof(rows) - 1, false) < 0 ? cli_die_db(db, "queues") : 0;
}

/* key-limit's value: 1 to 1000 (kyu_queues' CHECK), or -1 after saying
 * why not. */
static int key_limit(const char *value)
{
	int64_t n;

	if (!value || parse_i64(value, 1, 1000, &n) < 0) {
		fprintf(stderr, "kyu: key-limit: '%s' is not a number from 1 to 1000\n", value ? value : "");
		return -1;
	}
	return (int)n;
}

/* pause, resume, limit, key-limit: one upsert of the queue's kyu_queues row, made
 * only when the queue exists (jobs or settings) unless create; reset: the
 * row deleted. */
int cmd_queue_set(struct db *db, const struct kyu_config *cfg, const char *what, const char *queue,
		  const char *value, bool create)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const char *v = "";
	char num[24];
	bool reset = strcmp(what, "queue-reset") == 0;
	int rc = 1;

	if (!*queue) {
		fprintf(stderr, "kyu: %s: the queue name must not be empty\n", what);
		return EXIT_USAGE;
	}
	if (strcmp(what, "limit") == 0) {
		int64_t n;
		if (value && strcmp(value, "none") == 0) {
			v = "NULL";
		} else if (!value || parse_i64(value, 0, INT32_MAX, &n) < 0) {
			fprintf(stderr, "kyu: limit: '%s' is not a number from 0 to %d or 'none'\n",
				value ? value : "", INT32_MAX);
			return EXIT_USAGE;
		} else {
			snprintf(num, sizeof(num), "%lld", (long long)n);
			v = num;
		}
		sb_adds(&sb, "INSERT INTO kyu_queues (name, max_running) SELECT ");
		db_quotes(&sb, queue);
		sb_printf(&sb, ", %s FROM DUAL", v);
		if (!create)
			action_queue_exists(&sb, queue);
		sb_adds(&sb, " ON DUPLICATE KEY UPDATE max_running = VALUES(max_running)");
	} else if (strcmp(what, "key-limit") == 0) {
		int n = key_limit(value);
		if (n < 0)
			return EXIT_USAGE;
		snprintf(num, sizeof(num), "%d", n);
		v = num;
		sb_adds(&sb, "INSERT INTO kyu_queues (name, key_max_running) SELECT ");
		db_quotes(&sb, queue);
		sb_printf(&sb, ", %s FROM DUAL", v);
		if (!create)
			action_queue_exists(&sb, queue);
		sb_adds(&sb, " ON DUPLICATE KEY UPDATE key_max_running = VALUES(key_max_running)");
	} else {
		action_sql_create(&sb, reset ? ACT_RESET : strcmp(what, "pause") == 0 ? ACT_PAUSE : ACT_RESUME,
				  queue, create);
	}
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		cli_die_db(db, what);
		goto out;
	}
	/* Found rows (db.c): 0 only when no row was selected or deleted. */
	if (reply->n < 1 || reply->r[0].affected == 0) {
		if (reset)
			fprintf(stderr, "kyu: queue-reset: queue '%s' has no settings\n", queue);
		else
			fprintf(stderr,
				"kyu: %s: no queue '%s': it has no jobs and no settings (kyu queues lists "
				"them; %s --create %s makes its settings ahead of its first job)\n",
				what, queue, what, queue);
		goto out;
	}
	if (strcmp(what, "limit") == 0)
		printf("queue %s: max_running %s\n", queue, strcmp(v, "NULL") == 0 ? "none" : v);
	else if (strcmp(what, "key-limit") == 0)
		printf("queue %s: key_max_running %s\n", queue, v);
	else
		printf("queue %s: %s\n", queue,
		       reset ? "settings removed" : strcmp(what, "pause") == 0 ? "paused" : "resumed");
	/* Jobs that may start now should not wait for a poll. */
	if (strcmp(what, "pause") != 0)
		cli_send_wake(db, cfg, queue, true);
	rc = 0;
out:
	sb_free(&sb);
	return rc;
}
