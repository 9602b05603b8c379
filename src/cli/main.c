/* kyu: a convenience over the SQL interface of kyu_jobs. Everything it
 * does is one plain statement that a user could type instead. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <jansson.h>

#include "common/action.h"
#include "common/config.h"
#include "common/db.h"
#include "common/lock.h"
#include "common/registry.h"
#include "common/text.h"
#include "common/util.h"
#include "common/wake.h"
#include "cli.h"

/* kyu reads the client file: a database account that may submit and
 * inspect, not kyud's. kyud's own file, readable by root and kyud only, is
 * the fallback for root on a host without a client file. */
#define CLIENT_CONFIG "/etc/kyu/client.ini"
#define DAEMON_CONFIG "/etc/kyu/kyu.ini"
/* kyu submit's status when the queue is full (kyu_queues.max_waiting):
 * EX_TEMPFAIL, "try again later". */
#define EXIT_QUEUE_FULL 75

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kyu [-c FILE] [--raw] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  submit [OPTIONS] -s 'SHELL LINE'    enqueue a shell command\n"
		"  submit [OPTIONS] -- PROGRAM [ARG]...  enqueue a program run without a shell\n"
		"      -i ID  -q QUEUE  -p PRIORITY  -d DELAY_S  -m MAX_ATTEMPTS  -t TIME_LIMIT_S\n"
		"      -C DIR  -e NAME=VALUE (repeatable)  -k CONCURRENCY_KEY\n"
		"      exits 75 when the queue is full (kyu_queues.max_waiting)\n"
		"  show ID                             print every column of one job\n"
		"  list [-q QUEUE] [-s STATUS] [-n N]  list jobs, newest first (default 20);\n"
		"      STATUS: waiting, running, succeeded, failed, cancelled or retrying\n"
		"  cancel ID                           cancel a waiting or running job\n"
		"  retry ID                            run a failed or cancelled job again\n"
		"  run-now ID                          make a waiting job due later due now\n"
		"  delete ID                           delete a finished job's row\n"
		"  wake [QUEUE]                        send a wake-up datagram to every live kyud\n"
		"                                      serving QUEUE (kyu_daemons; else [kyud] listen)\n"
		"  daemons                             list the daemons of kyu_daemons: host, pid,\n"
		"                                      wake-up address, queues, last seen, live\n"
		"  stats [--json]                      count jobs per queue and status\n"
		"  queues                              each queue: counts and settings\n"
		"  pause QUEUE | resume QUEUE          stop or restart a queue's new starts\n"
		"      (QUEUE must have jobs or settings; --create first: make its settings anyway)\n"
		"  limit QUEUE N|none                  at most N of its jobs running at once\n"
		"      (QUEUE as for pause, and --create too)\n"
		"  queue-reset QUEUE                   remove a queue's settings (kyu_queues row)\n"
		"  schedules                           each schedule: expression, next and last run\n"
		"  schedule add [OPTIONS] NAME 'CRON' -s 'SHELL LINE' | -- PROGRAM [ARG]...\n"
		"      -z TIMEZONE (IANA, default UTC)  -M MISSED (skip|once|all, default once)\n"
		"      -O OVERLAP (allow|skip|queue, default allow)  -g GRACE_S  -n (disabled)\n"
		"      and submit's -q -p -m -t -C -e -k\n"
		"  schedule enable|disable|run-now|remove NAME\n"
		"  lock NAME [--ttl S] [--wait S] [--slots N] -- COMMAND [ARG]...\n"
		"                                      run COMMAND holding a cluster-wide lock\n"
		"      (exits 75: not obtained within --wait; 70: lease lost; else COMMAND's status)\n"
		"  locks [NAME]                        list the locks: holder, lease left\n"
		"  schema status                       the database's schema version and this kyu's\n"
		"  schema upgrade [-u USER] [-w S]     apply the missing upgrade steps (as USER;\n"
		"                                      -w: seconds to wait for a table lock, 5)\n"
		"  web [--listen ADDR] [--read-only]   serve the dashboard (kyu-web; [web] section)\n"
		"  check                               check kyud's configuration, connection,\n"
		"                                      privileges, schema version, listen address\n"
		"                                      (default file %s); one line per problem\n"
		"\n"
		"  -c FILE   configuration (default $KYU_CONFIG, else %s if it exists,\n"
		"            else %s); uses [database] and [kyud] listen\n"
		"  --raw     print values (show, list, queues, locks, ...) as stored; by default\n"
		"            tabs, newlines and backslashes in a value print as \\t \\n \\\\, and\n"
		"            on a terminal also other control characters (\\e, \\xNN) and bytes\n"
		"            that are not UTF-8 (\\xNN)\n"
		"  -h, --help  show this help (after COMMAND: its lines);  -V, --version  show the version\n",
		DAEMON_CONFIG, CLIENT_CONFIG, DAEMON_CONFIG);
}

