/* kyu wait [--timeout SECONDS] ID: wait for a job to end through CALL
 * kyu_wait. See cmd_wait.h. */
#include "cmd_wait.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common/text.h"
#include "common/util.h"

/* The longest one CALL waits: well within the 30 s a statement of kyu may
 * take (main.c's db_new), so that a server that stops answering is still
 * found out; a longer wait is several CALLs, each reading the row at once
 * and then every 10 ms to 0.5 s as the procedure does. */
#define WAIT_CALL_S 20.0
/* Above it (about 31 years) --timeout is refused: more than any caller
 * means, and far from where a double loses fractions of a second. */
#define WAIT_TIMEOUT_MAX 1e9

/* kyu_wait's refusal of an id that no job has, or of a row deleted while
 * it waited (sql/schema.sql). */
#define ER_KYU_NO_JOB 31012

/* SECONDS of --timeout: a number, 0 or more. */
static int parse_timeout(const char *s, double *ret)
{
	char *end;
	double v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	v = strtod(s, &end);
	if (*end || !isfinite(v) || v < 0 || v > WAIT_TIMEOUT_MAX)
		return -1;
	*ret = v;
	return 0;
}

/* "kyu: wait: job ID failed: " and the first line of the job's error (a
 * line of its output, perhaps), escaped for a terminal. */
static void say_failed(const char *id, const char *err)
{
	struct strbuf sb = { 0 };
	size_t n = strcspn(err, "\n");

	sb_adds(&sb, "");
	text_escape(&sb, err, n > 500 ? 500 : n, ESCAPE_TERMINAL);
	fprintf(stderr, "kyu: wait: job %s failed: %s\n", id, sb.buf);
	sb_free(&sb);
}

int cmd_wait(struct db *db, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct strbuf sb = { 0 };
	const char *id, *status = NULL;
	double timeout = -1, end = 0;
	int c, rc = 1;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "t:", longopts, NULL)) != -1) {
		if (c == 't' && parse_timeout(optarg, &timeout) == 0)
			continue;
		if (c == 't')
			fprintf(stderr,
				"kyu: wait: --timeout: '%s' is not a number of seconds, 0 or more\n",
				optarg);
		else
			fprintf(stderr,
				"kyu: wait: unknown option or missing value: %s (kyu wait --help)\n",
				argv[optind - 1]);
		return EXIT_USAGE;
	}
	if (argc - optind != 1) {
		fprintf(stderr, "kyu: wait: expects one job id (kyu wait --help)\n");
		return EXIT_USAGE;
	}
	if (!db)
		return 0;
	id = argv[optind];
	if (timeout >= 0)
		end = mono_now() + timeout;
	for (;;) {
		const struct db_reply *reply;
		const struct db_result *r = NULL;
		double left = timeout < 0 ? WAIT_CALL_S : end - mono_now();
		enum db_fail fail;

		if (left < 0)
			left = 0;
		sb_reset(&sb);
		sb_adds(&sb, "CALL kyu_wait(");
		db_quotes(&sb, id);
		sb_printf(&sb, ", %.3f)", left < WAIT_CALL_S ? left : WAIT_CALL_S);
		fail = db_query(db, sb.buf, sb.len, &reply);
		/* The row, then the CALL's own status. */
		if (fail == DB_OK && reply->n >= 1 && reply->r[0].n_cols >= 2 &&
		    reply->r[0].n_rows == 1)
			r = &reply->r[0];
		if (!r) {
			const struct db_result *last =
				fail == DB_ERROR && reply->n >= 1 ? &reply->r[reply->n - 1] : NULL;
			if (last && last->err_no == ER_KYU_NO_JOB) {
				/* Two refusals, one number: told apart by the
				 * procedure's message. */
				fprintf(stderr, "kyu: wait: %s '%s'\n",
					last->err && strstr(last->err, "deleted")
						? "the row is gone (deleted) of job"
						: "no job with id",
					id);
				rc = 1;
			} else {
				rc = cli_die_db(db, "wait");
			}
			break;
		}
		status = db_cell(r, 0, 1) ? db_cell(r, 0, 1) : "";
		if (strcmp(status, "succeeded") == 0 || strcmp(status, "failed") == 0 ||
		    strcmp(status, "cancelled") == 0) {
			const char *err = r->n_cols > 4 ? db_cell(r, 0, 4) : NULL;
			printf("%s\n", status);
			if (strcmp(status, "succeeded") == 0) {
				rc = 0;
			} else if (strcmp(status, "cancelled") == 0) {
				rc = EXIT_JOB_CANCELLED;
			} else {
				if (err)
					say_failed(id, err);
				rc = EXIT_JOB_FAILED;
			}
			break;
		}
		if (timeout >= 0 && mono_now() >= end) {
			printf("%s\n", status);
			fprintf(stderr, "kyu: wait: job %s has not ended within %g s (%s)\n", id,
				timeout, status);
			rc = WAIT_TIMEOUT;
			break;
		}
	}
	sb_free(&sb);
	return rc;
}
