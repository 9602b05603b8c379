/* kyu show ID: one job's row, its attempts, its workflow neighbours and
 * its output. See cmd_show.h. */
#include "cmd_show.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <mysqld_error.h>

#include "common/schema.h"
#include "common/text.h"
#include "common/util.h"
#include "cli.h"
#include "table.h"

/* kyu show's columns up to the workflow ones, and after them. */
/* clang-format off */
#define SHOW_HEAD                                                                                  \
	"SELECT seq, id, queue, status, priority, command, argv, env, cwd, " CLI_TIME("run_at") ", " \
	"attempts, max_attempts, time_limit, exit_code, `signal`, error, "                         \
	CLI_TIME("started_at") ", " CLI_TIME("finished_at") ", duration, cpu_user, cpu_sys, "      \
	"max_rss, host, pid, owner, " CLI_TIME("lease_until") ", concurrency_key, "
/* clang-format on */
#define SHOW_TAIL                                                                                  \
	CLI_TIME("created_at") ", " CLI_TIME("updated_at") ", output FROM kyu_jobs WHERE id = "

/* The columns of schema version 6 (kyu_jobs(7), "The status channel",
 * "Unique keys", "Trace context"): the progress with its note on one
 * line, the last result, the unique key and the trace context. */
#define SHOW_STATUS                                                                                       \
	"CONCAT(progress, '%', IFNULL(CONCAT(' ', progress_note), '')) AS progress, result, unique_key, " \
	"traceparent, "

/* How many upstreams and downstreams kyu show lists: a job of a large
 * batch may have thousands, and the command must stay quick. */
#define SHOW_EDGES 20

/* The edges of the job id: for each side, the first SHOW_EDGES (the other
 * job's seq, id and status; id NULL when its row is gone) and their
 * count, four result sets, read on the primary key of kyu_after (up_seq
 * first) and on kyu_after_down. */
static void show_edges_sql(struct strbuf *sb, const char *id)
{
	static const char *const side[2][2] = { { "up_seq", "down_seq" },
						{ "down_seq", "up_seq" } };

	for (int i = 0; i < 2; i++) {
		sb_printf(
			sb,
			"; SELECT e.%s, j.id, j.status FROM kyu_after AS e LEFT JOIN kyu_jobs AS j "
			"ON j.seq = e.%s WHERE e.%s = (SELECT seq FROM kyu_jobs WHERE id = ",
			side[i][0], side[i][0], side[i][1]);
		db_quotes(sb, id);
		sb_printf(sb,
			  ") ORDER BY e.%s LIMIT %d; SELECT COUNT(*) FROM kyu_after WHERE %s = "
			  "(SELECT seq FROM kyu_jobs WHERE id = ",
			  side[i][0], SHOW_EDGES, side[i][1]);
		db_quotes(sb, id);
		sb_adds(sb, ")");
	}
}

/* One side's lines: "ID (STATUS)", "#SEQ (deleted)" for a row that is
 * gone, then how many more there are. */
static void show_side(const char *name, const struct db_result *list, const struct db_result *count)
{
	long long total =
		count->n_rows && db_cell(count, 0, 0) ? strtoll(db_cell(count, 0, 0), NULL, 10) : 0;
	char suffix[64], more[64];

	for (size_t i = 0; i < list->n_rows; i++) {
		const char *up = db_cell(list, i, 1), *status = db_cell(list, i, 2);
		if (up) {
			snprintf(suffix, sizeof(suffix), " (%s)", status ? status : "?");
			cli_print_field(name, up, list->lens[i * list->n_cols + 1], suffix);
		} else {
			printf("%12s: #%s (deleted)\n", name, db_cell(list, i, 0));
		}
	}
	if (total > (long long)list->n_rows) {
		snprintf(more, sizeof(more), "... and %lld more", total - (long long)list->n_rows);
		printf("%12s: %s\n", name, more);
	}
}

/* The value of the column named name in the row r (NULL: unset, or no
 * such column). */
static const char *show_cell(const struct db_result *r, const char *name)
{
	for (unsigned i = 0; i < r->n_cols; i++)
		if (strcmp(r->names[i], name) == 0)
			return db_cell(r, 0, i);
	return NULL;
}