/* The lines of usage() about COMMAND (its own lines and the indented ones
 * under them), to out (NULL: none); how many. */
static int usage_of(const char *cmd, FILE *out)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, n = strlen(cmd);
	bool in = false;
	int found = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		return 0;
	usage(f);
	fclose(f);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "  ", 2) == 0 && line[2] != ' ') {
			/* A command's line: "  CMD ...", or "  A ... | CMD ...". */
			const char *p = line + 2;
			in = false;
			while (p && !in) {
				in = strncmp(p, cmd, n) == 0 && (p[n] == ' ' || p[n] == '\0');
				p = strstr(p, " | ");
				p = p && p < line + 38 ? p + 3 : NULL;
			}
		} else if (strncmp(line, "    ", 4) != 0) {
			in = false;
		}
		if (in && out)
			fprintf(out, "%s%s\n", found ? "" : "usage: kyu [-c FILE] [--raw] COMMAND [ARGS]; for this command:\n",
				line);
		found += in;
	}
	free(text);
	if (found && out)
		fprintf(out, "See kyu(1) for more.\n");
	return found;
}

/* kyu COMMAND --help: its usage on stdout, 0; EXIT_USAGE for a command
 * that does not exist. */
static int cmd_help(const char *cmd)
{
	if (usage_of(cmd, NULL) == 0) {
		fprintf(stderr, "kyu: unknown command: %s (kyu --help lists them)\n", cmd);
		return EXIT_USAGE;
	}
	usage_of(cmd, stdout);
	return 0;
}

/* Whether cmd takes argc words (itself included): checked before the
 * configuration is read, so that a usage error says so whatever the
 * database does. Commands that parse options check their own. */
static bool arity_ok(const char *cmd, int argc, char **argv, int create)
{
	enum action a;

	if (strcmp(cmd, "daemons") == 0 || strcmp(cmd, "queues") == 0 || strcmp(cmd, "schedules") == 0)
		return argc == 1;
	if (strcmp(cmd, "wake") == 0 || strcmp(cmd, "locks") == 0)
		return argc <= 2;
	if (strcmp(cmd, "stats") == 0)
		return argc == 1 || (argc == 2 && strcmp(argv[1], "--json") == 0);
	if (strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0)
		return argc == 2 + create;
	if (strcmp(cmd, "limit") == 0)
		return argc == 3 + create;
	if (strcmp(cmd, "show") == 0 || strcmp(cmd, "queue-reset") == 0 ||
	    (action_parse(cmd, &a) == 0 && !action_on_queue(a)))
		return argc == 2;
	return true;
}

static bool is_help(const char *arg)
{
	return arg && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0);
}

int cli_env_add(json_t *env, char *arg, const char *cmd)
{
	char *eq = arg ? strchr(arg, '=') : NULL;
	int r;

	if (!eq || eq == arg) {
		fprintf(stderr, "kyu: %s: -e expects NAME=VALUE, got '%s'\n", cmd, arg);
		return -1;
	}
	*eq = '\0';
	/* JSON (and so the env column) holds UTF-8 only: refuse what cannot
	 * be stored as given rather than drop it. */
	r = json_object_set_new(env, arg, json_string(eq + 1));
	*eq = '=';
	if (r < 0)
		fprintf(stderr, "kyu: %s: -e '%s': name and value must be valid UTF-8\n", cmd, arg);
	return r < 0 ? -1 : 0;
}

