#include "cmd_jobs.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/util.h"
#include "cli.h"

/* kyu submit's status when the queue is full (kyu_queues.max_waiting):
 * EX_TEMPFAIL, "try again later". */
#define EXIT_QUEUE_FULL 75

int cmd_submit(struct db *db, const struct kyu_config *cfg, int argc, char **argv)
{
	const char *id = NULL, *queue = "default", *shell = NULL, *cwd = NULL, *key = NULL;
	int64_t prio = 0, delay = 0, max_attempts = 0, time_limit = -1;
	json_t *env = json_object();
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	char *json;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt(argc, argv, "+i:q:p:d:m:t:C:e:s:k:")) != -1) {
		int bad = 0;
		switch (c) {
		case 'i':
			id = optarg;
			if (!id || !*id) {
				fprintf(stderr, "kyu: submit: -i: the id must not be empty\n");
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 'q':
			queue = optarg;
			if (!*queue) {
				fprintf(stderr, "kyu: submit: -q: the queue name must not be empty\n");
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 's': shell = optarg; break;
		case 'C': cwd = optarg; break;
		case 'k': key = optarg; break;
		case 'p': bad = parse_i64(optarg, INT32_MIN, INT32_MAX, &prio); break;
		case 'd': bad = parse_i64(optarg, 0, 315360000, &delay); break;
		case 'm': bad = parse_i64(optarg, 1, 1000000, &max_attempts); break;
		case 't': bad = parse_i64(optarg, 0, 31536000, &time_limit); break;
		case 'e':
			if (cli_env_add(env, optarg, "submit") < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		default:
			fprintf(stderr, "kyu: submit: see kyu submit --help\n");
			rc = EXIT_USAGE;
			goto out;
		}
		if (bad) {
			fprintf(stderr, "kyu: submit: -%c: '%s' is not a whole number from %s\n", c, optarg,
				c == 'p' ? "-2147483648 to 2147483647" :
				c == 'd' ? "0 to 315360000 (seconds)" :
				c == 'm' ? "1 to 1000000" : "0 to 31536000 (seconds)");
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (!shell == (optind >= argc)) {
		fprintf(stderr, "kyu: submit: give either -s 'SHELL LINE' or -- PROGRAM [ARG]...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (!db) {
		rc = 0; /* the options checked, before connecting */
		goto out;
	}
	sb_adds(&sb, "INSERT INTO kyu_jobs (id, queue, priority, run_at, command, argv, env, cwd, "
		     "max_attempts, time_limit, concurrency_key) VALUES (");
	if (id)
		db_quotes(&sb, id);
	else
		sb_adds(&sb, "UUID()");
	sb_adds(&sb, ", ");
	db_quotes(&sb, queue);
	sb_printf(&sb, ", %lld, NOW(6) + INTERVAL %lld SECOND, ", (long long)prio, (long long)delay);
	db_quotes(&sb, shell);
	sb_adds(&sb, ", ");
	if (!shell) {
		json = cli_argv_json(argc - optind, argv + optind, "submit");
		if (!json)
			goto out;
		db_quotes(&sb, json);
		free(json);
	} else {
		sb_adds(&sb, "NULL");
	}
	sb_adds(&sb, ", ");
	if (json_object_size(env)) {
		json = json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS);
		db_quotes(&sb, json);
		free(json);
	} else {
		sb_adds(&sb, "NULL");
	}
	sb_adds(&sb, ", ");
	db_quotes(&sb, cwd);
	if (max_attempts)
		sb_printf(&sb, ", %lld", (long long)max_attempts);
	else
		sb_adds(&sb, ", NULL");
	if (time_limit >= 0)
		sb_printf(&sb, ", %lld, ", (long long)time_limit);
	else
		sb_adds(&sb, ", NULL, ");
	db_quotes(&sb, key);
	sb_adds(&sb, ")");
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		/* The intake bound's trigger (sql/schema.sql) signals SQLSTATE
		 * KYU01; the message names the queue and the bound. */
		if (reply && reply->n > 0 && reply->r[reply->n - 1].err_no == 1644 &&
		    strstr(db_error(db), "kyu: queue ")) {
			fprintf(stderr, "kyu: submit: not submitted, the queue is full: %s\n", db_error(db));
			rc = EXIT_QUEUE_FULL;
			goto out;
		}
		cli_die_db(db, "submit");
		goto out;
	}
	if (id) {
		printf("%s\n", id);
	} else {
		/* The id the server generated, printed the same way as a given one. */
		const char *q = "SELECT id FROM kyu_jobs WHERE seq = LAST_INSERT_ID()";
		if (db_query(db, q, strlen(q), &reply) != DB_OK || reply->n < 1) {
			cli_die_db(db, "submit: reading the generated id");
			goto out;
		}
		if (reply->r[0].n_rows == 1 && db_cell(&reply->r[0], 0, 0))
			printf("%s\n", db_cell(&reply->r[0], 0, 0));
	}
	if (delay == 0)
		cli_send_wake(db, cfg, queue, true);
	rc = 0;
out:
	json_decref(env);
	sb_free(&sb);
	return rc;
}

int cmd_show(struct db *db, const char *id)
{
	struct strbuf sb = { 0 };
	int n;

	sb_adds(&sb, "SELECT seq, id, queue, status, priority, command, argv, env, cwd, " CLI_TIME("run_at") ", "
		     "attempts, max_attempts, time_limit, exit_code, `signal`, error, " CLI_TIME("started_at") ", "
		     CLI_TIME("finished_at") ", duration, cpu_user, cpu_sys, max_rss, host, pid, owner, "
		     CLI_TIME("lease_until") ", concurrency_key, " CLI_TIME("created_at") ", " CLI_TIME("updated_at") ", "
		     "output FROM kyu_jobs WHERE id = ");
	db_quotes(&sb, id);
	n = cli_print_query(db, sb.buf, sb.len, true);
	sb_free(&sb);
	if (n < 0)
		return cli_die_db(db, "show");
	if (n == 0) {
		fprintf(stderr, "kyu: show: no job with id '%s'\n", id);
		return 1;
	}
	return 0;
}

/* kyu list -s: the statuses of kyu_jobs, and "retrying" (waiting after a
 * failed attempt, as the dashboard's Retrying page). */
static const char *const list_statuses[] = { "waiting", "running", "succeeded", "failed",
					     "cancelled", "retrying", NULL };

/* kyu list --since/--until: a time as the server reads a DATETIME
 * ("2026-11-24", "2026-11-24 06:35:00"), checked before it is quoted. */
static bool list_time_ok(const char *s)
{
	size_t n = strlen(s);
	return n >= 10 && n < 32 && s[0] >= '0' && s[0] <= '9' && strspn(s, "0123456789-: .") == n;
}

/* What kyu list --search and --since/--until may read, at most: they
 * filter on columns no index holds, so the newest rows are read until the
 * page is full or this many were examined (MariaDB's LIMIT ROWS
 * EXAMINED), and kyu list says when it stopped there. --scan N changes
 * it. */
#define LIST_EXAMINED 1000000

int cmd_list(struct db *db, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "search", required_argument, NULL, 'f' },
		{ "scan", required_argument, NULL, 'x' },
		{ NULL, 0, NULL, 0 },
	};
	const char *queue = NULL, *status = NULL, *since = NULL, *until = NULL, *search = NULL;
	int64_t limit = 20, examined = LIST_EXAMINED;
	struct strbuf sb = { 0 };
	size_t mark;
	bool bounded;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:s:n:", longs, NULL)) != -1) {
		switch (c) {
		case 'q':
			queue = optarg;
			if (!*queue) {
				fprintf(stderr, "kyu: list: -q: the queue name must not be empty\n");
				return EXIT_USAGE;
			}
			break;
		case 's':
			status = optarg;
			for (c = 0; list_statuses[c] && strcmp(status, list_statuses[c]) != 0; c++)
				;
			if (!list_statuses[c]) {
				fprintf(stderr, "kyu: list: -s: no status '%s'; one of waiting, running, "
						"succeeded, failed, cancelled, retrying\n", status);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_i64(optarg, 1, 1000000, &limit) < 0) {
				fprintf(stderr, "kyu: list: -n: '%s' is not a whole number from 1 to 1000000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
		case 'U':
			if (!list_time_ok(optarg)) {
				fprintf(stderr, "kyu: list: --%s: '%s' is not a time (YYYY-MM-DD [hh:mm[:ss]], "
						"the database's time zone)\n", c == 'S' ? "since" : "until", optarg);
				return EXIT_USAGE;
			}
			*(c == 'S' ? &since : &until) = optarg;
			break;
		case 'x':
			if (parse_i64(optarg, 1, INT64_MAX, &examined) < 0) {
				fprintf(stderr, "kyu: list: --scan: '%s' is not a whole number of rows\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'f':
			search = optarg;
			if (!*search) {
				fprintf(stderr, "kyu: list: --search: nothing to search for\n");
				return EXIT_USAGE;
			}
			break;
		default:
			fprintf(stderr, "kyu: list: see kyu list --help\n");
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kyu: list: unexpected argument '%s' (kyu list --help)\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (!db)
		return 0; /* the arguments checked, before connecting */
	/* exit_code: a killed job's signal where its exit code is NULL; the
	 * start of error, the cause that an operator looks for first. */
	sb_adds(&sb, "SELECT id, queue, status, attempts, "
		     "IF(`signal` IS NULL, exit_code, CONCAT('signal ', `signal`)) AS exit_code, " CLI_TIME("run_at") ", "
		     CLI_TIME("finished_at") ", LEFT(error, 60) AS error, LEFT(COALESCE(command, argv), 60) AS what "
		     "FROM kyu_jobs WHERE 1");
	if (queue) {
		sb_adds(&sb, " AND queue = ");
		db_quotes(&sb, queue);
	}
	if (status && strcmp(status, "retrying") == 0) {
		sb_adds(&sb, " AND status = 'waiting' AND attempts > 0");
	} else if (status) {
		sb_adds(&sb, " AND status = ");
		db_quotes(&sb, status);
	}
	/* The time a row last changed: when a finished job ended, as the
	 * dashboard's lists filter it. */
	if (since) {
		sb_adds(&sb, " AND updated_at >= ");
		db_quotes(&sb, since);
	}
	if (until) {
		sb_adds(&sb, " AND updated_at < ");
		db_quotes(&sb, until);
	}
	if (search) {
		static const char *const cols[] = { "id", "command", "argv", "error", "output" };
		struct strbuf p = { 0 };
		/* Anywhere in the text; its own % _ and \ literally. */
		sb_adds(&p, "%");
		for (const char *s = search; *s; s++) {
			if (*s == '%' || *s == '_' || *s == '\\')
				sb_adds(&p, "\\");
			sb_add(&p, s, 1);
		}
		sb_adds(&p, "%");
		for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
			sb_printf(&sb, "%s%s LIKE ", i ? " OR " : " AND (", cols[i]);
			db_quotes(&sb, p.buf);
		}
		sb_adds(&sb, ")");
		sb_free(&p);
	}
	bounded = since || until || search;
	mark = sb.len;
	sb_printf(&sb, " ORDER BY seq DESC LIMIT %lld", (long long)limit);
	if (bounded)
		sb_printf(&sb, " ROWS EXAMINED %lld", (long long)examined);
	if (cli_print_query(db, sb.buf, sb.len, false) < 0) {
		cli_die_db(db, "list");
	} else {
		const struct db_reply *reply;
		static const char warnings[] = "SELECT @@warning_count > 0";
		const char *warned = NULL;
		/* The warning the bound leaves (the rows printed are those
		 * found until then), read before any other statement. */
		if (bounded && db_query(db, warnings, sizeof(warnings) - 1, &reply) == DB_OK &&
		    reply->n > 0 && reply->r[reply->n - 1].n_rows > 0)
			warned = db_cell(&reply->r[reply->n - 1], 0, 0);
		if (warned && strcmp(warned, "1") == 0) {
			fprintf(stderr, "kyu: list: stopped after examining %lld rows, the newest; "
					"older jobs may match (narrow with -q, -s, --since, or --scan more)\n",
				(long long)examined);
		} else {
			/* A full page may hide more: said on stderr (stdout
			 * stays the table), found by one more row past it on
			 * the same index. */
			sb.len = mark;
			sb_printf(&sb, " ORDER BY seq DESC LIMIT 1 OFFSET %lld", (long long)limit);
			if (bounded)
				sb_printf(&sb, " ROWS EXAMINED %lld", (long long)examined);
			if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 &&
			    reply->r[reply->n - 1].n_rows > 0)
				fprintf(stderr, "kyu: list: more than the %lld jobs shown (-n N shows more)\n",
					(long long)limit);
		}
		rc = 0;
	}
	sb_free(&sb);
	return rc;
}

/* cancel, retry, run-now, delete: one statement on the job's row
 * (common/action.h), which changes nothing unless the job has a status the
 * action applies to. */
int cmd_job_action(struct db *db, enum action a, const char *id)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	int rc = 1;

	action_sql(&sb, a, id);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		cli_die_db(db, action_name(a));
	} else if (reply->n < 1 || reply->r[0].affected == 0) {
		fprintf(stderr, "kyu: %s: no %s job with id '%s'\n", action_name(a), action_needs(a), id);
	} else {
		printf("%s %s\n", action_done(a), id);
		rc = 0;
	}
	sb_free(&sb);
	return rc;
}

/* Jobs by queue and status, as a table or as a JSON array of objects
 * (queue, status, jobs as a number, oldest_run_at as the server prints
 * it, in the session's time zone). */
int cmd_stats(struct db *db, bool as_json)
{
	static const char q[] = "SELECT queue, status, COUNT(*) AS jobs, MIN(run_at) AS oldest_run_at "
				"FROM kyu_jobs GROUP BY queue, status ORDER BY queue, status";
	/* The table's time with its zone (cli.h); the JSON's as the server
	 * prints it, for programs. */
	static const char table[] = "SELECT queue, status, jobs, " CLI_TIME("oldest_run_at") " FROM ("
				    "SELECT queue, status, COUNT(*) AS jobs, MIN(run_at) AS oldest_run_at "
				    "FROM kyu_jobs GROUP BY queue, status) AS s ORDER BY queue, status";
	const struct db_reply *reply;
	const struct db_result *r;
	json_t *rows;
	char *text;

	if (!as_json)
		return cli_print_query(db, table, sizeof(table) - 1, false) < 0 ? cli_die_db(db, "stats") : 0;
	if (db_query(db, q, sizeof(q) - 1, &reply) != DB_OK || reply->n < 1)
		return cli_die_db(db, "stats");
	r = &reply->r[0];
	rows = json_array();
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *at = db_cell(r, i, 3);
		json_array_append_new(
			rows, json_pack("{s:s?, s:s?, s:I, s:o}", "queue", db_cell(r, i, 0), "status",
					db_cell(r, i, 1), "jobs",
					(json_int_t)strtoll(db_cell(r, i, 2) ? db_cell(r, i, 2) : "0", NULL, 10),
					"oldest_run_at", at ? json_string(at) : json_null()));
	}
	text = json_dumps(rows, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	json_decref(rows);
	if (!text) {
		fprintf(stderr, "kyu: stats: cannot encode the result as JSON\n");
		return 1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}
