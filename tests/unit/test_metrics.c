#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/board.h"
#include "common/metrics.h"
#include "common/util.h"
#include "check.h"

static char *render(const struct board *b, const struct metrics_table *t)
{
	struct strbuf sb = { 0 };
	metrics_render(&sb, b, 3, t);
	return sb.buf;
}

/* The line that starts with prefix, up to its newline, or "". */
static const char *line_of(const char *text, const char *prefix)
{
	static char line[512];
	size_t n = strlen(prefix);
	const char *p = text;

	line[0] = '\0';
	while (p && *p) {
		if (strncmp(p, prefix, n) == 0) {
			size_t len = strcspn(p, "\n");
			snprintf(line, sizeof(line), "%.*s", (int)len, p);
			return line;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return line;
}

static void test_board_file(void)
{
	struct board *b = NULL, *ro = NULL;
	int fd = -1;

	CHECK(board_create(&b, &fd) == 0);
	if (!b)
		return;
	board_count(&b->worker[0], "mail", BJ_STARTED);
	CHECK(board_map(fd, false, &ro) == 0);
	if (ro) {
		/* The same memory, seen by another mapping. */
		CHECK(board_load(&ro->worker[0].queue[0].n[BJ_STARTED]) == 1);
		CHECK_STR(ro->worker[0].queue[0].name, "mail");
		board_unmap(ro);
	}
	/* Not a board: refused. */
	{
		int other = memfd_create("other", MFD_CLOEXEC);
		struct board *x = NULL;
		CHECK(other >= 0 && ftruncate(other, 4096) == 0);
		CHECK(board_map(other, false, &x) < 0 && x == NULL);
		close(other);
	}
	board_unmap(b);
	close(fd);
}

static void test_render(void)
{
	struct board *b = calloc(1, sizeof(*b));
	struct metrics_queue q[2] = {
		{ .name = "mail", .waiting = 7, .due = 3, .running = 2, .blocked = 4, .oldest_due_age = 12.5 },
		{ .name = "a\"b\\c\nd", .waiting = 1 },
	};
	struct metrics_table t = { .read = true, .ok = true, .age = 0.25, .took = 0.002,
				   .queues = q, .n = 2 };
	char *text;

	/* Two workers count into the same queue; the exposition sums them. */
	board_count(&b->worker[0], "mail", BJ_STARTED);
	board_count(&b->worker[0], "mail", BJ_STARTED);
	board_count(&b->worker[5], "mail", BJ_STARTED);
	board_count(&b->worker[5], "mail", BJ_TIMED_OUT);
	board_count(&b->worker[5], "zeta", BJ_FAILED);
	board_count(&b->worker[0], "a\"b\\c\nd", BJ_GIVEN_BACK);
	board_add(&b->worker[0], BC_DEADLOCKS, 2);
	board_add(&b->worker[1], BC_DEADLOCKS, 1);
	board_set(&b->worker[0], BG_RUNNING, 4);
	board_set(&b->worker[1], BG_RUNNING, 1);
	board_restarted(b);
	/* 0.0003 and exactly 0.001 s (a bound is inclusive), 7 s, an hour
	 * and a half: the first bucket, the second, 10 s, +Inf. */
	board_observe(&b->worker[0], BH_CLAIM, 0.0003);
	board_observe(&b->worker[0], BH_CLAIM, 0.001);
	board_observe(&b->worker[1], BH_CLAIM, 7);
	board_observe(&b->worker[1], BH_CLAIM, 5400);
	board_observe(&b->worker[1], BH_BATCH, 5);
	board_observe(&b->worker[1], BH_BATCH, 0);

	text = render(b, &t);
	CHECK_STR(line_of(text, "# TYPE kyu_jobs_started_total"), "# TYPE kyu_jobs_started_total counter");
	CHECK_STR(line_of(text, "kyu_jobs_started_total{queue=\"mail\"}"),
		  "kyu_jobs_started_total{queue=\"mail\"} 3");
	CHECK_STR(line_of(text, "kyu_jobs_timed_out_total{queue=\"mail\"}"),
		  "kyu_jobs_timed_out_total{queue=\"mail\"} 1");
	/* Every queue seen has every counter, zero included. */
	CHECK_STR(line_of(text, "kyu_jobs_started_total{queue=\"zeta\"}"),
		  "kyu_jobs_started_total{queue=\"zeta\"} 0");
	CHECK_STR(line_of(text, "kyu_jobs_failed_total{queue=\"zeta\"}"),
		  "kyu_jobs_failed_total{queue=\"zeta\"} 1");
	/* Label values escaped: quote, backslash, newline. */
	CHECK_STR(line_of(text, "kyu_jobs_given_back_total{queue=\"a"),
		  "kyu_jobs_given_back_total{queue=\"a\\\"b\\\\c\\nd\"} 1");
	CHECK_STR(line_of(text, "kyu_deadlocks_retried_total "), "kyu_deadlocks_retried_total 3");
	CHECK_STR(line_of(text, "kyu_worker_restarts_total "), "kyu_worker_restarts_total 1");
	CHECK_STR(line_of(text, "kyu_jobs_running "), "kyu_jobs_running 5");
	CHECK_STR(line_of(text, "kyu_workers "), "kyu_workers 3");
	/* Buckets are cumulative; +Inf equals the count. */
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"0.0005\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"0.0005\"} 1");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"0.001\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"0.001\"} 2");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"5\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"5\"} 2");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"10\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"10\"} 3");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"3600\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"3600\"} 3");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_bucket{le=\"+Inf\"}"),
		  "kyu_claim_duration_seconds_bucket{le=\"+Inf\"} 4");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_count"), "kyu_claim_duration_seconds_count 4");
	CHECK_STR(line_of(text, "kyu_claim_duration_seconds_sum"), "kyu_claim_duration_seconds_sum 5407.001300");
	CHECK_STR(line_of(text, "kyu_claim_batch_size_bucket{le=\"1\"}"),
		  "kyu_claim_batch_size_bucket{le=\"1\"} 1");
	CHECK_STR(line_of(text, "kyu_claim_batch_size_sum"), "kyu_claim_batch_size_sum 5");
	/* The table's figures. */
	CHECK_STR(line_of(text, "kyu_database_up"), "kyu_database_up 1");
	CHECK_STR(line_of(text, "kyu_queue_due{queue=\"mail\"}"), "kyu_queue_due{queue=\"mail\"} 3");
	CHECK_STR(line_of(text, "kyu_queue_blocked{queue=\"mail\"}"), "kyu_queue_blocked{queue=\"mail\"} 4");
	CHECK_STR(line_of(text, "kyu_queue_oldest_due_age_seconds{queue=\"mail\"}"),
		  "kyu_queue_oldest_due_age_seconds{queue=\"mail\"} 12.500");
	CHECK_STR(line_of(text, "kyu_queue_waiting{queue=\"a"), "kyu_queue_waiting{queue=\"a\\\"b\\\\c\\nd\"} 1");
	CHECK(text[strlen(text) - 1] == '\n');
	free(text);

	/* Before any reading, no table families at all; after a failed one,
	 * kyu_database_up 0 and no per-queue figures. */
	text = render(b, NULL);
	LACKS(text, "kyu_database_up");
	free(text);
	t.ok = false;
	t.n = 0;
	text = render(b, &t);
	CHECK_STR(line_of(text, "kyu_database_up"), "kyu_database_up 0");
	LACKS(text, "kyu_queue_waiting{");
	free(text);
	free(b);
}