char *cli_argv_json(int argc, char **argv, const char *cmd)
{
	json_t *args = json_array();
	char *json = NULL;

	for (int i = 0; i < argc; i++) {
		json_t *a = json_string(argv[i]);
		/* A dropped argument would run a different command. */
		if (!a || json_array_append_new(args, a) < 0) {
			fprintf(stderr,
				"kyu: %s: argument %d is not valid UTF-8; the argv column is JSON and "
				"holds UTF-8 only (nothing was changed)\n",
				cmd, i);
			goto out;
		}
	}
	json = json_dumps(args, JSON_COMPACT);
out:
	json_decref(args);
	return json;
}

int die_db(struct db *db, const char *what)
{
	fprintf(stderr, "kyu: %s: %s\n", what, db_error(db));
	return 1;
}

/* How print_query writes values (set by main): ids, commands, errors and
 * output come from rows anyone who may submit can write. */
static bool out_raw;                    /* --raw: the bytes as stored */
static enum escape out_escape = ESCAPE_FIELD;

/* Run a statement and print its result set as tab-separated rows, or one
 * "column: value" line per column. Unless --raw, a value never spans
 * lines or fields, and on a terminal no control character or byte that
 * is not UTF-8 reaches it (text.h). */
int print_query(struct db *db, const char *sql, size_t len, bool vertical)
{
	const struct db_reply *reply;
	const struct db_result *r;
	struct strbuf sb = { 0 };

	if (db_query(db, sql, len, &reply) != DB_OK)
		return -1;
	if (reply->n < 1)
		return 0;
	r = &reply->r[0];
	if (!vertical) {
		for (unsigned i = 0; i < r->n_cols; i++)
			printf("%s%s", i ? "\t" : "", r->names[i]);
		printf("\n");
	}
	for (size_t row = 0; row < r->n_rows; row++) {
		for (unsigned i = 0; i < r->n_cols; i++) {
			const char *v = db_cell(r, row, i);
			size_t len_v = v ? r->lens[row * r->n_cols + i] : 4;

			sb_reset(&sb);
			if (!v)
				sb_adds(&sb, "NULL");
			else if (out_raw)
				sb_add(&sb, v, len_v);
			else
				text_escape(&sb, v, len_v, out_escape);
			if (vertical)
				printf("%12s: ", r->names[i]);
			else if (i)
				putchar('\t');
			fwrite(sb.buf, 1, sb.len, stdout);
			if (vertical)
				putchar('\n');
		}
		if (!vertical)
			printf("\n");
	}
	sb_free(&sb);
	return (int)r->n_rows;
}

/* Jobs by queue and status, as a table or as a JSON array of objects
 * (queue, status, jobs as a number, oldest_run_at as the server prints
 * it, in the session's time zone). */
