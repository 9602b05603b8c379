#include "cmd_causes.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "common/causes.h"
#include "common/text.h"
#include "cli.h"

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
		fprintf(stderr, "kyu: causes: no cause %s among the failed and retrying jobs%s%s "
				"(kyu causes lists them)\n", key, queue ? " of queue " : "", queue ? queue : "");
		return 1;
	}
	if (causes_jobs(text, queue, CAUSES_SHOWN, NULL, cmd_causes_run, db, &jobs, &n) < 0)
		return cli_die_db(db, "causes");
	printf("id\tqueue\tstatus\tupdated\terror\n");
	for (size_t i = 0; i < n; i++) {
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
	if (optind < argc)
		return show_jobs(db, argv[optind], queue);
	if (causes_read(&c, queue, NULL, cmd_causes_run, db) < 0)
		return cli_die_db(db, "causes");
	list_groups(&c);
	if (c.window_full)
		fprintf(stderr, "kyu: causes: of the latest %d failed and %d waiting jobs only\n", CAUSES_SCAN,
			CAUSES_SCAN);
	causes_free(&c);
	return 0;
}
