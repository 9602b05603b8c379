/* What a queue needs and the order of it (common/attention.h), which kyu
 * web's overview and kyu queues share. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/attention.h"
#include "check.h"

/* A reply of up to 8 rows of 4 cells (NULL where the string is NULL). */
struct fake {
	char *cells[8 * 4];
	unsigned long lens[8 * 4];
	struct db_result r;
};

static void fake_row(struct fake *f, unsigned n_cols, const char *const *v)
{
	size_t row = f->r.n_rows++;

	for (unsigned i = 0; i < n_cols; i++) {
		f->cells[row * n_cols + i] = (char *)(uintptr_t)v[i];
		f->lens[row * n_cols + i] = v[i] ? strlen(v[i]) : 0;
	}
	f->r.n_cols = n_cols;
	f->r.cells = f->cells;
	f->r.lens = f->lens;
}

static struct attention_queue *add(struct attention_table *t, const char *name)
{
	return attention_get(t, name, strlen(name));
}

/* The order of the overview (docs/dashboard.md), each rule and its
 * thresholds, over queues made as the statements' rows would make them. */
static void test_order(void)
{
	struct attention_table t = { 0 };
	struct fake hour = { 0 }, oldest = { 0 }, running = { 0 }, names = { 0 };
	const char *want[] = { "storm", "burst", "stuck-b", "stuck-a", "few",  "runner",
			       "due-a", "due-b", "almost",  "calm",    "idle", "three" };
	const char *words[] = { "failing", "failing", "stuck", "stuck", "failed", "busy",
				"busy",    "busy",    "idle",  "idle",  "idle",   "idle" };
	char got[512] = "", expect[512] = "";

	/* failing: 3 failed attempts and no more succeeded; most first. */
	fake_row(&hour, 4, (const char *[]){ "storm", "10", "2", "30" });
	fake_row(&hour, 4, (const char *[]){ "burst", "3", "3", "0" });
	/* failed: fewer than 3, or fewer than the succeeded. */
	fake_row(&hour, 4, (const char *[]){ "few", "100", "1", "4" });
	fake_row(&hour, 4, (const char *[]){ "almost", "0", "0", "0" });
	fake_row(&hour, 4, (const char *[]){ "calm", "7", "0", "0" });
	attention_add_hour(&t, &hour.r);
	/* stuck: due for 60 s or more, longest first; busy below that. */
	fake_row(&oldest, 3, (const char *[]){ "stuck-a", "60", "1" });
	fake_row(&oldest, 3, (const char *[]){ "stuck-b", "3600.5", "1" });
	fake_row(&oldest, 3, (const char *[]){ "due-a", "59.9", "1" });
	fake_row(&oldest, 3, (const char *[]){ "due-b", "2", "1" });
	fake_row(&oldest, 3, (const char *[]){ "three", "0", "0" });
	attention_add_oldest(&t, &oldest.r);
	/* busy: most running first, then longest due. */
	fake_row(&running, 2, (const char *[]){ "runner", "2" });
	CHECK(attention_add_running(&t, &running.r) == 2);
	fake_row(&names, 1, (const char *[]){ "idle" });
	fake_row(&names, 1, (const char *[]){ "storm" });
	attention_add_names(&t, &names.r);
	CHECK(t.n == 12);
	attention_sort(&t, false);
	for (size_t i = 0; i < t.n; i++) {
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s:%s ", t.e[i].name,
			 attention_name(t.e[i].att));
		snprintf(expect + strlen(expect), sizeof(expect) - strlen(expect), "%s:%s ",
			 want[i], words[i]);
	}
	CHECK_STR(got, expect);
	/* The hour's sums were known; the storm's age and more were kept
	 * by name after the sort (the index is built again). */
	CHECK(add(&t, "storm")->succeeded_known && add(&t, "storm")->retried_known);
	CHECK(add(&t, "stuck-b")->waiting && add(&t, "stuck-b")->due);
	CHECK(add(&t, "runner")->running == 2 && t.n == 12);

	/* By name: bytes, a prefix first. */
	CHECK(add(&t, "q") && add(&t, "q1") && add(&t, "Q") && t.n == 15);
	attention_sort(&t, true);
	got[0] = '\0';
	for (size_t i = 0; i < t.n; i++)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s ", t.e[i].name);
	CHECK_STR(got, "Q almost burst calm due-a due-b few idle q q1 runner storm stuck-a "
		       "stuck-b three ");
	attention_free(&t);
	CHECK(t.n == 0 && t.e == NULL);
}

