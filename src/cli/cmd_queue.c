/* kyu queues, pause, resume, limit, queue-reset. See cmd_queue.h. */
#include "cmd_queue.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/action.h"
#include "common/db_quote.h"
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
 * still, after it; then retrying (waiting jobs whose last attempt failed)
 * and failed_attempts_1h (the attempts that failed in the last hour,
 * retried or for good; '-' without kyu_minutes, which alone counts the
 * retried ones).
 *
 * The names come from a loose scan of (queue, status) and kyu_queues, at
 * most --limit of them after --after; each listed queue's counts from
 * dives into (status, queue, due) that read its live rows only (retrying
 * also reads the waiting rows themselves, for attempts): the finished
 * rows, however many, are not read, nor the queues not listed. */
/* Where queues_sql puts the options. */
#define AFTER "\001"
#define LIMIT "\002"
#define QUEUES_COUNT(what, cond)                                                                   \
	"(SELECT COUNT(*) FROM kyu_jobs AS j WHERE j.status = '" what                              \
	"' AND j.queue = n.name" cond ") "
#define QUEUES_HEAD                                                                                                                                    \
	"SELECT n.name AS queue, " QUEUES_COUNT("waiting", "") "AS waiting, " QUEUES_COUNT("waiting", " AND j.due <= NOW(6)") "AS due, " QUEUES_COUNT( \
		"running",                                                                                                                             \
		"") "AS running, IFNULL(h.failed_1h, 0) AS failed_1h, "                                                                                \
		    "IFNULL(s.paused, 0) AS paused, IFNULL(s.max_running, '-') AS max_running, "                                                       \
		    "IFNULL(CONCAT(s.rate_limit, '/', s.rate_period, 's'), '-') AS rate, "                                                             \
		    "IFNULL(s.weight, 1) AS weight, IFNULL(s.max_waiting, '-') AS max_waiting, " QUEUES_COUNT(                                         \
			    "blocked",                                                                                                                 \
			    "") "AS blocked, IFNULL(s.key_max_running, 1) AS key_max_running, " QUEUES_COUNT("waiting",                                \
													     " AND j.attempts > 0") "AS retrying, "
#define QUEUES_NAMES                                                                               \
	"FROM (SELECT name FROM (SELECT DISTINCT queue AS name FROM kyu_jobs WHERE queue > " AFTER \
	" UNION SELECT name FROM kyu_queues WHERE name > " AFTER                                   \
	") AS a ORDER BY name LIMIT " LIMIT ") AS n LEFT JOIN "
#define QUEUES_TAIL                                                                                \
	" AS h ON h.queue = n.name LEFT JOIN kyu_queues AS s ON s.name = n.name ORDER BY n.name"

/* The statement with the options in place of AFTER and LIMIT. */
static void queues_sql(struct strbuf *sb, const char *tmpl, const char *after, long long limit)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p == AFTER[0])
			db_quotes(sb, after);
		else if (*p == LIMIT[0])
			sb_printf(sb, "%lld", limit);
		else
			sb_add(sb, p, 1);
	}
}

int cmd_queues(struct db *db, int argc, char **argv)
{
	static const char minutes[] = QUEUES_HEAD
		"IFNULL(h.failed_attempts_1h, 0) AS failed_attempts_1h " QUEUES_NAMES
		"(SELECT queue, SUM(failed) AS failed_1h, SUM(failed) + SUM(retried) AS "
		"failed_attempts_1h FROM kyu_minutes WHERE minute > " MINUTES_NOW
		" - INTERVAL 60 MINUTE GROUP BY queue)" QUEUES_TAIL;
	static const char rows[] = QUEUES_HEAD
		"'-' AS failed_attempts_1h " QUEUES_NAMES
		"(SELECT queue, COUNT(*) AS failed_1h FROM kyu_jobs FORCE INDEX (kyu_jobs_finished) "
		"WHERE status = 'failed' AND updated_at >= NOW(6) - INTERVAL 1 HOUR GROUP BY queue)" QUEUES_TAIL;
	static const struct option longs[] = {
		{ "limit", required_argument, NULL, 'n' },
		{ "after", required_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf sb = { 0 };
	const char *after = "";
	int64_t limit = INT64_MAX;
	int c, rc = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_i64(optarg, 1, INT64_MAX, &limit) < 0) {
				fprintf(stderr,
					"kyu: queues: --limit '%s' is not a positive number\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			after = optarg;
			break;
		case ':':
			fprintf(stderr, "kyu: queues: %s needs a value\n", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			fprintf(stderr, "kyu: queues: unknown option %s\n", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kyu: queues: unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!db)
		return 0;
	queues_sql(&sb, minutes, after, (long long)limit);
	if (cli_print_query(db, sb.buf, sb.len, false) >= 0) {
		rc = 0;
		goto out;
	}
	if (db_error_code(db) != ER_NO_SUCH_TABLE) {
		rc = cli_die_db(db, "queues");
		goto out;
	}
	sb.len = 0;
	queues_sql(&sb, rows, after, (long long)limit);
	rc = cli_print_query(db, sb.buf, sb.len, false) < 0 ? cli_die_db(db, "queues") : 0;
out:
	sb_free(&sb);
	return rc;
}

/* key-limit's value: 1 to 1000 (kyu_queues' CHECK), or -1 after saying
 * why not. */
static int key_limit(const char *value)
{
	int64_t n;

	if (!value || parse_i64(value, 1, 1000, &n) < 0) {
		fprintf(stderr, "kyu: key-limit: '%s' is not a number from 1 to 1000\n",
			value ? value : "");
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
		action_sql_create(&sb,
				  reset                        ? ACT_RESET
				  : strcmp(what, "pause") == 0 ? ACT_PAUSE
							       : ACT_RESUME,
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
		       reset                        ? "settings removed"
		       : strcmp(what, "pause") == 0 ? "paused"
						    : "resumed");
	/* Jobs that may start now should not wait for a poll. */
	if (strcmp(what, "pause") != 0)
		cli_send_wake(db, cfg, queue, true);
	rc = 0;
out:
	sb_free(&sb);
	return rc;
}