/* More queues than a worker keeps: the rest are counted under one label,
 * and so is a name too long to be a queue's. */
static void test_overflow(void)
{
	struct board *b = calloc(1, sizeof(*b));
	char name[32], longname[BOARD_QUEUE_NAME + 10];
	char *text;

	for (int i = 0; i < BOARD_QUEUES + 5; i++) {
		snprintf(name, sizeof(name), "q%03d", i);
		board_count(&b->worker[2], name, BJ_STARTED);
	}
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	board_count(&b->worker[2], longname, BJ_STARTED);
	CHECK(board_n_queues(&b->worker[2]) == BOARD_QUEUES);
	text = render(b, NULL);
	CONTAINS(text, "kyu_jobs_started_total{queue=\"q063\"} 1\n");
	LACKS(text, "q064");
	CONTAINS(text, "kyu_jobs_started_total{queue=\"" BOARD_OTHER_QUEUE "\"} 6\n");
	free(text);
	free(b);
}

/* Every metric family is listed in man/kyud.8 (".It Sy NAME"). */
static void check_docs(const char *src)
{
	char file[512], *man = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(file, sizeof(file), "%s/man/kyud.8", src);
	f = fopen(file, "r");
	CHECK(f != NULL);
	if (!f)
		return;
	getdelim(&man, &len, '\0', f);
	fclose(f);
	for (size_t i = 0; metrics_family_at(i); i++) {
		char want[128];
		snprintf(want, sizeof(want), "\n.It Sy %s\n", metrics_family_at(i));
		check_count++;
		if (!man || !strstr(man, want)) {
			check_failures++;
			fprintf(stderr, "man/kyud.8 lacks \"%s\" (METRICS)\n", want + 1);
		}
	}
	free(man);
}

int main(void)
{
	test_board_file();
	test_render();
	test_overflow();
	if (getenv("KYU_SRC"))
		check_docs(getenv("KYU_SRC"));
	else
		fprintf(stderr, "KYU_SRC not set: documentation checks skipped\n");
	return check_done("test_metrics");
}
