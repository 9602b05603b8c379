/* kyu queues, pause, resume, limit, queue-reset. See cmd_queue.h. */
#include "cmd_queue.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/action.h"
#include "common/attention.h"
#include "common/db_quote.h"
#include "common/util.h"
#include "cli.h"

/* kyu queues lists the queues that have rows or settings (and those with
 * failed attempts in the last hour), in the dashboard overview's order
 * (common/attention.h): what orders them is read for every queue, a dive
 * per queue into an index plus the running rows, kyu_minutes' hour and
 * kyu_queues' names; the page's queues alone (--offset, --limit, or
 * --after a name) are then counted and printed, in one statement whose
 * rows are the page's names in their order, with their attention and
 * hour. So a page costs the same whatever the finished rows, and a queue
 * on it costs dives into (status, queue, due) that read its live rows.
 *
 * The columns: failed_1h, the jobs that failed for good in the last hour
 * as the overview counts them (kyu-web(1)): from kyu_minutes, or on a
 * schema without it from kyu_jobs' rows that became failed in the hour
 * (not the failed rows the table holds, which depend on retention).
 * blocked (jobs waiting for others, kyu_jobs(7) "Workflows") comes after
 * the settings: scripts that read the columns before it by position read
 * what they read before it was added; key_max_running, added later still,
 * after it; then retrying (waiting jobs whose last attempt failed) and
 * failed_attempts_1h (the attempts that failed in the last hour, retried
 * or for good; '-' without kyu_minutes, which alone counts the retried
 * ones); attention last, for the same reason. */
#define QUEUES_COUNT(what, cond)                                                                   \
	"(SELECT COUNT(*) FROM kyu_jobs AS j WHERE j.status = '" what                              \
	"' AND j.queue = n.name" cond ") "
#define QUEUES_HEAD                                                                                                                                    \
	"SELECT n.name AS queue, " QUEUES_COUNT("waiting", "") "AS waiting, " QUEUES_COUNT("waiting", " AND j.due <= NOW(6)") "AS due, " QUEUES_COUNT( \
		"running",                                                                                                                             \
		"") "AS running, n.failed_1h AS failed_1h, "                                                                                           \
		    "IFNULL(s.paused, 0) AS paused, IFNULL(s.max_running, '-') AS max_running, "                                                       \
		    "IFNULL(CONCAT(s.rate_limit, '/', s.rate_period, 's'), '-') AS rate, "                                                             \
		    "IFNULL(s.weight, 1) AS weight, IFNULL(s.max_waiting, '-') AS max_waiting, " QUEUES_COUNT(                                         \
			    "blocked", "") "AS blocked, IFNULL(s.key_max_running, 1) AS "                                                              \
					   "key_max_running, " QUEUES_COUNT(                                                                           \
						   "waiting",                                                                                          \
						   " AND j.attempts > 0") "AS retrying, "
/* The page's rows: a first SELECT that names the columns and gives no
 * row, then a row constructor per queue (a UNION of one SELECT each
 * costs the server more to plan as the page grows). utf8mb4_bin: the
 * queue columns' collation, for their indexes. */
#define QUEUES_PAGE                                                                                \
	"FROM (SELECT _utf8mb4'' COLLATE utf8mb4_bin AS name, 0 AS pos, 'idle' AS attention, "     \
	"0 AS failed_1h, 0 AS failed_attempts_1h FROM DUAL WHERE 0"
#define QUEUES_TAIL ") AS n LEFT JOIN kyu_queues AS s ON s.name = n.name ORDER BY n.pos"

/* The facts that order the queues, for every queue (common/attention.h),
 * and the names of those with only older rows: a loose scan of (queue,
 * status). */
#define QUEUES_FACTS                                                                               \
	ATTENTION_SQL_OLDEST "; " ATTENTION_SQL_RUNNING "; " ATTENTION_SQL_SETTINGS                \
			     "; SELECT queue FROM kyu_jobs GROUP BY queue"
/* The hour without kyu_minutes (a schema before version 4): the rows that
 * ended in it, by kyu_jobs_finished; no retries known. */
#define QUEUES_HOUR_ROWS                                                                           \
	"SELECT queue, SUM(status = 'succeeded'), SUM(status = 'failed'), NULL FROM kyu_jobs "     \
	"FORCE INDEX (kyu_jobs_finished) WHERE status IN ('succeeded', 'failed') AND "             \
	"updated_at >= NOW(6) - INTERVAL 1 HOUR GROUP BY queue"

/* What kyu queues was asked. */
struct queues_args {
	const char *after; /* NULL: from the first */
	int64_t limit, offset;
	bool by_name;
};

