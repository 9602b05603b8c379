/* kyu submit, list, stats, and cancel, retry, run-now, delete. See
 * cmd_jobs.h. */
#include "cmd_jobs.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <jansson.h>
#include <mysqld_error.h>

#include "common/schema.h"
#include "common/text.h"
#include "common/util.h"
#include "cli.h"
#include "table.h"

/* kyu submit's status when the queue is full (kyu_queues.max_waiting):
 * EX_TEMPFAIL, "try again later". */
#define EXIT_QUEUE_FULL 75

/* kyu submit's long options, the workflow columns (kyu_jobs(7),
 * "Workflows"); their values as getopt_long returns them. */
enum {
	OPT_AFTER = 256,
	OPT_AFTER_POLICY,
	OPT_BATCH,
	OPT_AFTER_BATCH,
	OPT_UNIQUE,
	OPT_TRACEPARENT,
};

/* --batch and --after-batch: a label the column holds, checked before
 * connecting; -1 with a message naming the option. */
static int submit_label(const char *opt, const char *label)
{
	if (!*label) {
		fprintf(stderr, "kyu: submit: --%s: the batch label must not be empty\n", opt);
		return -1;
	}
	return 0;
}

/* The refusal of an after that names a job that does not exist (SQLSTATE
 * KYU02, whose message the trigger of sql/schema.sql writes as "kyu: after
 * of job ID names job UP, which does not exist"): one line naming UP,
 * true; false for another error. */
static bool submit_after_refused(const struct db_reply *reply)
{
	static const char names[] = " names job ", tail[] = ", which does not exist";
	const char *msg, *up, *end;

	if (!reply || reply->n < 1 || !schema_is_refusal(reply->r[reply->n - 1].err_no))
		return false;
	/* The server's text, without db_error's "error N: ". */
	msg = reply->r[reply->n - 1].err;
	if (!msg || strncmp(msg, "kyu: after of job ", 18) != 0)
		return false;
	up = strstr(msg, names);
	end = up ? strstr(up, tail) : NULL;
	if (up && end && end[sizeof(tail) - 1] == '\0') {
		up += sizeof(names) - 1;
		fprintf(stderr,
			"kyu: submit: not submitted: --after names job '%.*s', which does not exist\n",
			(int)(end - up), up);
	} else {
		fprintf(stderr, "kyu: submit: not submitted: %s\n", msg + 5);
	}
	return true;
}

/* A duplicate of a unique key held by a job that has not ended
 * (kyu_jobs_unique_key): one line naming the key and that job, true;
 * false for another error. The holder is looked up in a round trip of its
 * own (it may have ended meanwhile). */
static bool submit_unique_taken(struct db *db, const char *key)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r;

	if (!key || db_error_code(db) != ER_DUP_ENTRY ||
	    !strstr(db_error(db), "kyu_jobs_unique_key"))
		return false;
	sb_adds(&sb, "SELECT id, status FROM kyu_jobs WHERE unique_live = ");
	db_quotes(&sb, key);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 &&
	    reply->r[0].n_rows > 0) {
		r = &reply->r[0];
		fprintf(stderr,
			"kyu: submit: not submitted: unique key '%s' is held by job '%s' (%s), "
			"which has not ended\n",
			key, db_cell(r, 0, 0), db_cell(r, 0, 1) ? db_cell(r, 0, 1) : "?");
	} else {
		fprintf(stderr,
			"kyu: submit: not submitted: unique key '%s' is held by a job that had not "
			"ended (%s)\n",
			key, db_error(db));
	}
	sb_free(&sb);
	return true;
}

/* A refusal of a trigger of sql/schema.sql other than the two above
 * (SQLSTATE KYU03 to KYU06: traceparent, argv, env, status): its message,
 * which names the column and value, after "kyu: submit: not submitted: ";
 * true. */
static bool submit_signal_refused(const struct db_reply *reply)
{
	const char *msg;

	if (!reply || reply->n < 1 || !schema_is_refusal(reply->r[reply->n - 1].err_no))
		return false;
	msg = reply->r[reply->n - 1].err;
	if (!msg || strncmp(msg, "kyu: ", 5) != 0)
		return false;
	fprintf(stderr, "kyu: submit: not submitted: %s\n", msg + 5);
	return true;
}

