/* kyu schedules, kyu schedule add|enable|disable|run-now|remove. See
 * cmd_schedule.h. */
#include "cmd_schedule.h"

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "common/action.h"
#include "common/cron.h"
#include "common/tz.h"
#include "common/util.h"
#include "cli.h"

#define NAME_MAX_CHARS 200

int cmd_schedules(struct db *db)
{
	static const char q[] =
		"SELECT name, IF(enabled, 'yes', 'no') AS enabled, cron, timezone, queue, "
		"IFNULL(" CLI_UTC_TIME(
			"next_run") ", '-') AS next_run, "
				    "IFNULL(" CLI_UTC_TIME(
					    "last_run") ", '-') AS last_run, "
							"missed, overlap, IFNULL(error, '-') AS error FROM kyu_schedules ORDER BY name";

	return cli_print_query(db, q, sizeof(q) - 1, false) < 0 ? cli_die_db(db, "schedules") : 0;
}

/* The expression, zone and name as kyud will read them; the first instant
 * after the database's now goes into first. */
static int check_row(struct db *db, const char *name, const char *expr, const char *zone,
		     int64_t *first)
{
	static const char q[] = "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', UTC_TIMESTAMP())";
	const struct db_reply *reply;
	struct cron c;
	struct tz *z = NULL;
	char err[512];
	int rc = -1;

	if (!*name || strlen(name) > (size_t)NAME_MAX_CHARS * 4) {
		fprintf(stderr, "kyu: schedule add: the name must be 1 to %d characters\n",
			NAME_MAX_CHARS);
		return -1;
	}
	if (cron_parse(&c, expr, err, sizeof(err)) < 0 || cron_check(&c, err, sizeof(err)) < 0 ||
	    tz_open(&z, zone, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyu: schedule add: %s\n", err);
		goto out;
	}
	if (db_query(db, q, sizeof(q) - 1, &reply) != DB_OK || reply->n < 1 ||
	    reply->r[0].n_rows < 1) {
		cli_die_db(db, "schedule add: reading the database clock");
		goto out;
	}
	if (cron_next(&c, z, strtoll(db_cell(&reply->r[0], 0, 0), NULL, 10), first, err,
		      sizeof(err)) < 0) {
		fprintf(stderr, "kyu: schedule add: %s\n", err);
		goto out;
	}
	rc = 0;
out:
	tz_free(z);
	return rc;
}

/* The first instant as kyu prints times (cli.h): in the session's zone;
 * in UTC if the server cannot say. */
static void first_run_text(struct db *db, int64_t first, char *buf, size_t size)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	time_t t = (time_t)first;
	struct tm tm;

	sb_printf(&sb, "SELECT CONCAT(FROM_UNIXTIME(%" PRId64 "), ' ', " CLI_ZONE ")", first);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 &&
	    reply->r[0].n_rows > 0 && db_cell(&reply->r[0], 0, 0)) {
		snprintf(buf, size, "%s", db_cell(&reply->r[0], 0, 0));
	} else {
		gmtime_r(&t, &tm);
		strftime(buf, size, "%Y-%m-%d %H:%M:%S UTC", &tm);
	}
	sb_free(&sb);
}

static bool one_of(const char *v, const char *const *allowed)
{
	for (; *allowed; allowed++)
		if (strcmp(v, *allowed) == 0)
			return true;
	return false;
}

