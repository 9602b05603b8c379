/* What the commands of kyu (the cmd_*.c files) share. See cli.h. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/action.h"
#include "common/registry.h"
#include "common/text.h"
#include "common/util.h"
#include "common/wake.h"
#include "table.h"

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

int cli_die_db(struct db *db, const char *what)
{
	/* The server's message may quote a row's value (a duplicate key). */
	struct strbuf sb = { 0 };
	const char *e = db_error(db);

	sb_adds(&sb, "");
	text_escape(&sb, e, strlen(e), ESCAPE_TERMINAL);
	fprintf(stderr, "kyu: %s: %s\n", what, sb.buf);
	sb_free(&sb);
	return 1;
}

void cli_print_field(const char *name, const char *v, size_t len, const char *suffix)
{
	struct strbuf sb = { 0 };

	sb_adds(&sb, "");
	if (table_format() == TABLE_ALIGNED)
		table_human(&sb, name, v, len);
	else
		table_escape(&sb, v, len);
	printf("%12s: ", name);
	fwrite(sb.buf, 1, sb.len, stdout);
	printf("%s\n", suffix ? suffix : "");
	sb_free(&sb);
}

void cli_print_result(const struct db_result *r, bool vertical)
{
	table_print(r, vertical);
}

int cli_print_query(struct db *db, const char *sql, size_t len, bool vertical)
{
	const struct db_reply *reply;

	/* Before the statement: some callers read @@warning_count after it. */
	table_read_now(db);
	if (db_query(db, sql, len, &reply) != DB_OK)
		return -1;
	if (reply->n < 1)
		return 0;
	cli_print_result(&reply->r[0], vertical);
	return (int)reply->r[0].n_rows;
}

static void wake_note(const void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "kyu: wake: %s\n", msg);
}

int cli_send_wake(struct db *db, const struct kyu_config *cfg, const char *queue, bool quiet)
{
	/* A name too long is the caller's mistake: said even when quiet. */
	if (strlen(queue) > WAKE_QUEUE_MAX) {
		fprintf(stderr, "kyu: wake: queue name longer than %d bytes\n", WAKE_QUEUE_MAX);
		return -1;
	}
	return action_wake(db, cfg->listen, cfg->path, queue, quiet ? NULL : wake_note, NULL);
}

void cli_warn_unserved(struct db *db, const char *queue, const char *what)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const char *n;

	/* As the wake-up picks them (action_wake). */
	sb_adds(&sb, "SET @kyu_q = ");
	db_quotes(&sb, queue);
	sb_adds(&sb, "; SELECT COUNT(*) FROM kyu_daemons AS d WHERE " REGISTRY_LIVE(
			     "d") " AND " REGISTRY_SERVES("d", "@kyu_q"));
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n == 2 &&
	    reply->r[1].n_rows == 1 && (n = db_cell(&reply->r[1], 0, 0)) && strcmp(n, "0") == 0) {
		struct strbuf q = { 0 };

		sb_adds(&q, "");
		text_escape(&q, queue, strlen(queue), ESCAPE_TERMINAL);
		fprintf(stderr,
			"kyu: %s: warning: no live kyud serves queue '%s' (kyu daemons): the job waits "
			"until one does\n",
			what, q.buf);
		sb_free(&q);
	}
	sb_free(&sb);
}

const char *const cli_statuses[] = { "waiting",   "running", "succeeded", "failed",
				     "cancelled", "blocked", "retrying",  NULL };