static int cmd_stats(struct db *db, bool as_json)
{
	static const char q[] = "SELECT queue, status, COUNT(*) AS jobs, MIN(run_at) AS oldest_run_at "
				"FROM kyu_jobs GROUP BY queue, status ORDER BY queue, status";
	const struct db_reply *reply;
	const struct db_result *r;
	json_t *rows;
	char *text;

	if (!as_json)
		return print_query(db, q, sizeof(q) - 1, false) < 0 ? die_db(db, "stats") : 0;
	if (db_query(db, q, sizeof(q) - 1, &reply) != DB_OK || reply->n < 1)
		return die_db(db, "stats");
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

/* Send "kyu:QUEUE" to one address; 0 or -1 (with a message unless quiet). */
static int wake_one(const char *addr, const char *msg, size_t n, bool quiet)
{
	char err[256];
	int fd, r;

	fd = wake_socket(addr, false, err, sizeof(err));
	if (fd < 0) {
		if (!quiet)
			fprintf(stderr, "kyu: wake: %s\n", err);
		return -1;
	}
	r = send(fd, msg, n, 0) == (ssize_t)n ? 0 : -1;
	if (r < 0 && !quiet)
		fprintf(stderr, "kyu: wake: send to %s: %s\n", addr, strerror(errno));
	close(fd);
	return r;
}

int send_wake(struct db *db, const struct kyu_config *cfg, const char *queue, bool quiet)
{
	char msg[sizeof(WAKE_PREFIX) + WAKE_QUEUE_MAX];
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r = NULL;
	int n, sent = 0, failed = 0;

	if (strlen(queue) > WAKE_QUEUE_MAX) {
		fprintf(stderr, "kyu: wake: queue name longer than %d bytes\n", WAKE_QUEUE_MAX);
		return -1;
	}
	/* Copied first: queue may point into a reply the query below replaces. */
	n = snprintf(msg, sizeof(msg), "%s%s", WAKE_PREFIX, queue);
	/* Every live daemon that serves the queue, as the triggers of
	 * sql/notify.sql pick them; "" (any queue) reaches them all. */
	if (*queue) {
		sb_adds(&sb, "SET @kyu_q = ");
		db_quotes(&sb, queue);
		sb_adds(&sb, "; ");
	}
	sb_adds(&sb, "SELECT DISTINCT d.wake_addr FROM kyu_daemons AS d WHERE d.wake_addr IS NOT NULL "
		     "AND " REGISTRY_LIVE("d"));
	if (*queue)
		sb_adds(&sb, " AND " REGISTRY_SERVES("d", "@kyu_q"));
	/* Without the table (an older schema), without the privilege to read
	 * it, or without a live row: the configured address, as before. */
	if (db && db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0)
		r = &reply->r[reply->n - 1];
	else if (db && !quiet)
		fprintf(stderr, "kyu: wake: cannot read kyu_daemons (%s); sending to [kyud] listen\n",
			db_error(db));
	for (size_t i = 0; r && i < r->n_rows; i++) {
		const char *addr = db_cell(r, i, 0);
		if (!addr)
			continue;
		if (wake_one(addr, msg, (size_t)n, quiet) == 0)
			sent++;
		else
			failed++;
	}
	sb_free(&sb);
	if (sent + failed > 0)
		return sent > 0 ? 0 : -1;
	if (!cfg->listen || !*cfg->listen) {
		if (!quiet)
			fprintf(stderr,
				"kyu: wake: no live daemon in kyu_daemons serves %s%s, and [kyud] listen is "
				"not set in %s\n",
				*queue ? "queue " : "any queue", queue, cfg->path);
		return -1;
	}
	return wake_one(cfg->listen, msg, (size_t)n, quiet);
}

/* The daemons of kyu_daemons, live or not (kyud(8), "Registry"). */
static int cmd_daemons(struct db *db)
{
	static const char q[] =
		"SELECT host, pid, IFNULL(wake_addr, '-') AS wake_addr, "
		"IF(queues = '', '*', queues) AS queues, version, started, last_seen, "
		"IF(" REGISTRY_LIVE("d") ", 'yes', 'no') AS live, id "
		"FROM kyu_daemons AS d ORDER BY host, pid, id";

	return print_query(db, q, sizeof(q) - 1, false) < 0 ? die_db(db, "daemons") : 0;
}

static int cmd_submit(struct db *db, const struct kyu_config *cfg, int argc, char **argv)
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
		die_db(db, "submit");
		goto out;
	}
	if (id) {
		printf("%s\n", id);
	} else {
		/* The id the server generated, printed the same way as a given one. */
		const char *q = "SELECT id FROM kyu_jobs WHERE seq = LAST_INSERT_ID()";
		if (db_query(db, q, strlen(q), &reply) != DB_OK || reply->n < 1) {
			die_db(db, "submit: reading the generated id");
			goto out;
		}
		if (reply->r[0].n_rows == 1 && db_cell(&reply->r[0], 0, 0))
			printf("%s\n", db_cell(&reply->r[0], 0, 0));
	}
	if (delay == 0)
		send_wake(db, cfg, queue, true);
	rc = 0;
out:
	json_decref(env);
	sb_free(&sb);
	return rc;
}