static int schedule_add(struct db *db, const struct kyu_config *cfg, int argc, char **argv)
{
	static const char *const missed_values[] = { "skip", "once", "all", NULL };
	static const char *const overlap_values[] = { "allow", "skip", "queue", NULL };
	const char *zone = "UTC", *queue = "default", *shell = NULL, *cwd = NULL, *key = NULL;
	const char *missed = "once", *overlap = "allow", *name, *expr;
	int64_t prio = 0, max_attempts = 0, time_limit = -1, grace = 60, first;
	bool disabled = false;
	json_t *env = json_object();
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	char *json = NULL, when[128];
	int c, rc = 1;

	/* Options may follow NAME and the expression (GNU getopt permutes);
	 * everything after "--" is the program. 0, not 1: glibc then forgets
	 * the "+" (stop at the first operand) of main's own option parsing. */
	optind = 0;
	while ((c = getopt(argc, argv, "z:q:p:m:t:C:e:s:k:M:O:g:n")) != -1) {
		int bad = 0;
		switch (c) {
		case 'z':
			zone = optarg;
			break;
		case 'q':
			queue = optarg;
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
		case 'n':
			disabled = true;
			break;
		case 'M':
			missed = optarg;
			bad = !one_of(missed, missed_values);
			break;
		case 'O':
			overlap = optarg;
			bad = !one_of(overlap, overlap_values);
			break;
		case 'p':
			bad = parse_i64(optarg, INT32_MIN, INT32_MAX, &prio);
			break;
		case 'm':
			bad = parse_i64(optarg, 1, 1000000, &max_attempts);
			break;
		case 't':
			bad = parse_i64(optarg, 0, 31536000, &time_limit);
			break;
		case 'g':
			bad = parse_i64(optarg, 1, 31536000, &grace);
			break;
		case 'e':
			if (cli_env_add(env, optarg, "schedule add") < 0) {
				rc = EXIT_USAGE;
				goto out;
			}
			break;
		default:
			fprintf(stderr, "kyu: schedule add: see kyu schedule --help\n");
			rc = EXIT_USAGE;
			goto out;
		}
		if (bad) {
			fprintf(stderr, "kyu: schedule add: -%c: bad value '%s' (%s)\n", c, optarg,
				c == 'M'   ? "skip, once or all"
				: c == 'O' ? "allow, skip or queue"
				: c == 'p' ? "a whole number from -2147483648 to 2147483647"
				: c == 'm' ? "a whole number from 1 to 1000000"
				: c == 't' ? "seconds, from 0 to 31536000"
					   : "seconds, from 1 to 31536000");
			rc = EXIT_USAGE;
			goto out;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "kyu: schedule add: give NAME and 'CRON EXPRESSION'\n");
		rc = EXIT_USAGE;
		goto out;
	}
	name = argv[optind++];
	expr = argv[optind++];
	if (!shell == (optind >= argc)) {
		fprintf(stderr,
			"kyu: schedule add: give either -s 'SHELL LINE' or -- PROGRAM [ARG]...\n");
		rc = EXIT_USAGE;
		goto out;
	}
	if (check_row(db, name, expr, zone, &first) < 0)
		goto out;
	if (!shell && !(json = cli_argv_json(argc - optind, argv + optind, "schedule add")))
		goto out;

	sb_adds(&sb, "INSERT INTO kyu_schedules (name, cron, timezone, queue, command, argv, env, "
		     "cwd, priority, max_attempts, time_limit, concurrency_key, missed, overlap, "
		     "grace, enabled) VALUES (");
	db_quotes(&sb, name);
	sb_adds(&sb, ", ");
	db_quotes(&sb, expr);
	sb_adds(&sb, ", ");
	db_quotes(&sb, zone);
	sb_adds(&sb, ", ");
	db_quotes(&sb, queue);
	sb_adds(&sb, ", ");
	db_quotes(&sb, shell);
	sb_adds(&sb, ", ");
	db_quotes(&sb, json);
	sb_adds(&sb, ", ");
	free(json);
	json = json_object_size(env) ? json_dumps(env, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	db_quotes(&sb, json);
	sb_adds(&sb, ", ");
	db_quotes(&sb, cwd);
	sb_printf(&sb, ", %lld, ", (long long)prio);
	if (max_attempts)
		sb_printf(&sb, "%lld, ", (long long)max_attempts);
	else
		sb_adds(&sb, "NULL, ");
	if (time_limit >= 0)
		sb_printf(&sb, "%lld, ", (long long)time_limit);
	else
		sb_adds(&sb, "NULL, ");
	db_quotes(&sb, key);
	sb_printf(&sb, ", '%s', '%s', %lld, %d)", missed, overlap, (long long)grace, !disabled);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		if (reply && reply->n > 0 && reply->r[reply->n - 1].err_no == 1062)
			fprintf(stderr,
				"kyu: schedule add: a schedule named '%s' exists (change it with UPDATE "
				"kyu_schedules, or kyu schedule remove it first)\n",
				name);
		else
			cli_die_db(db, "schedule add");
		goto out;
	}
	first_run_text(db, first, when, sizeof(when));
	printf("schedule %s: added%s; first run %s\n", name, disabled ? " (disabled)" : "", when);
	/* kyud reads kyu_schedules again at an "any queue" wake-up. */
	cli_send_wake(db, cfg, "", true);
	rc = 0;
out:
	free(json);
	json_decref(env);
	sb_free(&sb);
	return rc;
}

/* 1 when the schedule exists, 0 when not, -1 on error. */
static int exists(struct db *db, const char *name)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	int r = -1;

	sb_adds(&sb, "SELECT COUNT(*) FROM kyu_schedules WHERE name = ");
	db_quotes(&sb, name);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 && reply->r[0].n_rows > 0)
		r = strcmp(db_cell(&reply->r[0], 0, 0), "0") != 0;
	else
		cli_die_db(db, "schedule");
	sb_free(&sb);
	return r;
}

static int schedule_change(struct db *db, const struct kyu_config *cfg, const char *what,
			   const char *name)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	enum action_schedule a;
	int rc = 1, e = exists(db, name);

	if (e <= 0) {
		if (e == 0)
			fprintf(stderr, "kyu: schedule %s: no schedule named '%s'\n", what, name);
		return 1;
	}
	if (action_schedule_parse(what, &a) < 0)
		goto out;
	action_schedule_sql(&sb, a, name); /* common/action.c, as the dashboard's */
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		cli_die_db(db, "schedule");
		goto out;
	}
	if (a == ACT_SCHED_RUN_NOW) {
		const char *q = "SELECT id, queue FROM kyu_jobs WHERE seq = LAST_INSERT_ID()";
		if (db_query(db, q, strlen(q), &reply) != DB_OK || reply->n < 1 ||
		    reply->r[0].n_rows < 1) {
			cli_die_db(db, "schedule run-now: reading the job's id");
			goto out;
		}
		printf("%s\n", db_cell(&reply->r[0], 0, 0));
		cli_send_wake(db, cfg, db_cell(&reply->r[0], 0, 1), true);
	} else {
		printf("schedule %s: %s\n", name, action_schedule_done(a));
		cli_send_wake(db, cfg, "", true);
	}
	rc = 0;
out:
	sb_free(&sb);
	return rc;
}

int cmd_schedule(struct db *db, const struct kyu_config *cfg, int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "add") == 0)
		return schedule_add(db, cfg, argc - 1, argv + 1);
	if (argc == 3 && (strcmp(argv[1], "enable") == 0 || strcmp(argv[1], "disable") == 0 ||
			  strcmp(argv[1], "run-now") == 0 || strcmp(argv[1], "remove") == 0))
		return schedule_change(db, cfg, argv[1], argv[2]);
	fprintf(stderr,
		"kyu: schedule: expected add, enable, disable, run-now or remove (kyu --help)\n");
	return EXIT_USAGE;
}
