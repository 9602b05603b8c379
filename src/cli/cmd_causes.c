/* kyu causes: the failed and retrying jobs grouped by cause
 * (common/causes.h), and the jobs of one cause. See cmd_causes.h. */
#include "cmd_causes.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/causes.h"
#include "common/text.h"
#include "cli.h"
#include "table.h"

/* The jobs "kyu causes CAUSE" lists. */
#define CAUSES_SHOWN 100

int cmd_causes_run(void *ctx, const char *sql, size_t len, const struct db_result **res)
{
	const struct db_reply *reply;

	if (db_query(ctx, sql, len, &reply) != DB_OK || reply->n < 1)
		return -1;
	*res = &reply->r[reply->n - 1];
	return 0;
}

/* s escaped for a terminal (text.h): never a control character. */
static void put_text(struct strbuf *sb, const char *s)
{
	sb_reset(sb);
	text_escape(sb, s, strlen(s), ESCAPE_TERMINAL);
	fwrite(sb->buf, 1, sb->len, stdout);
}

/* "2026-11-29 01:02:03.456789" to the second. */
static void put_time(const char *t)
{
	printf("%.19s", *t ? t : "-");
}

/* Rows built here, for the table and JSON forms (table.h): cells of
 * strbufs, an empty one for NULL. */
struct rows {
	struct db_result r;
	struct strbuf *sb;
};

static void rows_init(struct rows *t, const char **names, bool *numeric, unsigned cols, size_t n)
{
	t->r = (struct db_result){
		.n_cols = cols, .n_rows = n, .names = names, .numeric = numeric
	};
	t->r.cells = xcalloc(n * cols + 1, sizeof(*t->r.cells));
	t->r.lens = xcalloc(n * cols + 1, sizeof(*t->r.lens));
	t->sb = xcalloc(n * cols + 1, sizeof(*t->sb));
}

/* Print the rows in the chosen form and free them. */
static void rows_print(struct rows *t)
{
	for (size_t i = 0; i < t->r.n_rows * t->r.n_cols; i++) {
		t->r.cells[i] = t->sb[i].buf;
		t->r.lens[i] = t->sb[i].len;
	}
	cli_print_result(&t->r, false);
	for (size_t i = 0; i < t->r.n_rows * t->r.n_cols; i++)
		sb_free(&t->sb[i]);
	free(t->sb);
	free(t->r.cells);
	free(t->r.lens);
}

/* A time of the server to the second; none for "". */
static void add_time(struct strbuf *sb, const char *t)
{
	if (*t)
		sb_printf(sb, "%.19s", t);
}

static void list_groups_as(const struct causes *c)
{
	static const char *names[] = { "cause", "failed", "retrying", "first",
				       "last",  "queues", "text" };
	bool numeric[] = { false, true, true, false, false, false, false };
	struct rows t;
	char id[9];

	rows_init(&t, names, numeric, 7, c->n);
	for (size_t i = 0; i < c->n; i++) {
		const struct cause_group *g = &c->g[i];
		struct strbuf *row = &t.sb[i * 7];
		cause_id_text(g->id, id);
		sb_adds(&row[0], id);
		sb_printf(&row[1], "%lld", g->failed);
		sb_printf(&row[2], "%lld", g->retrying);
		add_time(&row[3], g->first);
		add_time(&row[4], g->last);
		sb_adds(&row[5], "");
		for (int k = 0; k < g->n_queues; k++)
			sb_printf(&row[5], "%s%s", k ? "," : "", g->queues[k]);
		if (g->more_queues)
			sb_printf(&row[5], ",+%d more", g->more_queues);
		sb_adds(&row[6], g->text[0] ? g->text : "(no error)");
	}
	rows_print(&t);
}