/* Whether the job of row r runs after others. */
static bool show_waits(const struct db_result *r)
{
	return show_cell(r, "after") || show_cell(r, "after_batch");
}

/* Whether kyu show leaves column col out: a workflow column that is not
 * set, the policy of a job that waits for none, and has_downstream, which
 * only says whether to expect downstreams. */
static bool show_unset(const struct db_result *r, unsigned col)
{
	const char *name = r->names[col];

	if (strcmp(name, "after_policy") == 0)
		return !show_waits(r);
	if (strcmp(name, "has_downstream") == 0)
		return true;
	return !db_cell(r, 0, col) &&
	       (strcmp(name, "after") == 0 || strcmp(name, "batch") == 0 ||
		strcmp(name, "after_batch") == 0 || strcmp(name, "cancelled_by") == 0 ||
		strcmp(name, "progress") == 0 || strcmp(name, "result") == 0 ||
		strcmp(name, "unique_key") == 0 || strcmp(name, "traceparent") == 0);
}

/* The attempts of the job of row seq (kyu_jobs(7), "Attempts"), oldest
 * first, as a table after the job; none on a schema without kyu_attempts,
 * and a note where the account may not read it and the job has had
 * attempts (tried). Returns 0, or 1 when the table could not be read. */
static int show_attempts(struct db *db, const char *id, unsigned long long seq, bool tried,
			 json_t *obj)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	int rc = 0;

	sb_printf(
		&sb,
		"SELECT attempt, outcome, " CLI_TIME("started_at") ", " CLI_TIME(
			"finished_at") ", "
				       "ROUND(TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1000000, 3) AS duration, "
				       "exit_code, `signal`, host, pid, ROUND(cpu_user + cpu_sys, 3) AS cpu, max_rss, error "
				       "FROM kyu_attempts WHERE job_seq = %llu ORDER BY seq",
		seq);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK) {
		if (obj) {
			json_t *a = json_array();
			for (size_t i = 0; reply->n >= 1 && i < reply->r[0].n_rows; i++)
				json_array_append_new(a, table_json_row(&reply->r[0], i));
			json_object_set_new(obj, "attempts", a);
		} else if (reply->n >= 1 && reply->r[0].n_rows > 0) {
			putchar('\n');
			cli_print_result(&reply->r[0], false);
		}
	} else if (db_error_code(db) == ER_TABLEACCESS_DENIED_ERROR) {
		if (tried)
			fprintf(stderr, "kyu: note: show: the attempts of '%s' are not shown: %s\n",
				id, db_error(db));
	} else if (db_error_code(db) != ER_NO_SUCH_TABLE) {
		fprintf(stderr, "kyu: show: cannot read the attempts of '%s' (kyu_attempts): %s\n",
			id, db_error(db));
		rc = 1;
	}
	sb_free(&sb);
	return rc;
}

/* One side's edges for kyu show --json: the first SHOW_EDGES as objects
 * (seq, id, status; id null for a row that is gone) and how many in all. */
static json_t *show_side_json(const struct db_result *list, const struct db_result *count)
{
	json_t *jobs = json_array();

	for (size_t i = 0; i < list->n_rows; i++)
		json_array_append_new(jobs, table_json_row(list, i));
	return json_pack("{s:o, s:o}", "jobs", jobs, "count",
			 count->n_rows ? table_json_cell(count, 0, 0) : json_integer(0));
}

/* kyu show's output in the table form: as text, lines kept, under a rule
 * as wide as the terminal (at most 100 columns). */
static void show_output(const char *out, size_t len)
{
	size_t width = table_columns();

	width = width > 100 ? 100 : width < 20 ? 20 : width;
	printf("\n%s output ", "\xE2\x94\x80\xE2\x94\x80");
	for (size_t i = 10; i < width; i++)
		fputs("\xE2\x94\x80", stdout);
	putchar('\n');
	table_put_text(out, len, true);
	if (len && out[len - 1] != '\n')
		putchar('\n');
}

