/* kyu: a convenience over the SQL interface of kyu_jobs. Everything it
 * does is one plain statement that a user could type instead. This file is
 * its main: the options, the usage (kyu --help, kyu COMMAND --help), the
 * checks of a command's arguments that come before the configuration is
 * read, the connection, and the dispatch to the commands (cmd_*.h), which
 * share cli.h. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/action.h"
#include "common/config.h"
#include "common/db.h"
#include "lock.h"
#include "cli.h"
#include "cmd_cluster.h"
#include "cmd_jobs.h"
#include "cmd_show.h"
#include "cmd_logs.h"
#include "cmd_wait.h"
#include "cmd_bulk.h"
#include "cmd_causes.h"
#include "cmd_queue.h"
#include "cmd_schedule.h"
#include "cmd_schema.h"
#include "cmd_web.h"
#include "table.h"

/* kyu reads the client file: a database account that may submit and
 * inspect, not kyud's. kyud's own file, readable by root and kyud only, is
 * the fallback for root on a host without a client file. */
#define CLIENT_CONFIG "/etc/kyu/client.ini"
#define DAEMON_CONFIG "/etc/kyu/kyu.ini"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kyu [-c FILE] [--raw] [--format FORM | --json] COMMAND [ARGS]\n"
		"\n"
		"Commands:\n"
		"  submit [OPTIONS] -s 'SHELL LINE'    enqueue a shell command\n"
		"  submit [OPTIONS] -- PROGRAM [ARG]...  enqueue a program run without a shell\n"
		"      -i ID  -q QUEUE  -p PRIORITY  -d DELAY_S  -m MAX_ATTEMPTS  -t TIME_LIMIT_S\n"
		"      -C DIR  -e NAME=VALUE (repeatable)  -k CONCURRENCY_KEY\n"
		"      --after ID (repeatable)  run after job ID; blocked until then\n"
		"      --after-batch LABEL  run after every job of batch LABEL there is now\n"
		"      --after-policy succeeded|finished  run once they all succeeded\n"
		"        (default; cancelled if one does not) or once they all ended\n"
		"      --batch LABEL  the job's batch\n"
		"      --unique KEY  refused while another job with KEY has not ended\n"
		"      --traceparent TP  W3C trace context, passed to the job as TRACEPARENT\n"
		"      exits 75 when the queue is full (kyu_queues.max_waiting)\n"
		"  show ID                             print every column of one job, the jobs\n"
		"                                      it runs after and that run after it, and\n"
		"                                      its attempts\n"
		"  logs [-f] ID                        print a job's output; -f: follow a job that has\n"
		"                                      not ended, printing its live output as it\n"
		"                                      comes, until it ends (exits 0 succeeded,\n"
		"                                      2 failed, 3 cancelled)\n"
		"  wait [--timeout S] ID               wait for a job to end (CALL kyu_wait) and print\n"
		"                                      its status; exits 0 succeeded, 2 failed,\n"
		"                                      3 cancelled, 75 not ended within S seconds\n"
		"  list [-q QUEUE] [-s STATUS] [-n N]  list jobs, newest first (default 20);\n"
		"      STATUS: waiting, running, succeeded, failed, cancelled, blocked\n"
		"      or retrying\n"
		"      --since TIME  --until TIME  changed in [since, until), database time\n"
		"      --search TEXT  in ids, commands, errors and output\n"
		"      --scan N  with --search, --since or --until: read at most N rows (1000000)\n"
		"  cancel ID                           cancel a waiting, blocked or running job\n"
		"      then the jobs that run after ID move on at once; every kyud is woken\n"
		"  retry ID                            run a failed or cancelled job again\n"
		"      then the jobs its end cancelled wait for it again; every kyud is woken\n"
		"  run-now ID                          make a waiting job due later due now\n"
		"  delete ID                           delete a finished job's row\n"
		"      then the jobs that run after ID move on at once; every kyud is woken\n"
		"  cancel | retry | delete FILTER... [--yes]  the same, on each job that matches,\n"
		"      in batches of 1000 rows; asks first on a terminal (--yes: not; no\n"
		"      terminal: refused without --yes); FILTER (at least one, all must hold):\n"
		"      -q, --queue QUEUE  -s, --status STATUS (one the action applies to;\n"
		"      cancel also retrying)  --since TIME  --until TIME (changed in\n"
		"      [since, until))  --older-than AGE (changed AGE ago or more: 90m, 2d)\n"
		"      --search TEXT (in ids, commands, errors, output)  --error TEXT\n"
		"      --cause CAUSE (a cause of kyu causes: its id or its text; alone, retry\n"
		"      and delete its failed jobs, cancel its retrying ones)\n"
		"  causes [-q QUEUE] [CAUSE]           failed and retrying jobs grouped by cause (the\n"
		"                                      error's first line, numbers, ids, quoted text\n"
		"                                      and paths folded): id, counts, first and last\n"
		"                                      seen, queues; with CAUSE, its latest 100 jobs\n"
		"  wake [QUEUE]                        send a wake-up datagram to every live kyud\n"
		"                                      serving QUEUE (kyu_daemons; else [kyud] listen)\n"
		"  daemons                             list the daemons of kyu_daemons: host, pid,\n"
		"                                      wake-up address, queues, job slots, running,\n"
		"                                      free, draining, last seen (against its refresh\n"
		"                                      interval), live; says so when none is live\n"
		"  drain DAEMON                        ask a live daemon (its id, or HOST:PID) to stop\n"
		"                                      claiming, let its running jobs finish and exit 0\n"
		"                                      (kyu_daemons.drain; read at its next refresh)\n"
		"  stats [--json]                      count jobs per queue and status\n"
		"  queues [--limit N] [--offset N]     each queue: counts, settings and what it needs,\n"
		"      [--sort attention|name]         failing, stuck, failed, busy, idle first (or by\n"
		"      [--after NAME]                  name; --after NAME: by name, after NAME)\n"
		"  pause QUEUE | resume QUEUE          stop or restart a queue's new starts\n"
		"      (QUEUE must have jobs or settings; --create first: make its settings anyway)\n"
		"  limit QUEUE N|none                  at most N of its jobs running at once\n"
		"      (QUEUE as for pause, and --create too)\n"
		"  key-limit QUEUE N                   at most N of its jobs with one concurrency key\n"
		"      running at once, 1 to 1000 (default 1; QUEUE as for limit)\n"
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
		"  --format table|tsv|json  how listings and show print (also after COMMAND):\n"
		"            table (the default on a terminal): aligned columns cut to its\n"
		"            width, - for NULL, times with how long ago, sizes and durations\n"
		"            with units; tsv (the default otherwise, and with --raw):\n"
		"            tab-separated rows as stored; json: an array of objects (show:\n"
		"            one object), NULL as null\n"
		"  --json    the same as --format json\n"
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
			fprintf(out, "%s%s\n",
				found ? ""
				      : "usage: kyu [-c FILE] [--raw] [--format FORM] COMMAND [ARGS]; for this command:\n",
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

	if (strcmp(cmd, "daemons") == 0 || strcmp(cmd, "schedules") == 0)
		return argc == 1;
	if (strcmp(cmd, "queues") == 0)
		return true; /* options checked by cmd_queues */
	if (strcmp(cmd, "wake") == 0 || strcmp(cmd, "locks") == 0)
		return argc <= 2;
	if (strcmp(cmd, "stats") == 0)
		return argc == 1 || (argc == 2 && strcmp(argv[1], "--json") == 0);
	if (strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0)
		return argc == 2 + create;
	if (strcmp(cmd, "limit") == 0 || strcmp(cmd, "key-limit") == 0)
		return argc == 3 + create;
	if (strcmp(cmd, "show") == 0 || strcmp(cmd, "queue-reset") == 0 ||
	    strcmp(cmd, "drain") == 0 || (action_parse(cmd, &a) == 0 && !action_on_queue(a)))
		return argc == 2;
	return true;
}

