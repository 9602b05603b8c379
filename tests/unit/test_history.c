/* The rows of kyu_attempts (worker/history.h): which rows the INSERT
 * names and how, the outcome each gets (timeouts named by kyud, the rest
 * from the status the result left), the daemon and the output tail as
 * configured, pending rows carried to the next round trip, unsure rows
 * guarded by the session's start. */
#include <stdlib.h>
#include <string.h>

#include "common/db.h"
#include "worker/history.h"
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

static void test_build(void)
{
	struct history_writer wr = { .daemon = "h:1:ab'c", .output = 4096 };
	struct history_pending p = { 0 };
	struct finish f[3] = { fin(1, 11, OUT_SUCCEEDED), fin(2, 22, OUT_RELEASE),
			       fin(3, 33, OUT_CANCELLED) };
	struct strbuf sb = { 0 };

	/* A give-back is no attempt; nothing at all, nothing. */
	CHECK(!history_build(&sb, &wr, &p, f + 1, 1));
	CHECK(!history_build(&sb, &wr, &p, NULL, 0));
	CHECK(sb.len == 0);

	CHECK(history_build(&sb, &wr, &p, f, 3));
	CHECK(strncmp(sb.buf, "; INSERT INTO kyu_attempts (job_seq, job_id, attempt, ", 54) == 0);
	CONTAINS(sb.buf, "SELECT seq, id, attempts, queue, 'h:1:ab\\'c', host, pid, started_at, ");
	CONTAINS(sb.buf, "CASE WHEN status = 'cancelled' THEN 'cancelled' WHEN status = 'succeeded' "
			 "THEN 'succeeded' WHEN status = 'waiting' THEN 'retried' ELSE 'failed' END");
	CONTAINS(sb.buf, "RIGHT(output, 4096) FROM kyu_jobs WHERE seq IN (1,3) AND owner = CASE seq "
			 "WHEN 1 THEN 11 WHEN 3 THEN 33 END AND status IN ('succeeded', 'failed', "
			 "'waiting', 'cancelled')");
	LACKS(sb.buf, "'timeout'");
	LACKS(sb.buf, DB_SESSION_START);
	CHECK(sb.len <= history_room(&p, 3));

	/* A timeout, kept pending, unsure; no daemon, no tail. */
	f[0].timeout = true;
	f[0].unsure = true;
	history_keep(&p, false, f, 2);
	CHECK(p.n == 1 && p.rows[0].seq == 1 && p.rows[0].timeout && p.rows[0].unsure);
	wr.daemon = NULL;
	wr.output = 0;
	sb_reset(&sb);
	CHECK(history_build(&sb, &wr, &p, f + 2, 1));
	CONTAINS(sb.buf, "SELECT seq, id, attempts, queue, NULL, host, ");
	CONTAINS(sb.buf, "WHEN status = 'cancelled' THEN 'cancelled' WHEN seq IN (1) THEN 'timeout' ");
	CONTAINS(sb.buf, "max_rss, NULL FROM kyu_jobs WHERE seq IN (1,3) AND owner = CASE seq WHEN 1 "
			 "THEN 11 WHEN 3 THEN 33 END");
	CONTAINS(sb.buf, " AND (seq NOT IN (1) OR updated_at >= " DB_SESSION_START ")");
	CHECK(sb.len <= history_room(&p, 1));

	history_clear(&p);
	CHECK(p.n == 0);

	/* [kyud] history = failures: a first attempt that succeeded gets no
	 * row (nor a statement); a later one, or a first that failed, does;
	 * history = all writes the first success too. */
	f[0] = fin(5, 55, OUT_SUCCEEDED);
	f[0].first = true;
	f[1] = fin(6, 66, OUT_SUCCEEDED);
	f[2] = fin(7, 77, OUT_RETRY);
	f[2].first = true;
	sb_reset(&sb);
	CHECK(!history_build(&sb, &wr, &p, f, 1));
	history_keep(&p, false, f, 1);
	CHECK(p.n == 0 && sb.len == 0);
	CHECK(history_build(&sb, &wr, &p, f, 3));
	CONTAINS(sb.buf, "WHERE seq IN (6,7) AND owner");
	wr.all = true;
	sb_reset(&sb);
	CHECK(history_build(&sb, &wr, &p, f, 3));
	CONTAINS(sb.buf, "WHERE seq IN (5,6,7) AND owner");
	history_keep(&p, true, f, 1);
	CHECK(p.n == 1 && p.rows[0].seq == 5);
	history_free(&p);
	sb_free(&sb);
}

int main(void)
{
	test_build();
	return check_done("test_history");
}