int cmd_show(struct db *db, const char *id)
{
	struct strbuf sb = { 0 }, output = { 0 };
	json_t *obj = NULL;
	bool has_output = false;
	const struct db_reply *reply;
	const struct db_result *r;
	enum db_fail fail;
	bool edges, tried;
	unsigned long long seq;
	int n, rc = 1;

	table_read_now(db);
	/* Schema version 6, then 5 (without its columns),
	 * then older (below). */
	for (int v = 0; v < 2; v++) {
		sb_reset(&sb);
		sb_adds(&sb, SHOW_HEAD
			"after, after_policy, batch, after_batch, cancelled_by, has_downstream, ");
		if (v == 0)
			sb_adds(&sb, SHOW_STATUS);
		sb_adds(&sb, SHOW_TAIL);
		db_quotes(&sb, id);
		show_edges_sql(&sb, id);
		fail = db_query(db, sb.buf, sb.len, &reply);
		if (fail == DB_OK || fail == DB_LOST || reply->n >= 2 ||
		    db_error_code(db) != ER_BAD_FIELD_ERROR)
			break;
	}
	if (fail != DB_OK && (fail == DB_LOST || reply->n < 2)) {
		/* The job's row was not read. On a schema from before
		 * workflows: the columns it has. */
		if (db_error_code(db) != ER_BAD_FIELD_ERROR) {
			cli_die_db(db, "show");
			goto out;
		}
		sb_reset(&sb);
		sb_adds(&sb, SHOW_HEAD SHOW_TAIL);
		db_quotes(&sb, id);
		n = cli_print_query(db, sb.buf, sb.len, true);
		if (n < 0)
			cli_die_db(db, "show");
		else if (n == 0)
			fprintf(stderr, "kyu: show: no job with id '%s'\n", id);
		rc = n > 0 ? 0 : 1;
		goto out;
	}
	r = &reply->r[0];
	if (r->n_rows == 0) {
		fprintf(stderr, "kyu: show: no job with id '%s'\n", id);
		goto out;
	}
	/* The job itself was read; kyu_after may not have been (a privilege
	 * missing): the row is printed all the same. */
	edges = fail == DB_OK && reply->n >= 5;
	/* Read before the next query frees the reply. */
	seq = strtoull(show_cell(r, "seq") ?: "0", NULL, 10);
	tried = strtoull(show_cell(r, "attempts") ?: "0", NULL, 10) > 0;
	if (table_format() == TABLE_JSON) {
		obj = table_json_row(r, 0);
		if (edges) {
			json_object_set_new(obj, "upstream",
					    show_side_json(&reply->r[1], &reply->r[2]));
			json_object_set_new(obj, "downstream",
					    show_side_json(&reply->r[3], &reply->r[4]));
		}
	}
	for (unsigned i = 0; !obj && i < r->n_cols; i++) {
		/* The table form: the output last, as text under a rule. */
		if (table_format() == TABLE_ALIGNED && strcmp(r->names[i], "output") == 0) {
			if (db_cell(r, 0, i)) {
				output.len = 0;
				sb_add(&output, db_cell(r, 0, i), r->lens[i]);
				has_output = true;
			}
			continue;
		}
		if (!show_unset(r, i))
			cli_print_field(r->names[i], db_cell(r, 0, i), r->lens[i], NULL);
		if (edges && strcmp(r->names[i], "cancelled_by") == 0) {
			show_side("upstream", &reply->r[1], &reply->r[2]);
			show_side("downstream", &reply->r[3], &reply->r[4]);
		}
	}
	if (!edges && db_error_code(db) == ER_TABLEACCESS_DENIED_ERROR) {
		/* An account that may read kyu_jobs only (kyu(1): enough to
		 * show a job): a note where the job has edges to show. */
		const char *down = show_cell(r, "has_downstream");
		if (show_waits(r) || (down && strcmp(down, "0") != 0))
			fprintf(stderr,
				"kyu: note: show: the jobs '%s' runs after and that run after it are "
				"not shown: %s\n",
				id, db_error(db));
	} else if (!edges) {
		fprintf(stderr,
			"kyu: show: cannot read the upstreams and downstreams of '%s' (kyu_after): %s\n",
			id, db_error(db));
		goto out;
	}
	rc = show_attempts(db, id, seq, tried, obj);
	if (obj && table_json_print(obj) < 0)
		rc = 1;
	obj = NULL;
	if (has_output)
		show_output(output.buf, output.len);
out:
	json_decref(obj);
	sb_free(&sb);
	sb_free(&output);
	return rc;
}
