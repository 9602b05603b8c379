/* kyu cancel|retry|delete with filters instead of ids. See cmd_bulk.h. */
#include "cmd_bulk.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <mysqld_error.h>

#include "common/causes.h"
#include "common/util.h"
#include "cli.h"
#include "cmd_causes.h"

/* kyu cancel|retry|delete --older-than: an age, N with a unit (s, m, h,
 * d, w; none: seconds); -1 for anything else. */
static long long bulk_age(const char *s)
{
	static const struct {
		char unit;
		long long secs;
	} units[] = {
		{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 604800 },
	};
	char *end;
	long long n;

	if (*s < '0' || *s > '9')
		return -1;
	n = strtoll(s, &end, 10);
	if (n <= 0 || n > 3650LL * 86400)
		return -1;
	if (!*end)
		return n;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (end[0] == units[i].unit && !end[1])
			return n * units[i].secs <= 3650LL * 86400 ? n * units[i].secs : -1;
	return -1;
}

/* n with a comma between each three digits: "12,345". */
static const char *bulk_count(long long n, char buf[32])
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%lld", n < 0 ? 0 : n), o = 0;

	for (int i = 0; i < len; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

static int bulk_run(void *ctx, const char *sql, size_t len, const struct db_result **res)
{
	const struct db_reply *reply;

	if (db_query(ctx, sql, len, &reply) != DB_OK || reply->n < 1)
		return -1;
	*res = &reply->r[reply->n - 1];
	return 0;
}

/* The options of kyu cancel|retry|delete without an id into f; *yes for
 * --yes. 0, or EXIT_USAGE with a message. */
static int bulk_options(enum action a, int argc, char **argv, struct action_filter *f, bool *yes)
{
	static const struct option longs[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ "status", required_argument, NULL, 's' },
		{ "since", required_argument, NULL, 'S' },
		{ "until", required_argument, NULL, 'U' },
		{ "search", required_argument, NULL, 'f' },
		{ "error", required_argument, NULL, 'E' },
		{ "older-than", required_argument, NULL, 'O' },
		{ "cause", required_argument, NULL, 'K' },
		{ "yes", no_argument, NULL, 'y' },
		{ NULL, 0, NULL, 0 },
	};
	const char *name = action_name(a);
	char err[256];
	int c, i;

	optind = 1;
	while ((c = getopt_long(argc, argv, "q:s:y", longs, NULL)) != -1) {
		switch (c) {
		case 'q':
			f->queue = optarg;
			break;
		case 's':
			for (i = 0; cli_statuses[i] && strcmp(optarg, cli_statuses[i]) != 0; i++)
				;
			if (!cli_statuses[i]) {
				fprintf(stderr,
					"kyu: %s: --status: no status '%s'; one of waiting, running, "
					"succeeded, failed, cancelled, blocked, retrying\n",
					name, optarg);
				return EXIT_USAGE;
			}
			f->status = optarg;
			break;
		case 'S':
			f->since = optarg;
			break;
		case 'U':
			f->until = optarg;
			break;
		case 'f':
			f->search = optarg;
			break;
		case 'E':
			f->error = optarg;
			break;
		case 'O':
			f->older_than = bulk_age(optarg);
			if (f->older_than < 0) {
				fprintf(stderr,
					"kyu: %s: --older-than: '%s' is not an age (N followed by s, m, h, "
					"d or w, up to 10 years; 90m, 2d)\n",
					name, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'K':
			f->cause = optarg;
			break;
		case 'y':
			*yes = true;
			break;
		default:
			fprintf(stderr, "kyu: %s: see kyu %s --help\n", name, name);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"kyu: %s: unexpected argument '%s': give one job id, or filters without one "
			"(kyu %s --help)\n",
			name, argv[optind], name);
		return EXIT_USAGE;
	}
	if (action_filter_empty(f)) {
		fprintf(stderr,
			"kyu: %s: give a job id, or at least one filter (--queue, --status, --since, "
			"--until, --search, --error, --older-than, --cause): never every job at once\n",
			name);
		return EXIT_USAGE;
	}
	/* A cause alone names what its group counts: the failed jobs for
	 * retry and delete, the retrying ones for cancel. */
	if (f->cause && !f->status)
		f->status = a == ACT_CANCEL ? "retrying" : "failed";
	if (action_filter_check(a, f, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyu: %s: --%s\n", name, err);
		return EXIT_USAGE;
	}
	return 0;
}

/* "cancel 12,345 jobs? [y/N]" on the terminal: whether the answer is yes. */
static bool bulk_confirm(enum action a, long long n)
{
	char buf[32], *line = NULL;
	size_t cap = 0;
	bool ok;

	fprintf(stderr, "%s %s job%s? [y/N] ", action_name(a), bulk_count(n, buf),
		n == 1 ? "" : "s");
	fflush(stderr);
	ok = getline(&line, &cap, stdin) > 0 &&
	     (strcasecmp(line, "y\n") == 0 || strcasecmp(line, "yes\n") == 0);
	free(line);
	return ok;
}

/* Whether kyu cancel|retry|delete is the bulk form: no id, options. */
bool cmd_job_is_bulk(enum action a, int argc, char **argv)
{
	return action_bulk(a) && (argc < 2 || (argv[1][0] == '-' && strcmp(argv[1], "--") != 0));
}

/* The batches of a bulk action, each followed by ACTION_SETTLE_SQL: one
 * batch can end up to ACTION_BATCH jobs with dependents, as many items as
 * one call settles, so that the dependents move on now rather than a
 * thousand at a time at kyud's claims. Progress on stderr. */
static int bulk_walk(struct db *db, enum action a, const struct action_filter *f, long long n,
		     unsigned long long upto)
{
	static const char settle[] = ACTION_SETTLE_SQL;
	const struct db_reply *reply;
	struct action_walk w;
	bool tty = isatty(STDERR_FILENO), settling = true;
	char b1[32], b2[32];
	long long changed;
	int r, batches = 0;

	action_walk_init(&w, a, f, upto);
	while ((r = action_walk_step(&w, bulk_run, db, &changed)) > 0) {
		batches++;
		if (changed > 0 && settling &&
		    db_query(db, settle, sizeof(settle) - 1, &reply) != DB_OK) {
			/* A schema from before workflows has no procedure, and
			 * no dependents to move. */
			if (db_error_code(db) != ER_SP_DOES_NOT_EXIST)
				fprintf(stderr,
					"%skyu: note: the jobs that wait for those %s move on at kyud's "
					"next claims, not now (%s: %s)\n",
					tty ? "\n" : "", action_done(a), settle, db_error(db));
			settling = false;
		}
		if (tty)
			fprintf(stderr, "\r%s %s of %s", action_done(a), bulk_count(w.done, b1),
				bulk_count(n, b2));
		else if (batches % 10 == 0)
			fprintf(stderr, "kyu: %s: %s of %s so far\n", action_name(a),
				bulk_count(w.done, b1), bulk_count(n, b2));
	}
	if (tty && batches)
		fprintf(stderr, "\n");
	if (r < 0) {
		cli_die_db(db, action_name(a));
		fprintf(stderr, "kyu: %s: stopped after %s jobs %s\n", action_name(a),
			bulk_count(w.done, b1), action_done(a));
	}
	printf("%s %s job%s\n", action_done(a), bulk_count(w.done, b1), w.done == 1 ? "" : "s");
	fflush(stdout);
	return r < 0 ? 1 : 0;
}

int cmd_job_bulk(struct db *db, const struct kyu_config *cfg, enum action a, int argc, char **argv)
{
	struct action_filter f = { 0 };
	char cause[CAUSE_MAX];
	unsigned long long upto;
	bool yes = false;
	long long n;
	char buf[32];
	int rc;

	rc = bulk_options(a, argc, argv, &f, &yes);
	if (rc || !db)
		return rc;
	if (f.cause) {
		int r = causes_resolve(f.cause, f.queue, NULL, cmd_causes_run, db, cause);
		if (r < 0)
			return cli_die_db(db, action_name(a));
		if (r > 0) {
			fprintf(stderr,
				"kyu: %s: no cause %s among the failed and retrying jobs%s%s (kyu causes "
				"lists them)\n",
				action_name(a), f.cause, f.queue ? " of queue " : "",
				f.queue ? f.queue : "");
			return 1;
		}
		f.cause = cause;
	}
	if (action_bulk_count(a, &f, NULL, bulk_run, db, &n, &upto) < 0)
		return cli_die_db(db, action_name(a));
	if (n == 0) {
		printf("%s 0 jobs: none matches\n", action_done(a));
		return 0;
	}
	if (!yes && !isatty(STDIN_FILENO)) {
		fprintf(stderr,
			"kyu: %s: %s job%s; nothing done: give --yes to %s %s without a question "
			"(stdin is not a terminal to ask on)\n",
			action_name(a), bulk_count(n, buf), n == 1 ? " matches" : "s match",
			action_name(a), n == 1 ? "it" : "them");
		return EXIT_USAGE;
	}
	if (!yes && !bulk_confirm(a, n)) {
		fprintf(stderr, "kyu: %s: nothing done\n", action_name(a));
		return 1;
	}
	rc = bulk_walk(db, a, &f, n, upto);
	/* What was freed may be due in any queue: one wake-up, after all. */
	cli_send_wake(db, cfg, action_wake_queue(a, ""), true);
	return rc;
}