/* The commands that print a listing or a job: they take --json and
 * --format after their name too. */
static bool takes_format(const char *cmd)
{
	static const char *const cmds[] = { "list",    "show",   "queues", "schedules", "locks",
					    "daemons", "causes", "stats",  NULL };

	for (size_t i = 0; cmds[i]; i++)
		if (strcmp(cmd, cmds[i]) == 0)
			return true;
	return false;
}

/* Take --json, --format FORM and --format=FORM out of a command's
 * arguments (up to a "--"), so that its own parsing never sees them.
 * Returns 0, or EXIT_USAGE for a bad form. */
static int strip_format(const char *cmd, int *argc, char **argv, enum table_format *form,
			bool *formed)
{
	int out = 1;

	for (int i = 1; i < *argc; i++) {
		const char *v = NULL;
		if (strcmp(argv[i], "--") == 0) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "--json") == 0 && strcmp(cmd, "stats") != 0) {
			*form = TABLE_JSON;
			*formed = true;
			continue;
		}
		if (strncmp(argv[i], "--format=", 9) == 0)
			v = argv[i] + 9;
		else if (strcmp(argv[i], "--format") == 0 && i + 1 < *argc)
			v = argv[++i];
		if (!v) {
			argv[out++] = argv[i];
			continue;
		}
		if (table_format_parse(v, form) < 0) {
			fprintf(stderr, "kyu: %s: --format: '%s' is not table, tsv or json\n", cmd,
				v);
			return EXIT_USAGE;
		}
		*formed = true;
	}
	argv[out] = NULL;
	*argc = out;
	return 0;
}