static int queues_args(int argc, char **argv, struct queues_args *a)
{
	static const struct option longs[] = {
		{ "limit", required_argument, NULL, 'n' },
		{ "after", required_argument, NULL, 'a' },
		{ "offset", required_argument, NULL, 'o' },
		{ "sort", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sort = NULL;
	int c;

	memset(a, 0, sizeof(*a));
	a->limit = INT64_MAX;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":n:", longs, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_i64(optarg, 1, INT64_MAX, &a->limit) < 0) {
				fprintf(stderr,
					"kyu: queues: --limit '%s' is not a positive number\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'o':
			if (parse_i64(optarg, 0, INT64_MAX, &a->offset) < 0) {
				fprintf(stderr,
					"kyu: queues: --offset '%s' is not a number from 0 up\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'a':
			a->after = optarg;
			break;
		case 's':
			if (strcmp(optarg, "attention") != 0 && strcmp(optarg, "name") != 0) {
				fprintf(stderr,
					"kyu: queues: --sort '%s' is not attention or name\n",
					optarg);
				return EXIT_USAGE;
			}
			sort = optarg;
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
	/* --after is a place in the order by name: another order moves
	 * under it between pages. */
	if (a->after && sort && strcmp(sort, "attention") == 0) {
		fprintf(stderr, "kyu: queues: --after pages by name; with --sort attention, "
				"page with --offset\n");
		return EXIT_USAGE;
	}
	a->by_name = a->after || (sort && strcmp(sort, "name") == 0);
	return 0;
}

/* Every queue's facts into t; *minutes: the hour came from kyu_minutes
 * (else from kyu_jobs' rows): the failed and retried attempts of every
 * queue, then the succeeded jobs of those that may be failing
 * (attention.h). 0, or the exit status after saying why. */
static int queues_facts(struct db *db, struct attention_table *t, bool *minutes)
{
	/* One round trip; the hour last, as it fails on an older schema. */
	static const char facts[] = QUEUES_FACTS "; " ATTENTION_SQL_HOUR_FAILED;
	static const char rows[] = QUEUES_HOUR_ROWS;
	const struct db_reply *reply;
	struct strbuf sb = { 0 };
	int rc = 0;

	*minutes = db_query(db, facts, sizeof(facts) - 1, &reply) == DB_OK;
	if (!*minutes && (reply->n != 5 || reply->r[4].err_no != ER_NO_SUCH_TABLE))
		return cli_die_db(db, "queues");
	attention_add_oldest(t, &reply->r[0]);
	(void)attention_add_running(t, &reply->r[1]);
	attention_add_names(t, &reply->r[2]);
	attention_add_names(t, &reply->r[3]);
	if (*minutes)
		attention_add_hour(t, &reply->r[4]);
	else if (db_query(db, rows, sizeof(rows) - 1, &reply) != DB_OK)
		return cli_die_db(db, "queues");
	else if (reply->n >= 1)
		attention_add_hour(t, &reply->r[0]);
	if (!*minutes || !attention_sql_succeeded(&sb, t))
		goto out;
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		rc = cli_die_db(db, "queues");
		goto out;
	}
	if (reply->n >= 1)
		attention_add_hour(t, &reply->r[0]);
out:
	sb_free(&sb);
	return rc;
}

/* Whether q comes after the name after in the order by name. */
static bool after_name(const struct attention_queue *q, const char *after)
{
	size_t len = strlen(after);
	int c = memcmp(q->name, after, q->len < len ? q->len : len);

	return c > 0 || (c == 0 && q->len > len);
}

int cmd_queues(struct db *db, int argc, char **argv)
{
	struct attention_table t = { 0 };
	struct queues_args a;
	struct strbuf sb = { 0 };
	bool minutes;
	size_t first = 0, pos = 0;
	int rc;

	if ((rc = queues_args(argc, argv, &a)) != 0 || !db)
		return rc;
	if ((rc = queues_facts(db, &t, &minutes)) != 0)
		goto out;
	attention_sort(&t, a.by_name);
	while (a.after && first < t.n && !after_name(&t.e[first], a.after))
		first++;
	first += (size_t)a.offset < t.n - first ? (size_t)a.offset : t.n - first;
	sb_adds(&sb, QUEUES_HEAD);
	sb_adds(&sb, minutes ? "n.failed_attempts_1h" : "'-'");
	sb_adds(&sb, " AS failed_attempts_1h, n.attention AS attention " QUEUES_PAGE);
	for (size_t i = first; i < t.n && pos < (uint64_t)a.limit; i++, pos++) {
		const struct attention_queue *q = &t.e[i];
		sb_adds(&sb, pos ? ", (" : " UNION ALL VALUES (");
		db_quote(&sb, q->name, q->len);
		sb_printf(&sb, ", %zu, '%s', %lld, %lld)", pos, attention_name(q->att), q->failed,
			  q->failed + q->retried);
	}
	sb_adds(&sb, QUEUES_TAIL);
	rc = cli_print_query(db, sb.buf, sb.len, false) < 0 ? cli_die_db(db, "queues") : 0;
out:
	attention_free(&t);
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