/* A schema without kyu_minutes: retries not known (NULL). */
static void test_unknown(void)
{
	struct attention_table t = { 0 };
	struct fake hour = { 0 };

	fake_row(&hour, 4, (const char *[]){ "crash", "0", "3", NULL });
	attention_add_hour(&t, &hour.r);
	CHECK(t.n == 1 && t.e[0].succeeded_known && !t.e[0].retried_known);
	attention_rank(&t.e[0]);
	CHECK(t.e[0].att == ATT_FAILING && t.e[0].a == 3);
	CHECK_STR(attention_name(ATT_IDLE), "idle");
	CHECK_STR(attention_name((enum attention)99), "idle");
	attention_free(&t);
}

/* kyu queues' hour: failed and retried of every queue first (succeeded
 * NULL: left as it was), then the succeeded of those that may be failing
 * alone. */
static void test_hour_split(void)
{
	struct attention_table t = { 0 };
	struct fake failed = { 0 }, succeeded = { 0 };
	struct strbuf sb = { 0 };

	CHECK(!attention_sql_succeeded(&sb, &t) && sb.len == 0);
	fake_row(&failed, 4, (const char *[]){ "storm", NULL, "2", "30" });
	fake_row(&failed, 4, (const char *[]){ "few", NULL, "1", "1" });
	fake_row(&failed, 4, (const char *[]){ "o'k", NULL, "3", "0" });
	attention_add_hour(&t, &failed.r);
	CHECK(t.n == 3 && !t.e[0].succeeded_known && t.e[0].retried_known);
	CHECK(attention_sql_succeeded(&sb, &t));
	CONTAINS(sb.buf, "SUM(succeeded), NULL, NULL FROM kyu_minutes WHERE minute IN (");
	CONTAINS(sb.buf, "INTERVAL 59 MINUTE) AND queue IN ('storm', 'o\\'k') GROUP BY queue");
	LACKS(sb.buf, "'few'");
	/* o'k: 3 failed, 5 succeeded: failed, not failing. */
	fake_row(&succeeded, 4, (const char *[]){ "o'k", "5", NULL, NULL });
	attention_add_hour(&t, &succeeded.r);
	CHECK(add(&t, "o'k")->succeeded == 5 && add(&t, "o'k")->failed == 3);
	attention_sort(&t, false);
	CHECK(strcmp(t.e[0].name, "storm") == 0 && t.e[0].att == ATT_FAILING);
	CHECK(strcmp(t.e[1].name, "o'k") == 0 && t.e[1].att == ATT_FAILED);
	CHECK(strcmp(t.e[2].name, "few") == 0 && t.e[2].att == ATT_FAILED);
	/* Many that may be failing: a read of the hour, not 60 x N keys. */
	for (int i = 0; i < 150; i++) {
		char name[16];
		snprintf(name, sizeof(name), "s%03d", i);
		add(&t, name)->failed = 3;
	}
	sb.len = 0;
	CHECK(attention_sql_succeeded(&sb, &t));
	CONTAINS(sb.buf, "WHERE minute > ");
	LACKS(sb.buf, "minute IN");
	sb_free(&sb);
	attention_free(&t);
}

/* Many queues: the index grows and finds each one again. */
static void test_many(void)
{
	struct attention_table t = { 0 };
	char name[16];
	int found = 0;

	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "q%05d", i);
		add(&t, name)->running = i;
	}
	attention_sort(&t, false);
	CHECK(t.n == 10000 && strcmp(t.e[0].name, "q09999") == 0);
	for (int i = 0; i < 10000; i++) {
		snprintf(name, sizeof(name), "q%05d", i);
		found += add(&t, name)->running == i;
	}
	CHECK(found == 10000 && t.n == 10000);
	attention_free(&t);
}

int main(void)
{
	test_order();
	test_unknown();
	test_hour_split();
	test_many();
	return check_done("test_attention");
}