static bool is_help(const char *arg)
{
	return arg && (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0);
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
	bool raw = false, bulk, formed = false;
	enum table_format form = TABLE_TSV;

	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "raw", no_argument, NULL, 'R' },
		{ "format", required_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'J' },
		{ NULL, 0, NULL, 0 },
	};

	while ((c = getopt_long(argc, argv, "+c:hV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'R':
			raw = true;
			break;
		case 'F':
			if (table_format_parse(optarg, &form) < 0) {
				fprintf(stderr, "kyu: --format: '%s' is not table, tsv or json\n",
					optarg);
				return EXIT_USAGE;
			}
			formed = true;
			break;
		case 'J':
			form = TABLE_JSON;
			formed = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kyu %s\n", KYU_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	cmd = argv[optind];
	argc -= optind;
	argv += optind;
	if (takes_format(cmd) && (rc = strip_format(cmd, &argc, argv, &form, &formed)) != 0)
		return rc;
	/* A terminal gets the table unless told otherwise; --raw, the bytes
	 * as stored, only makes sense in rows. */
	if (!formed)
		form = isatty(STDOUT_FILENO) && !raw ? TABLE_ALIGNED : TABLE_TSV;
	table_setup(form, raw, isatty(STDOUT_FILENO));
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
	/* kyu cancel|retry|delete with filters rather than an id. */
	bulk = action_parse(cmd, &act) == 0 && cmd_job_is_bulk(act, argc, argv);
	/* Bad options are usage errors whether the database answers or not. */
	if ((bulk && (rc = cmd_job_bulk(NULL, NULL, act, argc, argv)) != 0) ||
	    (strcmp(cmd, "list") == 0 && (rc = cmd_list(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "causes") == 0 && (rc = cmd_causes(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "logs") == 0 && (rc = cmd_logs(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "wait") == 0 && (rc = cmd_wait(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "queues") == 0 && (rc = cmd_queues(NULL, argc, argv)) != 0) ||
	    (strcmp(cmd, "submit") == 0 && (rc = cmd_submit(NULL, NULL, argc, argv)) != 0))
		return rc;
	if ((strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0 || strcmp(cmd, "limit") == 0 ||
	     strcmp(cmd, "key-limit") == 0) &&
	    argc > 1 && strcmp(argv[1], "--create") == 0)
		create = 1;
	/* A job id or queue name that begins with '-' comes after "--". */
	if (argc > 2 && strcmp(argv[1], "--") == 0 &&
	    (strcmp(cmd, "show") == 0 || action_parse(cmd, &act) == 0 ||
	     strcmp(cmd, "limit") == 0 || strcmp(cmd, "key-limit") == 0 ||
	     strcmp(cmd, "queue-reset") == 0 || strcmp(cmd, "wake") == 0 ||
	     strcmp(cmd, "locks") == 0 || strcmp(cmd, "drain") == 0)) {
		argv[1] = argv[0];
		argc--;
		argv++;
	}
	if (!bulk && !arity_ok(cmd, argc, argv, create)) {
		fprintf(stderr, "kyu: %s: wrong arguments\n", cmd);
		usage_of(cmd, stderr);
		return EXIT_USAGE;
	}
	/* The dashboard is a program of its own (web/main.c): only it loads
	 * the HTTP library. It reads kyud's file unless told otherwise. */
	if (strcmp(cmd, "web") == 0)
		return cmd_web(path, argc, argv);
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
		fprintf(stderr, "kyu: %s: %s\n", cmd, db_error(db));
		/* rc may hold the 0 of the option checks above: a command
		 * that did nothing must not say it succeeded. */
		rc = EXIT_UNAVAILABLE;
		goto out;
	}
	if (strcmp(cmd, "submit") == 0) {
		rc = cmd_submit(db, &cfg, argc, argv);
	} else if (strcmp(cmd, "wake") == 0 && argc <= 2) {
		rc = cmd_wake(db, &cfg, argc > 1 ? argv[1] : "");
	} else if (strcmp(cmd, "daemons") == 0 && argc == 1) {
		rc = cmd_daemons(db);
	} else if (strcmp(cmd, "drain") == 0 && argc == 2) {
		rc = cmd_drain(db, &cfg, argv[1]);
	} else if (strcmp(cmd, "show") == 0 && argc == 2) {
		rc = cmd_show(db, argv[1]);
	} else if (strcmp(cmd, "list") == 0) {
		rc = cmd_list(db, argc, argv);
	} else if (strcmp(cmd, "causes") == 0) {
		rc = cmd_causes(db, argc, argv);
	} else if (bulk) {
		rc = cmd_job_bulk(db, &cfg, act, argc, argv);
	} else if (action_parse(cmd, &act) == 0 && !action_on_queue(act) && argc == 2) {
		rc = cmd_job_action(db, &cfg, act, argv[1]);
	} else if (strcmp(cmd, "queues") == 0) {
		rc = cmd_queues(db, argc, argv);
	} else if ((strcmp(cmd, "pause") == 0 || strcmp(cmd, "resume") == 0) &&
		   argc == 2 + create) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1 + create], NULL, create);
	} else if ((strcmp(cmd, "limit") == 0 || strcmp(cmd, "key-limit") == 0) &&
		   argc == 3 + create) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1 + create], argv[2 + create], create);
	} else if (strcmp(cmd, "queue-reset") == 0 && argc == 2) {
		rc = cmd_queue_set(db, &cfg, cmd, argv[1], NULL, false);
	} else if (strcmp(cmd, "schedules") == 0 && argc == 1) {
		rc = cmd_schedules(db);
	} else if (strcmp(cmd, "schedule") == 0) {
		rc = cmd_schedule(db, &cfg, argc, argv);
	} else if (strcmp(cmd, "locks") == 0 && argc <= 2) {
		rc = cmd_locks(db, argc == 2 ? argv[1] : NULL);
	} else if (strcmp(cmd, "stats") == 0 &&
		   (argc == 1 || (argc == 2 && strcmp(argv[1], "--json") == 0))) {
		rc = cmd_stats(db, argc == 2 || form == TABLE_JSON);
	} else if (strcmp(cmd, "logs") == 0) {
		rc = cmd_logs(db, argc, argv);
	} else if (strcmp(cmd, "wait") == 0) {
		rc = cmd_wait(db, argc, argv);
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