static void list_groups(const struct causes *c)
{
	struct strbuf sb = { 0 };
	char id[9];

	printf("cause\tfailed\tretrying\tfirst\tlast\tqueues\ttext\n");
	for (size_t i = 0; i < c->n; i++) {
		const struct cause_group *g = &c->g[i];
		cause_id_text(g->id, id);
		printf("%s\t%lld\t%lld\t", id, g->failed, g->retrying);
		put_time(g->first);
		putchar('\t');
		put_time(g->last);
		putchar('\t');
		for (int k = 0; k < g->n_queues; k++) {
			printf("%s", k ? "," : "");
			put_text(&sb, g->queues[k]);
		}
		if (g->more_queues)
			printf(",+%d more", g->more_queues);
		putchar('\t');
		put_text(&sb, g->text[0] ? g->text : "(no error)");
		putchar('\n');
	}
	sb_free(&sb);
}

static int show_jobs(struct db *db, const char *key, const char *queue)
{
	char text[CAUSE_MAX];
	struct cause_job *jobs;
	struct strbuf sb = { 0 };
	size_t n;
	int r = causes_resolve(key, queue, NULL, cmd_causes_run, db, text);

	if (r < 0)
		return cli_die_db(db, "causes");
	if (r > 0) {
		fprintf(stderr,
			"kyu: causes: no cause %s among the failed and retrying jobs%s%s "
			"(kyu causes lists them)\n",
			key, queue ? " of queue " : "", queue ? queue : "");
		return 1;
	}
	if (causes_jobs(text, queue, CAUSES_SHOWN, NULL, cmd_causes_run, db, &jobs, &n) < 0)
		return cli_die_db(db, "causes");
	if (table_format() != TABLE_TSV) {
		static const char *names[] = { "id", "queue", "status", "updated", "error" };
		bool numeric[5] = { false };
		struct rows t;

		rows_init(&t, names, numeric, 5, n);
		for (size_t i = 0; i < n; i++) {
			struct strbuf *row = &t.sb[i * 5];
			sb_adds(&row[0], jobs[i].id);
			sb_adds(&row[1], jobs[i].queue);
			sb_adds(&row[2], jobs[i].retrying ? "retrying" : "failed");
			add_time(&row[3], jobs[i].updated);
			sb_adds(&row[4], jobs[i].line);
		}
		rows_print(&t);
	} else {
		printf("id\tqueue\tstatus\tupdated\terror\n");
	}
	for (size_t i = 0; table_format() == TABLE_TSV && i < n; i++) {
		put_text(&sb, jobs[i].id);
		putchar('\t');
		put_text(&sb, jobs[i].queue);
		printf("\t%s\t", jobs[i].retrying ? "retrying" : "failed");
		put_time(jobs[i].updated);
		putchar('\t');
		put_text(&sb, jobs[i].line);
		putchar('\n');
	}
	if (n == CAUSES_SHOWN)
		fprintf(stderr, "kyu: causes: the latest %d shown\n", CAUSES_SHOWN);
	causes_jobs_free(jobs, n);
	sb_free(&sb);
	return 0;
}

int cmd_causes(struct db *db, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "queue", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	const char *queue = NULL;
	struct causes c;
	int opt;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "q:", longs, NULL)) != -1) {
		if (opt != 'q') {
			fprintf(stderr, "kyu: causes: see kyu causes --help\n");
			return EXIT_USAGE;
		}
		queue = optarg;
	}
	if (argc - optind > 1 || (queue && !*queue) || (optind < argc && !*argv[optind])) {
		fprintf(stderr, "kyu: causes: expected [-q QUEUE] [CAUSE] (kyu causes --help)\n");
		return EXIT_USAGE;
	}
	if (!db)
		return 0;
	table_read_now(db);
	if (optind < argc)
		return show_jobs(db, argv[optind], queue);
	if (causes_read(&c, queue, NULL, cmd_causes_run, db) < 0)
		return cli_die_db(db, "causes");
	if (table_format() == TABLE_TSV)
		list_groups(&c);
	else
		list_groups_as(&c);
	if (c.window_full)
		fprintf(stderr, "kyu: causes: of the latest %d failed and %d waiting jobs only\n",
			CAUSES_SCAN, CAUSES_SCAN);
	causes_free(&c);
	return 0;
}