static int cmd_show(struct db *db, const char *id)
{
	struct strbuf sb = { 0 };
	int n;

	sb_adds(&sb, "SELECT seq, id, queue, status, priority, command, argv, env, cwd, run_at, "
		     "attempts, max_attempts, time_limit, exit_code, `signal`, error, started_at, "
		     "finished_at, duration, cpu_user, cpu_sys, max_rss, host, pid, owner, lease_until, "
		     "concurrency_key, created_at, updated_at, "
		     "output FROM kyu_jobs WHERE id = ");
	db_quotes(&sb, id);
	n = print_query(db, sb.buf, sb.len, true);
	sb_free(&sb);
	if (n < 0)
		return die_db(db, "show");
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

static int cmd_list(struct db *db, int argc, char **argv)
{
	const char *queue = NULL, *status = NULL;
	int64_t limit = 20;
	struct strbuf sb = { 0 };
	size_t mark;
	int c, rc = 1;

	optind = 1;
	while ((c = getopt(argc, argv, "q:s:n:")) != -1) {
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
		     "IF(`signal` IS NULL, exit_code, CONCAT('signal ', `signal`)) AS exit_code, run_at, "
		     "finished_at, LEFT(error, 60) AS error, LEFT(COALESCE(command, argv), 60) AS what "
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
	mark = sb.len;
	sb_printf(&sb, " ORDER BY seq DESC LIMIT %lld", (long long)limit);
	if (print_query(db, sb.buf, sb.len, false) < 0) {
		die_db(db, "list");
	} else {
		/* A full page may hide more: said on stderr (stdout stays the
		 * table), found by one more row past it on the same index. */
		const struct db_reply *reply;
		sb.len = mark;
		sb_printf(&sb, " ORDER BY seq DESC LIMIT 1 OFFSET %lld", (long long)limit);
		if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 &&
		    reply->r[reply->n - 1].n_rows > 0)
			fprintf(stderr, "kyu: list: more than the %lld jobs shown (-n N shows more)\n",
				(long long)limit);
		rc = 0;
	}
	sb_free(&sb);
	return rc;
}

/* cancel, retry, run-now, delete: one statement on the job's row
 * (common/action.h), which changes nothing unless the job has a status the
 * action applies to. */
static int cmd_job_action(struct db *db, enum action a, const char *id)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	int rc = 1;

	action_sql(&sb, a, id);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		die_db(db, action_name(a));
	} else if (reply->n < 1 || reply->r[0].affected == 0) {
		fprintf(stderr, "kyu: %s: no %s job with id '%s'\n", action_name(a), action_needs(a), id);
	} else {
		printf("%s %s\n", action_done(a), id);
		rc = 0;
	}
	sb_free(&sb);
	return rc;
}

static int cmd_queues(struct db *db)
{
	/* Every queue that has rows or settings. The counts read the
	 * (queue, status) index; the due count reads the rows it counts. */
	static const char q[] =
		"SELECT n.name AS queue, IFNULL(c.waiting, 0) AS waiting, IFNULL(c.due, 0) AS due, "
		"IFNULL(c.running, 0) AS running, IFNULL(c.failed, 0) AS failed, "
		"IFNULL(s.paused, 0) AS paused, IFNULL(s.max_running, '-') AS max_running, "
		"IFNULL(CONCAT(s.rate_limit, '/', s.rate_period, 's'), '-') AS rate, "
		"IFNULL(s.weight, 1) AS weight, IFNULL(s.max_waiting, '-') AS max_waiting "
		"FROM (SELECT DISTINCT queue AS name FROM kyu_jobs UNION SELECT name FROM kyu_queues) AS n "
		"LEFT JOIN (SELECT queue, SUM(status = 'waiting') AS waiting, "
		"SUM(status = 'waiting' AND run_at <= NOW(6)) AS due, SUM(status = 'running') AS running, "
		"SUM(status = 'failed') AS failed FROM kyu_jobs GROUP BY queue) AS c ON c.queue = n.name "
		"LEFT JOIN kyu_queues AS s ON s.name = n.name ORDER BY n.name";

	return print_query(db, q, sizeof(q) - 1, false) < 0 ? die_db(db, "queues") : 0;
}

/* pause, resume, limit: one upsert of the queue's kyu_queues row, made
 * only when the queue exists (jobs or settings) unless create; reset: the
 * row deleted. */
static int cmd_queue_set(struct db *db, const struct kyu_config *cfg, const char *what,
			 const char *queue, const char *value, bool create)
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
	} else {
		action_sql_create(&sb, reset ? ACT_RESET : strcmp(what, "pause") == 0 ? ACT_PAUSE : ACT_RESUME,
				  queue, create);
	}
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		die_db(db, what);
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
	else
		printf("queue %s: %s\n", queue,
		       reset ? "settings removed" : strcmp(what, "pause") == 0 ? "paused" : "resumed");
	/* Jobs that may start now should not wait for a poll. */
	if (strcmp(what, "pause") != 0)
		send_wake(db, cfg, queue, true);
	rc = 0;