int cmd_submit(struct db *db, const struct kyu_config *cfg, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "after", required_argument, NULL, OPT_AFTER },
		{ "after-policy", required_argument, NULL, OPT_AFTER_POLICY },
		{ "batch", required_argument, NULL, OPT_BATCH },
		{ "after-batch", required_argument, NULL, OPT_AFTER_BATCH },
		{ "unique", required_argument, NULL, OPT_UNIQUE },
		{ "traceparent", required_argument, NULL, OPT_TRACEPARENT },
		{ NULL, 0, NULL, 0 },
	};
	const char *id = NULL, *queue = "default", *shell = NULL, *cwd = NULL, *key = NULL;
	const char *policy = NULL, *batch = NULL, *after_batch = NULL, *unique = NULL,
		   *traceparent = NULL;
	int64_t prio = 0, delay = 0, max_attempts = 0, time_limit = -1;
	json_t *env = json_object(), *after = json_array();
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	char *json;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+i:q:p:d:m:t:C:e:s:k:", longs, NULL)) != -1) {
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
				fprintf(stderr,
					"kyu: submit: -q: the queue name must not be empty\n");
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case 's':
			shell = optarg;
			break;
		case 'C':
			cwd = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		case 'p':
			bad = parse_i64(optarg, INT32_MIN, INT32_MAX, &prio);
			break;
		case 'd':
			bad = parse_i64(optarg, 0, 315360000, &delay);
			break;
		case 'm':
			bad = parse_i64(optarg, 1, 1000000, &max_attempts);
			break;
		case 't':
			bad = parse_i64(optarg, 0, 31536000, &time_limit);
			break;
		case 'e':
			if (cli_env_add(env, optarg, "submit") < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_AFTER: {
			/* The column is JSON: an id that is not UTF-8 could
			 * never name a job. */
			json_t *up = *optarg ? json_string(optarg) : NULL;
			if (!up || json_array_append_new(after, up) < 0) {
				fprintf(stderr,
					"kyu: submit: --after: '%s' is not a job id (empty or not "
					"valid UTF-8)\n",
					optarg);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		}
		case OPT_AFTER_POLICY:
			policy = optarg;
			if (strcmp(policy, "succeeded") != 0 && strcmp(policy, "finished") != 0) {
				fprintf(stderr,
					"kyu: submit: --after-policy: no policy '%s'; succeeded (run "
					"once every upstream succeeded) or finished (once each ended)\n",
					policy);
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		case OPT_BATCH:
		case OPT_AFTER_BATCH:
			if (submit_label(c == OPT_BATCH ? "batch" : "after-batch", optarg) < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			*(c == OPT_BATCH ? &batch : &after_batch) = optarg;
			break;
		case OPT_UNIQUE:
			if (!*optarg) {
				fprintf(stderr,
					"kyu: submit: --unique: the key must not be empty\n");
				rc = EXIT_USAGE;
				goto out;
			}
			unique = optarg;
			break;
		case OPT_TRACEPARENT:
			/* Checked by the server (kyu_jobs(7), "Trace context"),
			 * whose message names the value. */
			traceparent = optarg;
			break;
		default:
			fprintf(stderr, "kyu: submit: see kyu submit --help\n");
			rc = EXIT_USAGE;
			goto out;
		}
		if (bad) {
			fprintf(stderr, "kyu: submit: -%c: '%s' is not a whole number from %s\n", c,
				optarg,
				c == 'p'   ? "-2147483648 to 2147483647"
				: c == 'd' ? "0 to 315360000 (seconds)"
				: c == 'm' ? "1 to 1000000"
					   : "0 to 31536000 (seconds)");
			rc = EXIT_USAGE;
			goto out;
		}
	}
	/* A policy for no upstream is a mistake the server would keep quiet. */
	if (policy && !json_array_size(after) && !after_batch) {
		fprintf(stderr,
			"kyu: submit: --after-policy %s: the job runs after nothing (give --after "
			"or --after-batch)\n",
			policy);
		rc = EXIT_USAGE;
		goto out;
	}
	if (!shell == (optind >= argc)) {
		fprintf(stderr,
			"kyu: submit: give either -s 'SHELL LINE' or -- PROGRAM [ARG]...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (!db) {
		rc = 0; /* the options checked, before connecting */
		goto out;
	}
	/* The workflow columns only when given: a submit without them works
	 * on a schema from before them. */
	sb_adds(&sb, "INSERT INTO kyu_jobs (id, queue, priority, run_at, command, argv, env, cwd, "
		     "max_attempts, time_limit, concurrency_key");
	if (json_array_size(after))
		sb_adds(&sb, ", after");
	if (policy)
		sb_adds(&sb, ", after_policy");
	if (batch)
		sb_adds(&sb, ", batch");
	if (after_batch)
		sb_adds(&sb, ", after_batch");
	if (unique)
		sb_adds(&sb, ", unique_key");
	if (traceparent)
		sb_adds(&sb, ", traceparent");
	sb_adds(&sb, ") VALUES (");
	if (id)
		db_quotes(&sb, id);
	else
		sb_adds(&sb, "UUID()");
	sb_adds(&sb, ", ");
	db_quotes(&sb, queue);
	sb_printf(&sb, ", %lld, NOW(6) + INTERVAL %lld SECOND, ", (long long)prio,
		  (long long)delay);
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
	if (json_array_size(after)) {
		json = json_dumps(after, JSON_COMPACT);
		sb_adds(&sb, ", ");
		db_quotes(&sb, json);
		free(json);
	}
	if (policy) {
		sb_adds(&sb, ", ");
		db_quotes(&sb, policy);
	}
	if (batch) {
		sb_adds(&sb, ", ");
		db_quotes(&sb, batch);
	}
	if (after_batch) {
		sb_adds(&sb, ", ");
		db_quotes(&sb, after_batch);
	}
	if (unique) {
		sb_adds(&sb, ", ");
		db_quotes(&sb, unique);
	}
	if (traceparent) {
		sb_adds(&sb, ", ");
		db_quotes(&sb, traceparent);
	}
	sb_adds(&sb, ")");
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		/* The intake bound's trigger (sql/schema.sql) signals SQLSTATE
		 * KYU01, error 31001 (1644 before schema version 7); the
		 * message names the queue and the bound. */
		unsigned e = reply && reply->n > 0 ? reply->r[reply->n - 1].err_no : 0;

		if (e == SCHEMA_ERR_QUEUE_FULL ||
		    (e == ER_SIGNAL_EXCEPTION && strstr(db_error(db), "kyu: queue "))) {
			fprintf(stderr, "kyu: submit: not submitted, the queue is full: %s\n",
				db_error(db));
			rc = EXIT_QUEUE_FULL;
			goto out;
		}
		if (submit_after_refused(reply) || submit_signal_refused(reply) ||
		    submit_unique_taken(db, unique))
			goto out;
		if (db_error_code(db) == ER_BAD_FIELD_ERROR && (unique || traceparent))
			fprintf(stderr,
				"kyu: submit: --unique and --traceparent need schema version 6 "
				"(kyu schema status; kyu schema upgrade): %s\n",
				db_error(db));
		else if (db_error_code(db) == ER_BAD_FIELD_ERROR &&
			 (json_array_size(after) || policy || batch || after_batch))
			fprintf(stderr,
				"kyu: submit: --after, --after-policy, --batch and --after-batch "
				"need schema version 5 (kyu schema status; kyu schema upgrade): %s\n",
				db_error(db));
		else
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
	cli_warn_unserved(db, queue, "submit");
	rc = 0;
out:
	json_decref(env);
	json_decref(after);
	sb_free(&sb);
	return rc;
}

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
				fprintf(stderr,
					"kyu: list: -q: the queue name must not be empty\n");
				return EXIT_USAGE;
			}
			break;
		case 's':
			status = optarg;
			for (c = 0; cli_statuses[c] && strcmp(status, cli_statuses[c]) != 0; c++)
				;
			if (!cli_statuses[c]) {
				fprintf(stderr,
					"kyu: list: -s: no status '%s'; one of waiting, running, "
					"succeeded, failed, cancelled, blocked, retrying\n",
					status);
				return EXIT_USAGE;
			}
			break;
		case 'n':
			if (parse_i64(optarg, 1, 1000000, &limit) < 0) {
				fprintf(stderr,
					"kyu: list: -n: '%s' is not a whole number from 1 to 1000000\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
		case 'U':
			if (!list_time_ok(optarg)) {
				fprintf(stderr,
					"kyu: list: --%s: '%s' is not a time (YYYY-MM-DD [hh:mm[:ss]], "
					"the database's time zone)\n",
					c == 'S' ? "since" : "until", optarg);
				return EXIT_USAGE;
			}
			*(c == 'S' ? &since : &until) = optarg;
			break;
		case 'x':
			if (parse_i64(optarg, 1, INT64_MAX, &examined) < 0) {
				fprintf(stderr,
					"kyu: list: --scan: '%s' is not a whole number of rows\n",
					optarg);
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
		fprintf(stderr, "kyu: list: unexpected argument '%s' (kyu list --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	if (!db)
		return 0; /* the arguments checked, before connecting */
	/* exit_code: a killed job's signal where its exit code is NULL; the
	 * start of error, the cause that an operator looks for first. */
	sb_adds(&sb,
		"SELECT id, queue, status, attempts, "
		"IF(`signal` IS NULL, exit_code, CONCAT('signal ', `signal`)) AS exit_code, " CLI_TIME(
			"run_at") ", " CLI_TIME("finished_at") ", LEFT(error, 60) AS error, LEFT(COALESCE(command, argv), 60) AS what "
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
			fprintf(stderr,
				"kyu: list: stopped after examining %lld rows, the newest; "
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
				fprintf(stderr,
					"kyu: list: more than the %lld jobs shown (-n N shows more)\n",
					(long long)limit);
		}
		rc = 0;
	}
	sb_free(&sb);
	return rc;
}

/* After a cancel, retry or delete: the dependents of the job move on now
 * (ACTION_SETTLE_SQL, a round trip of its own), and every daemon hears of
 * it, since what was freed may be due in any queue and the job a retry
 * made waiting is due at once. A failure changes nothing that was done:
 * kyud settles the same items at its next claim. */
static void job_action_settle(struct db *db, const struct kyu_config *cfg, enum action a,
			      const char *id)
{
	static const char settle[] = ACTION_SETTLE_SQL;
	const struct db_reply *reply;

	/* A schema from before workflows has no procedure, and no dependents
	 * to move. */
	if (db_query(db, settle, sizeof(settle) - 1, &reply) != DB_OK &&
	    db_error_code(db) != ER_SP_DOES_NOT_EXIST)
		fprintf(stderr,
			"kyu: note: the jobs that wait for '%s' move on at kyud's next "
			"claim, not now (%s: %s)\n",
			id, settle, db_error(db));
	cli_send_wake(db, cfg, action_wake_queue(a, id), true);
}

/* cancel, retry, run-now, delete: one statement on the job's row
 * (common/action.h), which changes nothing unless the job has a status the
 * action applies to. */
int cmd_job_action(struct db *db, const struct kyu_config *cfg, enum action a, const char *id)
{
	struct strbuf sb = { 0 }, shown = { 0 }, why_shown = { 0 };
	const struct db_reply *reply;
	char why[1024];
	int rc = 1;

	/* The id was typed, but the unique key in why comes from a row:
	 * neither reaches the terminal raw (escape sequences). */
	sb_adds(&shown, "");
	text_escape(&shown, id, strlen(id), ESCAPE_TERMINAL);
	action_sql(&sb, a, id);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		if (action_unique_taken(db, a, id, why, sizeof(why))) {
			sb_adds(&why_shown, "");
			text_escape(&why_shown, why, strlen(why), ESCAPE_TERMINAL);
			fprintf(stderr, "kyu: %s: %s\n", action_name(a), why_shown.buf);
		} else {
			cli_die_db(db, action_name(a));
		}
	} else if (reply->n < 1 || reply->r[0].affected == 0) {
		fprintf(stderr, "kyu: %s: no %s job with id '%s'\n", action_name(a),
			action_needs(a), shown.buf);
	} else {
		printf("%s %s\n", action_done(a), shown.buf);
		/* Seen before the settle's note, if any. */
		fflush(stdout);
		if (a == ACT_CANCEL || a == ACT_RETRY || a == ACT_DELETE)
			job_action_settle(db, cfg, a, id);
		else
			cli_send_wake(db, cfg, action_wake_queue(a, id), true);
		rc = 0;
	}
	sb_free(&sb);
	sb_free(&shown);
	sb_free(&why_shown);
	return rc;
}

/* Jobs by queue and status, as a table or as a JSON array of objects
 * (queue, status, jobs as a number, oldest_run_at as the server prints
 * it, in the session's time zone). */
int cmd_stats(struct db *db, bool as_json)
{
	static const char q[] =
		"SELECT queue, status, COUNT(*) AS jobs, MIN(run_at) AS oldest_run_at "
		"FROM kyu_jobs GROUP BY queue, status ORDER BY queue, status";
	/* The table's time with its zone (cli.h); the JSON's as the server
	 * prints it, for programs. */
	static const char table[] = "SELECT queue, status, jobs, " CLI_TIME(
		"oldest_run_at") " FROM ("
				 "SELECT queue, status, COUNT(*) AS jobs, MIN(run_at) AS oldest_run_at "
				 "FROM kyu_jobs GROUP BY queue, status) AS s ORDER BY queue, status";
	const struct db_reply *reply;
	const struct db_result *r;
	json_t *rows;
	char *text;

	if (!as_json)
		return cli_print_query(db, table, sizeof(table) - 1, false) < 0
			       ? cli_die_db(db, "stats")
			       : 0;
	if (db_query(db, q, sizeof(q) - 1, &reply) != DB_OK || reply->n < 1)
		return cli_die_db(db, "stats");
	r = &reply->r[0];
	rows = json_array();
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *at = db_cell(r, i, 3);
		json_array_append_new(
			rows,
			json_pack("{s:s?, s:s?, s:I, s:o}", "queue", db_cell(r, i, 0), "status",
				  db_cell(r, i, 1), "jobs",
				  (json_int_t)strtoll(db_cell(r, i, 2) ? db_cell(r, i, 2) : "0",
						      NULL, 10),
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
