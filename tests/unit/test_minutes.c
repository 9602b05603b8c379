/* The count of ended jobs (kyu_minutes): which rows the statement names and
 * how, pending rows carried to the next count, unsure rows guarded by the
 * session's start, and the split of a reply into the body's view and the
 * count's outcome. */
#include <stdlib.h>
#include <string.h>

#include "common/minutes.h"
#include "worker/results.h"
#include "check.h"

static struct finish fin(uint64_t seq, uint64_t token, enum outcome o)
{
	struct finish f;

	memset(&f, 0, sizeof(f));
	f.seq = seq;
	f.token = token;
	f.outcome = o;
	return f;
}

static void test_count(void)
{
	struct minutes_writer wr = { .daemon = "h:1:ab'c", .worker = 3 };
	struct minutes_pending p = { 0 };
	struct finish f[3] = { fin(1, 11, OUT_SUCCEEDED), fin(2, 22, OUT_RELEASE),
			       fin(3, 33, OUT_FAILED) };
	struct strbuf sb = { 0 };

	/* Nothing to count: a give-back alone, or nothing at all. */
	CHECK(!minutes_count_build(&sb, &wr, &p, f + 1, 1));
	CHECK(!minutes_count_build(&sb, &wr, &p, NULL, 0));
	CHECK(sb.len == 0);

	CHECK(minutes_count_build(&sb, &wr, &p, f, 3));
	CHECK(strncmp(sb.buf, "; INSERT INTO kyu_minutes ", 26) == 0);
	CONTAINS(sb.buf, "'h:1:ab\\'c', 3, SUM(status = 'succeeded'), SUM(status = 'failed'), "
			 "SUM(status = 'waiting')");
	CONTAINS(sb.buf,
		 "WHERE seq IN (1,3) AND owner = CASE seq WHEN 1 THEN 11 WHEN 3 THEN 33 END");
	CONTAINS(
		sb.buf,
		"GROUP BY queue ON DUPLICATE KEY UPDATE succeeded = succeeded + VALUES(succeeded)");
	LACKS(sb.buf, DB_SESSION_START);
	CHECK(sb.len <= minutes_count_room(&p, 3));
	sb_free(&sb);

	/* Pending rows ride along; unsure ones need a change this session. */
	minutes_keep(&p, f, 3);
	CHECK(p.n == 2);
	f[0].unsure = true;
	f[0].seq = 5;
	CHECK(minutes_count_build(&sb, &wr, &p, f, 1));
	CONTAINS(
		sb.buf,
		"WHERE seq IN (1,3,5) AND owner = CASE seq WHEN 1 THEN 11 WHEN 3 THEN 33 WHEN 5 THEN 11 END");
	CONTAINS(sb.buf, " AND (seq NOT IN (5) OR updated_at >= " DB_SESSION_START ")");
	sb_free(&sb);
	/* Kept from results that were unsure themselves (minutes_keep). */
	for (int i = 0; i < p.n; i++)
		p.rows[i].unsure = true;
	CHECK(minutes_count_build(&sb, &wr, &p, NULL, 0));
	CONTAINS(sb.buf, " AND (seq NOT IN (1,3) OR updated_at >= ");
	sb_free(&sb);
	minutes_clear(&p);
	CHECK(p.n == 0);
	minutes_free(&p);
}

static void test_split(void)
{
	struct db_result res[4];
	struct db_reply r = { .fail = DB_OK, .n = 3, .r = res }, body;

	memset(res, 0, sizeof(res));
	CHECK(minutes_split(&r, 2, &body) == MINUTES_DONE);
	CHECK(body.n == 2 && body.fail == DB_OK && body.r == res);

	/* The count failed: the body is whole. */
	r.fail = DB_ERROR;
	r.err = "Table 'kyu_minutes' doesn't exist";
	CHECK(minutes_split(&r, 2, &body) == MINUTES_FAILED);
	CHECK(body.n == 2 && body.fail == DB_OK && body.err == NULL);

	/* A statement of the body failed: the count never ran. */
	r.n = 2;
	CHECK(minutes_split(&r, 2, &body) == MINUTES_NOT_RUN);
	CHECK(body.n == 2 && body.fail == DB_ERROR);

	/* Lost, even at the count: the body's reply is not trusted either. */
	r.n = 3;
	r.fail = DB_LOST;
	CHECK(minutes_split(&r, 2, &body) == MINUTES_NOT_RUN);
	CHECK(body.fail == DB_LOST);
}

static void test_unsure_results(void)
{
	struct results rs = { 0 };
	struct outcome_out o;
	const struct finish *f;
	int n, n_plain;

	memset(&o, 0, sizeof(o));
	o.record = true;
	o.outcome = OUT_SUCCEEDED;
	results_add(&rs, 1, 10, false, 0, &o, NULL);
	o.outcome = OUT_FAILED;
	snprintf(o.error, sizeof(o.error), "exit code 3");
	results_add(&rs, 2, 20, false, 0, &o, NULL);
	o.outcome = OUT_SUCCEEDED;
	o.error[0] = '\0';
	results_add(&rs, 3, 30, false, 0, &o, NULL);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(n == 3 && n_plain == 2);
	/* The first two of the batch (both plain successes) went out. */
	results_unsure(&rs, 2);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(f[0].unsure && f[1].unsure && !f[2].unsure);
	results_free(&rs);
}

static void test_cleanup(void)
{
	struct strbuf sb = { 0 };

	minutes_cleanup_build(&sb, 500);
	CHECK_STR(sb.buf,
		  "; DELETE FROM kyu_minutes WHERE @kyu_cleanup = 1 AND minute < " MINUTES_NOW
		  " - INTERVAL 7 DAY LIMIT 500");
	sb_free(&sb);
}

int main(void)
{
	test_count();
	test_split();
	test_unsure_results();
	test_cleanup();
	return check_done("test_minutes");
}