out:
	sb_free(&sb);
	return rc;
}

/* Replace this process with kyu-web: the one beside this executable (a
 * build tree), else the installed one; $KYU_WEB_EXE overrides both. Its
 * arguments: -c FILE when kyu was given one, then the command's own. */
static int exec_web(const char *path, int argc, char **argv)
{
	char exe[PATH_MAX + 16], self[PATH_MAX];
	const char *env = getenv("KYU_WEB_EXE");
	char **args = xcalloc((size_t)argc + 4, sizeof(*args));
	ssize_t n;
	int i = 0, r;

	if (env && *env) {
		snprintf(exe, sizeof(exe), "%s", env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		if (n > 0 && strrchr(self, '/'))
			*strrchr(self, '/') = '\0';
		snprintf(exe, sizeof(exe), "%s/kyu-web", self);
		if (n <= 0 || access(exe, X_OK) < 0)
			snprintf(exe, sizeof(exe), "%s", KYU_WEB_EXE);
	}
	args[i++] = exe;
	if (path && *path) {
		args[i++] = xstrdup("-c");
		args[i++] = xstrdup(path);
	}
	for (int j = 1; j < argc; j++)
		args[i++] = argv[j];
	args[i] = NULL;
	execv(exe, args);
	r = errno;
	fprintf(stderr, "kyu: web: cannot run %s: %s\n", exe, strerror(r));
	if (path && *path) {
		free(args[1]);
		free(args[2]);
	}
	free(args);
	return r == ENOENT ? 127 : 126;
}

/* list, show and stats only read: with [database] replica set they read
 * there, and from host when it does not answer (said on stderr, since the
 * answer then comes from elsewhere than asked). Returns true when db is
 * connected to the replica. */
static bool reads_replica(const struct kyu_config *cfg, struct db *db, const char *cmd, int argc)
{
	struct kyu_config rc = *cfg;

	if (!cfg->db_replica || !*cfg->db_replica)
		return false;
	if (strcmp(cmd, "list") != 0 && strcmp(cmd, "stats") != 0 &&
	    !(strcmp(cmd, "show") == 0 && argc == 2))
		return false;
	/* The same account and database, over TCP: socket names the
	 * primary's local server. */
	rc.db_host = cfg->db_replica;
	rc.db_socket = NULL;
	if (db_connect(db, &rc) == 0)
		return true;
	fprintf(stderr, "kyu: note: the replica does not answer (%s); reading from the primary\n",
		db_error(db));
	return false;
}

int main(int argc, char **argv)
{
	const char *path = getenv("KYU_CONFIG");
	struct kyu_config cfg;
	struct db *db = NULL;
	char err[512];
	const char *cmd;
	enum action act;
	int c, rc = 1, create = 0;

	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "raw", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'R': out_raw = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("kyu %s\n", KYU_VERSION); return 0;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (isatty(STDOUT_FILENO))
		out_escape = ESCAPE_TERMINAL;
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	/* kyu COMMAND --help (and kyu schedule|schema SUB --help), before the
	 * configuration is read; kyu web answers for itself. */
	if (strcmp(cmd, "web") != 0 &&
	    (is_help(argv[1]) || ((strcmp(cmd, "schedule") == 0 || strcmp(cmd, "schema") == 0) &&
				  argc > 2 && is_help(argv[2]))))
		return cmd_help(cmd);
	if (usage_of(cmd, NULL) == 0) {
		fprintf(stderr, "kyu: unknown command: %s (kyu --help lists them)\n", cmd);
		return EXIT_USAGE;
	}
	/* Bad options are usage errors whether the database answers or not. */
	if ((strcmp(cmd, "list") == 0 && (rc = cmd_list(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "submit") == 0 && (rc = cmd_submit(NULL, NULL, argc, argv)) != 0))
		return rc;
	if ((strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0 || strcmp(cmd, "limit") == 0) &&
	    argc > 1 && strcmp(argv[1], "--create") == 0)
		create = 1;
	/* A job id or queue name that begins with '-' comes after "--". */
	if (argc > 2 && strcmp(argv[1], "--") == 0 &&
	    (strcmp(cmd, "show") == 0 || action_parse(cmd, &act) == 0 || strcmp(cmd, "limit") == 0 ||
	     strcmp(cmd, "queue-reset") == 0 || strcmp(cmd, "wake") == 0 || strcmp(cmd, "locks") == 0)) {
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (!arity_ok(cmd, argc, argv, create)) {
		fprintf(stderr, "kyu: %s: wrong arguments\n", cmd);
		usage_of(cmd, stderr);
		return EXIT_USAGE;
	}
	/* The dashboard is a program of its own (web/main.c): only it loads
	 * the HTTP library. It reads kyud's file unless told otherwise. */
	if (strcmp(cmd, "web") == 0)
		return exec_web(path, argc, argv);
	/* kyu check is about kyud: its file and its account, not the
	 * client's. */
	if (strcmp(cmd, "check") == 0)
		return cmd_check(path && *path ? path : DAEMON_CONFIG, argc, argv);
	if (!path || !*path)
		path = access(CLIENT_CONFIG, F_OK) == 0 ? CLIENT_CONFIG : DAEMON_CONFIG;
	if (config_load(path, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyu: %s\n", err);
		return 78;
	}
	if (strcmp(cmd, "schema") == 0) {
		/* Its own connection: another account, a longer deadline. */
		rc = cmd_schema(&cfg, argc, argv);
		goto out;
	}
	if (strcmp(cmd, "lock") == 0) {
		/* Its own connection: statement deadlines shorter than the lease. */
		rc = lock_main(&cfg, argc, argv);
		goto out;
	}
	/* A short-lived client may block; a server that stops answering
	 * still ends the command after connect_timeout + 30 s. */
	db = db_new(NULL, 30);
	if (!reads_replica(&cfg, db, cmd, argc) && db_connect(db, &cfg) < 0) {
		fprintf(stderr, "kyu: %s\n", db_error(db));
		goto out;
	}
	if (strcmp(cmd, "submit") == 0) {
		rc = cmd_submit(db, &cfg, argc, argv);
	} else if (strcmp(cmd, "wake") == 0 && argc <= 2) {
		rc = send_wake(db, &cfg, argc > 1 ? argv[1] : "", false) < 0;
	} else if (strcmp(cmd, "daemons") == 0 && argc == 1) {
		rc = cmd_daemons(db);
	} else if (strcmp(cmd, "show") == 0 && argc == 2) {
		rc = cmd_show(db, argv[1]);
	} else if (strcmp(cmd, "list") == 0) {
		rc = cmd_list(db, argc, argv);
	} else if (action_parse(cmd, &act) == 0 && !action_on_queue(act) && argc == 2) {
		rc = cmd_job_action(db, act, argv[1]);
	} else if (strcmp(cmd, "queues") == 0 && argc == 1) {
		rc = cmd_queues(db);
	} else if ((strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0) && argc == 2 + create) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1 + create], NULL, create);
	} else if (strcmp(cmd, "limit") == 0 && argc == 3 + create) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1 + create], argv[2 + create], create);
	} else if (strcmp(cmd, "queue-reset") == 0 && argc == 2) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1], NULL, false);
	} else if (strcmp(cmd, "schedules") == 0 && argc == 1) {
		rc = cmd_schedules(db);
	} else if (strcmp(cmd, "schedule") == 0) {
		rc = cmd_schedule(db, &cfg, argc, argv);
	} else if (strcmp(cmd, "locks") == 0 && argc <= 2) {
		struct strbuf sb = { 0 };
		lock_sql_list(&sb, argc == 2 ? argv[1] : NULL);
		rc = print_query(db, sb.buf, sb.len, false) < 0 ? die_db(db, "locks") : 0;
		sb_free(&sb);
	} else if (strcmp(cmd, "stats") == 0 &&
		   (argc == 1 || (argc == 2 && strcmp(argv[1], "--json") == 0))) {
		rc = cmd_stats(db, argc == 2);
	} else {
		fprintf(stderr, "kyu: %s: wrong arguments\n", cmd);
		usage_of(cmd, stderr);
		rc = EXIT_USAGE;
	}
out:
	db_free(db);
	config_free(&cfg);
	return rc;
}
