/* The statements kyud sends and the reading of their replies, without a
 * server: builders are checked on their text, readers on replies built by
 * hand in the shape db.c hands back (struct db_reply / db_result). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db.h"
#include "worker/store.h"
#include "check.h"

/* The escaped form of the marker that ends cut output, as it stands in the
 * statement: "\n[kyu: output cut to fit the server's max_allowed_packet]\n". */
#define CUT_MARK_RAW "\n[kyu: output cut to fit the server's max_allowed_packet]\n"
#define CUT_MARK_SQL "'\\n[kyu: output cut to fit the server\\'s max_allowed_packet]\\n'"

static int count_str(const char *hay, const char *needle)
{
	int k = 0;
	for (const char *p = hay; p && (p = strstr(p, needle)); p += strlen(needle))
		k++;
	return k;
}

/* Split sql on "; " into at most max statements (copies; free them). */
static int split(const char *sql, char **out, int max)
{
	int k = 0;
	const char *p = sql;

	while (p && k < max) {
		const char *e = strstr(p, "; ");
		size_t len = e ? (size_t)(e - p) : strlen(p);
		out[k] = xmalloc(len + 1);
		memcpy(out[k], p, len);
		out[k][len] = '\0';
		k++;
		p = e ? e + 2 : NULL;
	}
	return k;
}

static void free_split(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
}

static bool starts_with(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

static char *quoted(const char *s, size_t len)
{
	struct strbuf sb = { 0 };
	db_quote(&sb, s, len);
	return sb.buf;
}

static void test_quote(void)
{
	struct strbuf sb = { 0 };
	char *q;

	q = quoted("plain text", 10);
	CHECK_STR(q, "'plain text'");
	free(q);
	q = quoted("", 0);
	CHECK_STR(q, "''");
	free(q);
	q = quoted("a\0b", 3);
	CHECK_STR(q, "'a\\0b'");
	free(q);
	q = quoted("\n\r\\'\"\032", 6);
	CHECK_STR(q, "'\\n\\r\\\\\\'\\\"\\Z'");
	free(q);
	q = quoted("it's \"x\"\n", 9);
	CHECK_STR(q, "'it\\'s \\\"x\\\"\\n'");
	free(q);
	/* Only len bytes are read. */
	q = quoted("abc'def", 3);
	CHECK_STR(q, "'abc'");
	free(q);
	/* Other bytes, including non-ASCII and other controls, unchanged. */
	q = quoted("\xc3\xa9\xff\x80\t\x01%_", 8);
	CHECK_STR(q, "'\xc3\xa9\xff\x80\t\x01%_'");
	free(q);
	/* NULL is the SQL NULL, whatever len says. */
	q = quoted(NULL, 5);
	CHECK_STR(q, "NULL");
	free(q);
	db_quotes(&sb, NULL);
	CHECK_STR(sb.buf, "NULL");
	/* It appends. */
	sb_adds(&sb, ", ");
	db_quotes(&sb, "o'k");
	CHECK_STR(sb.buf, "NULL, 'o\\'k'");
	CHECK(sb.len == strlen(sb.buf));
	sb_free(&sb);
	/* A search text found anywhere: its own %, _ and \ are literal (each
	 * backslash doubled again by the quoting). */
	db_quote_like_anywhere(&sb, "50%_a\\b'");
	CHECK_STR(sb.buf, "'%50\\\\%\\\\_a\\\\\\\\b\\'%'");
	sb_free(&sb);
	/* Worst case: every byte escaped. */
	{
		char in[1000], *want = xmalloc(2 * sizeof(in) + 3);
		memset(in, '\'', sizeof(in));
		want[0] = '\'';
		for (size_t i = 0; i < sizeof(in); i++) {
			want[1 + 2 * i] = '\\';
			want[2 + 2 * i] = '\'';
		}
		want[2 * sizeof(in) + 1] = '\'';
		want[2 * sizeof(in) + 2] = '\0';
		q = quoted(in, sizeof(in));
		CHECK_STR(q, want);
		free(q);
		free(want);
	}
}

static void config(struct kyu_config *cfg, int claim, int n_queues)
{
	static char qa[] = "a", qb[] = "b";

	memset(cfg, 0, sizeof(*cfg));
	cfg->lease = 30;
	cfg->max_attempts = 3;
	cfg->time_limit = 3600;
	cfg->backoff_base = 2;
	cfg->backoff_cap = 600;
	cfg->retention = 86400;
	cfg->retention_failed = 604800;
	cfg->cleanup_batch = 1000;
	cfg->claim = claim;
	cfg->queues[0] = qa;
	cfg->queues[1] = qb;
	cfg->n_queues = n_queues;
}

/* A plain success: seq, token, pid. */
static struct finish plain(uint64_t seq, uint64_t token, int pid)
{
	struct finish f = { .seq = seq, .token = token, .pid = pid, .exit_code = 0 };
	return f;
}

static struct finish other(uint64_t seq, uint64_t token, int pid, enum outcome outcome, int exit_code,
			   int sig, const char *error, const char *output, size_t output_len)
{
	struct finish f = {
		.seq = seq,
		.token = token,
		.pid = pid,
		.outcome = outcome,
		.exit_code = exit_code,
		.signal = sig,
		.error = error,
		.output = output,
		.output_len = output_len,
	};
	return f;
}

static struct finish with_cost(struct finish f, uint64_t user_us, uint64_t sys_us, uint64_t max_rss)
{
	f.cost = (struct attempt_cost){ .known = true, .user_us = user_us, .sys_us = sys_us, .max_rss = max_rss };
	return f;
}

static void test_claim_build(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	char *st[8];
	int k;
	const uint64_t tok = 123456789012345ULL;

	/* plain, no queue filter */
	config(&cfg, CLAIM_PLAIN, 0);
	store_claim_build(&sb, &cfg, tok, "h'x", 7, NULL, 0);
	k = split(sb.buf, st, 8);
	CHECK(k == 2);
	CHECK(starts_with(st[0], "UPDATE IGNORE kyu_jobs SET owner = 123456789012345, "));
	CONTAINS(st[0], "lease_until = NOW(6) + INTERVAL 30 SECOND");
	/* Guarded: a row at the column's limit must not make the claim fail. */
	CONTAINS(st[0], "attempts = LEAST(attempts, 4294967294) + 1");
	/* A new attempt has no cost until it ends (nor has one whose worker dies). */
	CONTAINS(st[0], "duration = NULL, cpu_user = NULL, cpu_sys = NULL, max_rss = NULL, ");
	CONTAINS(st[0], "host = 'h\\'x'");
	CONTAINS(st[0], "status = 'running' WHERE due <= NOW(6) AND queue NOT IN (SELECT name FROM "
			"kyu_queues WHERE paused <> 0 OR max_running IS NOT NULL OR rate_limit IS NOT "
			"NULL) AND (concurrency_key IS NULL OR status = 'running' OR concurrency_key NOT IN "
			"(SELECT running_key FROM kyu_jobs WHERE running_key IS NOT NULL)) AND (status <> "
			"'running' OR lease_until <= '1970-01-01 00:00:00.000000') ORDER BY due, "
			"priority LIMIT 7");
	LACKS(st[0], "JOIN");
	LACKS(sb.buf, "queue IN");
	LACKS(sb.buf, "CASE seq");
	CHECK(starts_with(st[1], "SELECT j.seq, j.id, j.queue, j.command, j.argv, j.env, j.cwd, "
				 "j.attempts, j.tempfails, COALESCE(j.max_attempts, 3), "
				 "COALESCE(j.time_limit, 3600), d.next, j.concurrency_key, "
				 "TIMESTAMPDIFF(MICROSECOND, j.run_at, NOW(6)), j.after, j.has_downstream, "
				 "d.todo, j.traceparent, d.now_us, d.fan_n, d.fan_end, d.fan_from FROM (SELECT "
				 "TIMESTAMPDIFF(MICROSECOND, "
				 "'1970-01-01', NOW(6)) AS now_us, "));
	CONTAINS(st[1], "(EXISTS (SELECT 1 FROM kyu_after_todo) OR EXISTS (SELECT 1 FROM kyu_jobs "
			"WHERE after_changed = 1)) AS todo");
	CONTAINS(st[1], "(SELECT MIN(due) FROM kyu_jobs)");
	CONTAINS(st[1], "j.owner = 123456789012345 AND j.status = 'running'");
	CHECK(count_str(sb.buf, "LIMIT") == 1);
	free_split(st, k);
	sb_reset(&sb);

	/* plain, with a queue filter (in the mark and the next-due query) */
	config(&cfg, CLAIM_PLAIN, 2);
	store_claim_build(&sb, &cfg, tok, "host", 4, NULL, 0);
	k = split(sb.buf, st, 8);
	CHECK(k == 2);
	CONTAINS(st[0], " WHERE due <= NOW(6) AND queue IN ('a','b') AND queue NOT IN (SELECT name ");
	CONTAINS(st[0], "ORDER BY due, priority LIMIT 4");
	CONTAINS(st[1], "(SELECT MIN(due) FROM kyu_jobs WHERE 1 AND queue IN ('a','b'))");
	CHECK(count_str(sb.buf, "queue IN ('a','b')") == 2);
	free_split(st, k);
	sb_reset(&sb);

	/* join */
	config(&cfg, CLAIM_JOIN, 0);
	store_claim_build(&sb, &cfg, tok, "host", 5, NULL, 0);
	k = split(sb.buf, st, 8);
	CHECK(k == 2);
	CHECK(starts_with(st[0], "UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE due <= NOW(6) "
				 "AND queue NOT IN (SELECT name FROM kyu_queues WHERE "));
	CONTAINS(st[0], "ORDER BY due, priority LIMIT 5 FOR UPDATE) AS c STRAIGHT_JOIN kyu_jobs ON "
			"kyu_jobs.seq = c.seq SET owner = 123456789012345, ");
	LACKS(sb.buf, "SKIP LOCKED");
	LACKS(sb.buf, "queue IN");
	CHECK(count_str(sb.buf, "LIMIT") == 1);
	CHECK(count_str(sb.buf, "WHERE due <= NOW(6)") == 1);
	CHECK(count_str(sb.buf, "IGNORE") == 1);
	CONTAINS(st[1], "(SELECT MIN(due) FROM kyu_jobs)");
	free_split(st, k);
	sb_reset(&sb);

	config(&cfg, CLAIM_JOIN, 1);
	store_claim_build(&sb, &cfg, tok, "host", 5, NULL, 0);
	CONTAINS(sb.buf, "IGNORE (SELECT seq FROM kyu_jobs WHERE due <= NOW(6) AND queue IN ('a') AND ");
	CONTAINS(sb.buf, "BY due, priority LIMIT 5 FOR UPDATE) AS c STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq "
			 "= c.seq SET owner = ");
	CONTAINS(sb.buf, "(SELECT MIN(due) FROM kyu_jobs WHERE 1 AND queue IN ('a'))");
	sb_reset(&sb);

	/* skip locked */
	config(&cfg, CLAIM_SKIP_LOCKED, 0);
	store_claim_build(&sb, &cfg, tok, "host", 9, NULL, 0);
	CHECK(starts_with(sb.buf, "UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE due <= NOW(6) "));
	CONTAINS(sb.buf, "ORDER BY due, priority LIMIT 9 FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN "
			 "kyu_jobs ON kyu_jobs.seq = c.seq SET owner = 123456789012345, ");
	CHECK(count_str(sb.buf, "; ") == 1);
	sb_reset(&sb);
	config(&cfg, CLAIM_SKIP_LOCKED, 2);
	store_claim_build(&sb, &cfg, tok, "host", 9, NULL, 0);
	CONTAINS(sb.buf, "WHERE due <= NOW(6) AND queue IN ('a','b') AND queue NOT IN");
	CONTAINS(sb.buf, "ORDER BY due, priority LIMIT 9 FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN ");
	CHECK(count_str(sb.buf, "queue IN ('a','b')") == 2);
	sb_reset(&sb);

	/* A claim that waited for a row lock: the next ones skip locked rows
	 * whatever the configured shape; a restricted queue's statements
	 * always do, with the picked rows joined first. */
	{
		struct qpart parts[2] = { { .name = NULL, .n = 4 }, { .name = "lim", .n = 2, .restricted = true } };
		struct claim_plan plan = { .parts = parts, .n_parts = 2, .skip_locked = true };
		struct claim_layout lay;

		config(&cfg, CLAIM_PLAIN, 0);
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CHECK(starts_with(sb.buf, "UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE due <= NOW(6) "));
		CONTAINS(sb.buf, "LIMIT 4 FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq = c.seq SET ");
		CONTAINS(sb.buf, "PREPARE kyu_reclaim FROM 'UPDATE (SELECT seq FROM kyu_jobs WHERE queue = ? AND "
				 "status = \\'running\\' AND lease_until <= NOW(6) AND lease_until <= "
				 "CAST(@kyu_cut AS DATETIME(6)) ORDER BY lease_until LIMIT ? FOR "
				 "UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq = c.seq SET owner = ?");
		CONTAINS(sb.buf, "PREPARE kyu_claim FROM 'UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE queue = ? AND "
				 "status = \\'waiting\\' AND due <= NOW(6)");
		CONTAINS(sb.buf, "ORDER BY due, priority LIMIT ? FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN kyu_jobs ON "
				 "kyu_jobs.seq = c.seq SET owner = ?");
		/* Placeholders in text order: queue, how many, token. */
		CONTAINS(sb.buf, "EXECUTE kyu_claim USING @kyu_q, @kyu_n, @kyu_tok");
		sb_reset(&sb);
		plan.skip_locked = false;
		plan.prepared = true;
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CHECK(starts_with(sb.buf, "UPDATE IGNORE kyu_jobs SET owner = "));
		LACKS(sb.buf, "PREPARE");
		sb_reset(&sb);
		/* Expired leases are taken over only up to the bound lease.c
		 * gives (0 above: none), in both forms (issue 44.2). */
		plan.lease_cut_us = 1795000000123456LL;
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CONTAINS(sb.buf, "AND (status <> 'running' OR lease_until <= '2026-11-18 11:06:40.123456') "
				 "ORDER BY due, priority LIMIT 4");
		CONTAINS(sb.buf, "@kyu_q = 'lim', @kyu_cut = '2026-11-18 11:06:40.123456'; ");
		sb_reset(&sb);
	}

	/* One named queue: its (queue, due, priority) range, forced (the
	 * optimizer otherwise read the queue's finished rows too), in both
	 * shapes; the catch-all has no hint. */
	{
		struct qpart parts[2] = { { .name = NULL, .n = 4 }, { .name = "mail", .n = 3 } };
		struct claim_plan plan = { .parts = parts, .n_parts = 2 };
		struct claim_layout lay;

		config(&cfg, CLAIM_PLAIN, 0);
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CHECK(count_str(sb.buf, "FORCE INDEX") == 1);
		CONTAINS(sb.buf, "UPDATE IGNORE kyu_jobs FORCE INDEX (kyu_jobs_queue_due) SET owner = ");
		CONTAINS(sb.buf, "WHERE due <= NOW(6) AND queue = 'mail' AND NOT EXISTS");
		sb_reset(&sb);
		plan.skip_locked = true;
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CHECK(count_str(sb.buf, "FORCE INDEX") == 1);
		CONTAINS(sb.buf, "(SELECT seq FROM kyu_jobs FORCE INDEX (kyu_jobs_queue_due) WHERE due <= NOW(6) "
				 "AND queue = 'mail'");
		sb_reset(&sb);
	}

	/* The directory: whole when the fan may not begin; with dir_fan_at,
	 * past the walk's names it first reads up to dir_fan_at + 1 due queues
	 * the fan serves, and the SELECT returns where the fan begins. With a
	 * queues list the directory is constants either way. */
	{
		struct qpart parts[1] = { { .name = NULL, .n = 4 } };
		struct claim_plan plan = { .parts = parts, .n_parts = 1, .directory = true };
		struct claim_layout lay;

		config(&cfg, CLAIM_PLAIN, 0);
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CONTAINS(sb.buf, "IF q IS NOT NULL THEN SELECT IFNULL(JSON_ARRAYAGG(JSON_ARRAY(g.queue, "
				 "g.next)), '[]') INTO dir FROM (SELECT queue, MIN(due) AS next FROM "
				 "kyu_jobs WHERE due IS NOT NULL GROUP BY queue) AS g; END IF; ");
		LACKS(sb.buf, "SET @kyu_fan_from");
		CHECK(!lay.dir_cut && lay.dir_at == 1);
		sb_reset(&sb);
		plan.dir_fan_at = 32;
		plan.dir_fan_from_ppm = 500000;
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CONTAINS(sb.buf, "SET @kyu_fan_from = NULL; ");
		CONTAINS(sb.buf, "WHERE status = 'waiting' AND due <= NOW(6) AND queue NOT IN (SELECT name "
				 "FROM kyu_queues WHERE paused <> 0 OR max_running IS NOT NULL OR "
				 "rate_limit IS NOT NULL OR key_max_running > 1) GROUP BY queue ORDER BY "
				 "queue LIMIT 33) AS g; IF n > 32 THEN SET dir = JSON_MERGE_PRESERVE(dir, ");
		CONTAINS(sb.buf, "SELECT COUNT(*) * 500000 DIV 1000000 INTO n FROM (SELECT name FROM "
				 "kyu_queue_names UNION SELECT name FROM kyu_queue_names_new) AS a; ");
		CONTAINS(sb.buf, "ELSE SELECT IFNULL(JSON_ARRAYAGG(JSON_ARRAY(g.queue, g.next)), '[]') INTO "
				 "dir FROM (SELECT queue, MIN(due) AS next FROM kyu_jobs WHERE due IS NOT NULL "
				 "GROUP BY queue) AS g; END IF; END IF; ");
		CONTAINS(sb.buf, "@kyu_fan_from AS fan_from");
		CHECK(lay.dir_cut && lay.dir_at == 1);
		sb_reset(&sb);
		config(&cfg, CLAIM_PLAIN, 2);
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		LACKS(sb.buf, "SET @kyu_fan_from");
		CHECK(!lay.dir_cut);
		sb_reset(&sb);
	}

	/* A queue with key_max_running > 1: its keyed form (the count of the
	 * key's running rows against the queue's limit, read when the
	 * statement runs, and the slot set before status); every other part
	 * keeps the statements of a schema without slots. */
	{
		struct qpart parts[4] = { { .name = NULL, .n = 4 }, { .name = "mail", .n = 3 },
					  { .name = "kq", .n = 2, .keyed = true },
					  { .name = "kr", .n = 2, .keyed = true, .restricted = true } };
		struct claim_plan plan = { .parts = parts, .n_parts = 3, .prepared = true };
		struct claim_layout lay;

		config(&cfg, CLAIM_PLAIN, 0);
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		k = split(sb.buf, st, 8);
		CHECK(k == 4);
		LACKS(st[0], "key_slot");
		LACKS(st[1], "key_slot");
		CONTAINS(st[0], "concurrency_key NOT IN (SELECT running_key FROM kyu_jobs WHERE "
				"running_key IS NOT NULL)");
		CHECK(starts_with(st[2], "UPDATE IGNORE kyu_jobs FORCE INDEX (kyu_jobs_queue_due) SET "));
		CONTAINS(st[2], "host = 'host', key_slot = IF(kyu_jobs.concurrency_key IS NULL OR "
				"kyu_jobs.status = 'running', kyu_jobs.key_slot, ");
		CONTAINS(st[2], "), 0))), status = 'running' WHERE due <= NOW(6) AND queue = 'kq' ");
		CONTAINS(st[2], "OR kyu_jobs.concurrency_key NOT IN (SELECT r.concurrency_key FROM "
				"kyu_jobs AS r WHERE r.running_key IS NOT NULL GROUP BY r.concurrency_key "
				"HAVING COUNT(*) >= IFNULL((SELECT key_max_running FROM kyu_queues WHERE "
				"name = 'kq'), 1))) AND (status <> 'running' OR lease_until <= "
				"'1970-01-01 00:00:00.000000') ORDER BY due, priority LIMIT 2");
		LACKS(st[2], "NOT IN (SELECT running_key");
		CHECK(lay.n_stmts == 4 && lay.asked == 9);
		free_split(st, k);
		sb_reset(&sb);

		/* A restricted one: kyu_claim_keyed, prepared in the claim that
		 * uses it, after the prepared statements of every restricted
		 * queue, which stay as they were. */
		plan.n_parts = 4;
		plan.prepared = false;
		store_claim_build_plan(&sb, &cfg, tok, "host", &plan, NULL, 0, &lay);
		CHECK(count_str(sb.buf, "PREPARE kyu_claim_keyed FROM 'UPDATE IGNORE (SELECT seq FROM "
					"kyu_jobs WHERE queue = ? AND status = \\'waiting\\' AND due <= "
					"NOW(6) AND (kyu_jobs.concurrency_key IS NULL") == 1);
		CONTAINS(sb.buf, ">= IFNULL((SELECT key_max_running FROM kyu_queues WHERE name = @kyu_q), 1)))");
		CONTAINS(sb.buf, "EXECUTE kyu_claim_keyed USING @kyu_q, @kyu_n, @kyu_tok; ");
		CHECK(count_str(sb.buf, "key_slot = IF(") == 2);
		CHECK(count_str(sb.buf, "PREPARE kyu_claim FROM") == 1);
		LACKS(sb.buf, "EXECUTE kyu_claim USING");
		/* 3 marks, 2 + 1 PREPAREs, START, 5 of kr, COMMIT, SELECT */
		CHECK(lay.n_stmts == 14 && lay.prepares);
		sb_reset(&sb);
	}

	/* Plain successes ride in front: the first n_fin of fin only. */
	{
		struct finish fin[4] = { plain(10, 100, 1000), plain(11, 101, 1001),
					 plain(12, 102, 1002), plain(13, 103, 1003) };
		config(&cfg, CLAIM_SKIP_LOCKED, 2);
		store_claim_build(&sb, &cfg, tok, "host", 3, fin, 3);
		k = split(sb.buf, st, 8);
		CHECK(k == 3);
		CHECK(starts_with(st[0], "UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0, "));
		CONTAINS(st[0], "pid = CASE seq WHEN 10 THEN 1000 WHEN 11 THEN 1001 WHEN 12 THEN 1002 "
				"ELSE pid END");
		CONTAINS(st[0], "WHERE seq IN (10,11,12) AND owner = CASE seq WHEN 10 THEN 100 WHEN 11 "
				"THEN 101 WHEN 12 THEN 102 END AND status IN ('running', 'cancelled')");
		CONTAINS(st[0], "'succeeded')");
		LACKS(st[0], "13");
		CHECK(starts_with(st[1], "UPDATE IGNORE (SELECT seq"));
		CONTAINS(st[1], "LIMIT 3 FOR UPDATE SKIP LOCKED");
		CONTAINS(st[1], "SET owner = 123456789012345, ");
		CHECK(starts_with(st[2], "SELECT j.seq"));
		free_split(st, k);
		sb_reset(&sb);

		config(&cfg, CLAIM_PLAIN, 0);
		store_claim_build(&sb, &cfg, 77, "host", 2, fin, 1);
		k = split(sb.buf, st, 8);
		CHECK(k == 3);
		CONTAINS(st[0], "pid = CASE seq WHEN 10 THEN 1000 ELSE pid END");
		CONTAINS(st[0], "WHERE seq IN (10) AND owner = CASE seq WHEN 10 THEN 100 END");
		CHECK(starts_with(st[1], "UPDATE IGNORE kyu_jobs SET owner = 77, "));
		CONTAINS(st[1], "LIMIT 2");
		CONTAINS(st[2], "j.owner = 77 AND");
		free_split(st, k);
		sb_reset(&sb);
	}
	sb_free(&sb);
}

static void test_traceparent(void)
{
	CHECK(store_traceparent_valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
	CHECK(store_traceparent_valid("fe-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"));
	/* version ff, ids all zeros, upper case, wrong length or separator */
	CHECK(!store_traceparent_valid("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
	CHECK(!store_traceparent_valid("00-00000000000000000000000000000000-00f067aa0ba902b7-01"));
	CHECK(!store_traceparent_valid("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01"));
	CHECK(!store_traceparent_valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00F067aa0ba902b7-01"));
	CHECK(!store_traceparent_valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-011"));
	CHECK(!store_traceparent_valid("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7"));
	CHECK(!store_traceparent_valid("00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
	CHECK(!store_traceparent_valid("0g-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
	CHECK(!store_traceparent_valid(""));
}

/* A failure for good with its hook: four statements in one transaction,
 * the INSERT guarded by the row being this claim's and failed; other
 * results' statements unchanged. */
static void test_finish_hook(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	char *st[16];
	int k, count, n_stmts, done, rejected;
	struct finish f[] = {
		plain(1, 11, 101),
		other(3, 13, 103, OUT_FAILED, 2, 0, "exit code 2", NULL, 0),
		other(4, 14, 104, OUT_RETRY, 1, 0, "exit code 1", NULL, 0),
	};
	struct db_result res[8];
	struct db_reply rep = { .fail = DB_OK, .r = res };

	config(&cfg, CLAIM_PLAIN, 0);
	f[1].hook = true;
	CHECK(store_finish_stmts(&f[0]) == 1);
	CHECK(store_finish_stmts(&f[1]) == 4);
	count = store_finish_build(&sb, &cfg, f, 3, 1 << 20, &n_stmts);
	CHECK(count == 3);
	CHECK(n_stmts == 6);
	k = split(sb.buf, st, 16);
	CHECK(k == 6);
	CHECK(starts_with(st[0], "UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0"));
	CHECK(strcmp(st[1], "START TRANSACTION") == 0);
	CHECK(starts_with(st[2], "UPDATE kyu_jobs SET lease_until = NULL, pid = 103, "));
	CONTAINS(st[2], " WHERE seq = 3 AND owner = 13 AND status IN ('running', 'cancelled')");
	CHECK(starts_with(st[3], "INSERT INTO kyu_jobs (id, queue, argv, env) SELECT CONCAT('on_failure:', "
				 "j.attempts, ':', j.owner, ':', "));
	CONTAINS(st[3], "WHERE j.seq = 3 AND j.owner = 13 AND j.status = 'failed' AND q.on_failure IS NOT NULL "
			"AND j.id NOT LIKE 'on_failure:%' ON DUPLICATE KEY UPDATE");
	CONTAINS(st[3], "'KYU_FAILED_JOB_ID', j.id, 'KYU_FAILED_QUEUE', j.queue, 'KYU_FAILED_EXIT_CODE'");
	CHECK(strcmp(st[4], "COMMIT") == 0);
	CHECK(starts_with(st[5], "UPDATE kyu_jobs SET lease_until = NULL, pid = 104, "));
	LACKS(st[5], "INSERT");
	free_split(st, k);
	sb_reset(&sb);

	/* Read: the UPDATE's count decides rejected; done once COMMIT is. */
	memset(res, 0, sizeof(res));
	res[0].affected = 1;
	res[2].affected = 1;
	res[3].affected = 1;
	res[5].affected = 1;
	rep.n = 6;
	store_finish_read(&rep, f, 3, &done, &rejected);
	CHECK(done == 3);
	CHECK(rejected == 0);
	CHECK(!store_finish_txn_open(&rep, f, 3));
	res[2].affected = 0; /* replayed, or the row is another claim's */
	store_finish_read(&rep, f, 3, &done, &rejected);
	CHECK(done == 3);
	CHECK(rejected == 1);
	/* The INSERT refused (a full queue): the group is not done, and its
	 * transaction is open. */
	memset(res, 0, sizeof(res));
	res[0].affected = 1;
	res[2].affected = 1;
	res[3].err_no = 1644;
	rep.fail = DB_ERROR;
	rep.n = 4;
	store_finish_read(&rep, f, 3, &done, &rejected);
	CHECK(done == 1);
	CHECK(store_finish_txn_open(&rep, f, 3));
	/* Lost: the server ends the transaction itself. */
	rep.fail = DB_LOST;
	CHECK(!store_finish_txn_open(&rep, f, 3));
	/* The plain UPDATE failed: no transaction was begun. */
	memset(res, 0, sizeof(res));
	res[0].err_no = 1213;
	rep.fail = DB_RETRY;
	rep.n = 1;
	CHECK(!store_finish_txn_open(&rep, f, 3));
	/* Without the hook (results_strip's last resort): one statement. */
	f[1].hook = false;
	count = store_finish_build(&sb, &cfg, f, 3, 1 << 20, &n_stmts);
	CHECK(n_stmts == 3);
	LACKS(sb.buf, "START TRANSACTION");
	sb_free(&sb);
}

/* ---- hand-built replies ---- */

#define CLAIM_COLS 18

static void test_claim_read(void)
{
	char *cells[2 * CLAIM_COLS] = {
		"17", "job-a", "default", "echo hi", "[\"a\"]", NULL,   "/tmp", "1", "0", "3",          "60", "1500", "k1", "2500000", "[\"u1\"]", "0", "1", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"18", "job-b", "q2",      NULL,      NULL,      "{}",   NULL,   "2", "1", "4294967296", "5",  "1500", NULL, NULL,      NULL,         "1", "1", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
	};
	unsigned long lens[2 * CLAIM_COLS];
	struct db_result sel = { .n_cols = CLAIM_COLS, .n_rows = 2, .cells = cells, .lens = lens };
	struct db_result res[3];

	for (int i = 0; i < 2 * CLAIM_COLS; i++)
		lens[i] = cells[i] ? strlen(cells[i]) : 0;
	struct db_reply rep = { .fail = DB_OK, .r = res };
	struct claim_reply cr;

	/* (a) No finishes in front; 2 of 4 marked: next due read. */
	memset(res, 0, sizeof(res));
	res[0].affected = 2;
	res[1] = sel;
	rep.n = 2;
	store_claim_read(&rep, 4, 0, 999, 12.5, &cr);
	CHECK(cr.fail == DB_OK);
	CHECK(cr.got == 2);
	CHECK(cr.next_due_us == 1500);
	CHECK(!cr.fin_done);
	CHECK(cr.fin_rejected == 0);
	CHECK(cr.rows != NULL);
	if (cr.got == 2) {
		CHECK(cr.rows[0].seq == 17);
		CHECK(cr.rows[0].token == 999);
		CHECK(cr.rows[0].claimed_at == 12.5);
		CHECK_STR(cr.rows[0].id, "job-a");
		CHECK_STR(cr.rows[0].queue, "default");
		CHECK_STR(cr.rows[0].command, "echo hi");
		CHECK_STR(cr.rows[0].argv_json, "[\"a\"]");
		CHECK(cr.rows[0].env_json == NULL);
		CHECK_STR(cr.rows[0].cwd, "/tmp");
		CHECK_STR(cr.rows[0].key, "k1");
		CHECK(cr.rows[1].key == NULL);
		CHECK(cr.rows[0].attempts == 1);
		CHECK(cr.rows[0].tempfails == 0);
		CHECK(cr.rows[0].max_attempts == 3);
		CHECK(cr.rows[0].time_limit == 60);
		CHECK(cr.rows[0].id != cells[1]); /* copies */
		/* Due to claimed, by the database's clock; unknown without it. */
		CHECK(cr.rows[0].waited_us == 2500000);
		CHECK(cr.rows[1].waited_us == -1);
		CHECK(cr.rows[1].seq == 18);
		CHECK(cr.rows[1].token == 999);
		CHECK(cr.rows[1].command == NULL);
		CHECK(cr.rows[1].argv_json == NULL);
		CHECK_STR(cr.rows[1].env_json, "{}");
		CHECK(cr.rows[1].cwd == NULL);
		CHECK(cr.rows[1].attempts == 2);
		CHECK(cr.rows[1].tempfails == 1);
		CHECK(cr.rows[1].max_attempts == UINT32_MAX); /* clamped */
		CHECK(cr.rows[1].time_limit == 5);
		/* Workflows: after, has_downstream; kyu_after_todo has items. */
		CHECK_STR(cr.rows[0].after_json, "[\"u1\"]");
		CHECK(cr.rows[1].after_json == NULL);
		CHECK(!cr.rows[0].downstream);
		CHECK(cr.rows[1].downstream);
		/* Trace context: passed on; a value an UPDATE made bad after
		 * the INSERT's check makes the row bad, naming column and value. */
		CHECK_STR(cr.rows[0].traceparent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
		CHECK(cr.rows[0].bad == NULL);
		CHECK(cr.rows[1].bad != NULL);
		if (cr.rows[1].bad)
			CONTAINS(cr.rows[1].bad, "traceparent = '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01': "
						 "not a W3C traceparent");
	}
	CHECK(cr.settle);
	store_claimed_free(cr.rows, cr.got);

	/* A negative next due (already due) is read as is. */
	cells[11] = "-250";
	cells[CLAIM_COLS + 11] = "-250";
	store_claim_read(&rep, 4, 0, 999, 12.5, &cr);
	CHECK(cr.got == 2);
	CHECK(cr.next_due_us == -250);
	store_claimed_free(cr.rows, cr.got);
	cells[11] = "1500";
	cells[CLAIM_COLS + 11] = "1500";

	/* All asked for were marked: no next due. */
	store_claim_read(&rep, 2, 0, 999, 12.5, &cr);
	CHECK(cr.got == 2);
	CHECK(cr.next_due_us == INT64_MIN);
	store_claimed_free(cr.rows, cr.got);

	/* More rows than asked for never overflow the rows. */
	store_claim_read(&rep, 1, 0, 999, 12.5, &cr);
	CHECK(cr.got == 1);
	CHECK(cr.rows[0].seq == 17);
	CHECK(cr.next_due_us == INT64_MIN);
	store_claimed_free(cr.rows, cr.got);

	/* Nothing marked: the derived table's one row of NULLs gives the
	 * next due alone; NULL there means nothing waiting or running. */
	{
		char *none[CLAIM_COLS] = { NULL };
		unsigned long none_lens[CLAIM_COLS] = { 0 };
		struct db_result empty = { .n_cols = CLAIM_COLS, .n_rows = 1, .cells = none, .lens = none_lens };
		res[0].affected = 0;
		res[1] = empty;
		store_claim_read(&rep, 4, 0, 999, 12.5, &cr);
		CHECK(cr.fail == DB_OK);
		CHECK(cr.got == 0);
		CHECK(cr.next_due_us == INT64_MAX);
		CHECK(!cr.settle); /* todo NULL: read as none */
		store_claimed_free(cr.rows, cr.got);
		none[16] = "0";
		store_claim_read(&rep, 4, 0, 999, 12.5, &cr);
		CHECK(!cr.settle);
		store_claimed_free(cr.rows, cr.got);
		none[11] = "42000000";
		store_claim_read(&rep, 4, 0, 999, 12.5, &cr);
		CHECK(cr.got == 0);
		CHECK(cr.next_due_us == 42000000);
		store_claimed_free(cr.rows, cr.got);
	}

	/* (b) With n_fin finishes in front: the first result is theirs. */
	memset(res, 0, sizeof(res));
	res[0].affected = 2; /* of 3: one row was no longer ours */
	res[1].affected = 2;
	res[2] = sel;
	rep.n = 3;
	store_claim_read(&rep, 4, 3, 555, 1.0, &cr);
	CHECK(cr.fail == DB_OK);
	CHECK(cr.fin_done);
	CHECK(cr.fin_rejected == 1);
	CHECK(cr.got == 2);
	CHECK(cr.next_due_us == 1500);
	CHECK(cr.got < 1 || cr.rows[0].token == 555);
	store_claimed_free(cr.rows, cr.got);
	res[0].affected = 3;
	store_claim_read(&rep, 4, 3, 555, 1.0, &cr);
	CHECK(cr.fin_done);
	CHECK(cr.fin_rejected == 0);
	CHECK(cr.got == 2);
	store_claimed_free(cr.rows, cr.got);

	/* (c) Failed replies: got -1. */
	rep.fail = DB_LOST;
	rep.n = 0;
	store_claim_read(&rep, 4, 0, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(cr.fail == DB_LOST);
	CHECK(!cr.fin_done);
	CHECK(cr.rows == NULL);
	CHECK(cr.next_due_us == INT64_MIN);
	store_claimed_free(cr.rows, cr.got);
	store_claim_read(&rep, 4, 3, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(!cr.fin_done);

	/* The finishes ran, the mark failed: they are recorded all the same. */
	memset(res, 0, sizeof(res));
	res[0].affected = 3;
	res[1].err_no = 1213;
	res[1].err = "Deadlock found";
	rep.fail = DB_RETRY;
	rep.n = 2;
	store_claim_read(&rep, 4, 3, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(cr.fail == DB_RETRY);
	CHECK(cr.fin_done);
	CHECK(cr.fin_rejected == 0);
	/* The finishes themselves failed. */
	memset(res, 0, sizeof(res));
	res[0].err_no = 1064;
	rep.fail = DB_ERROR;
	rep.n = 1;
	store_claim_read(&rep, 4, 3, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(cr.fail == DB_ERROR);
	CHECK(!cr.fin_done);
	/* DB_OK but results missing: an error, not a crash. */
	memset(res, 0, sizeof(res));
	res[0].affected = 1;
	rep.fail = DB_OK;
	rep.n = 1;
	store_claim_read(&rep, 4, 0, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(cr.fail == DB_ERROR);
	rep.n = 2;
	store_claim_read(&rep, 4, 3, 1, 1.0, &cr);
	CHECK(cr.got == -1);
	CHECK(cr.fail == DB_ERROR);
	CHECK(cr.fin_done);
}

/* A job that used its status channel: never plain; its progress, note
 * and result written, the result kept only if the server finds it JSON,
 * else the error says so. */
static void test_finish_status(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	struct finish f = plain(9, 19, 109);
	int n_stmts;

	config(&cfg, CLAIM_PLAIN, 0);
	f.status = true;
	f.progress = 40;
	f.note = "it's";
	CHECK(!store_finish_plain(&f));
	CHECK(store_finish_build(&sb, &cfg, &f, 1, 1 << 20, &n_stmts) == 1 && n_stmts == 1);
	CONTAINS(sb.buf, "progress = 40, progress_note = 'it\\'s', error = NULL, output = NULL");
	sb_reset(&sb);
	f.result = "{\"a\": 1}";
	f.result_len = strlen(f.result);
	f.progress = -1;
	f.note = NULL;
	CHECK(store_finish_build(&sb, &cfg, &f, 1, 1 << 20, &n_stmts) == 1);
	CONTAINS(sb.buf, "progress = NULL, progress_note = NULL, result = '{\\\"a\\\": 1}', "
			 "result = IF(JSON_VALID(result), result, NULL), error = IF(result IS NULL, "
			 "CONCAT_WS('; ', NULL, CONCAT('kyu: result on KYU_STATUS_FD is not valid JSON: ', "
			 "'{\\\"a\\\": 1}')), NULL), output = NULL");
	sb_free(&sb);
}

static void test_finish_build(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	char *st[16];
	int k, count, n_stmts;

	config(&cfg, CLAIM_PLAIN, 0);

	/* Plain successes first in one UPDATE, then one per other result. */
	{
		struct finish f[] = {
			with_cost(plain(1, 11, 101), 250000, 10, 1 << 20),
			with_cost(plain(2, 12, 102), 12000001, 0, 0),
			with_cost(other(3, 13, 103, OUT_FAILED, 2, 0, "exit code 2", "boom'\n", 6), 1, 2,
				  4096),
			other(4, 14, 104, OUT_RETRY, 75, 0, "temporary failure (exit 75): retrying later",
			      NULL, 0),
			other(5, 15, 0, OUT_RELEASE, -1, 0, "interrupted", NULL, 0),
			other(6, 16, 106, OUT_CANCELLED, -1, 15, "cancelled", NULL, 0),
			other(7, 17, 107, OUT_SUCCEEDED, 0, 0, NULL, "ok\n", 3),
			other(8, 18, 108, OUT_RETRY, 1, 0, "exit code 1", NULL, 0),
		};
		int n = (int)(sizeof(f) / sizeof(f[0]));
		f[3].tempfail = true;

		count = store_finish_build(&sb, &cfg, f, n, 1 << 20, &n_stmts);
		CHECK(count == n);
		CHECK(n_stmts == 7);
		k = split(sb.buf, st, 16);
		CHECK(k == 7);
		CHECK(sb.len == strlen(sb.buf));
		/* the bulk UPDATE */
		CHECK(starts_with(st[0], "UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0, "));
		CONTAINS(st[0], "pid = CASE seq WHEN 1 THEN 101 WHEN 2 THEN 102 ELSE pid END, "
				"cpu_user = CASE seq WHEN 1 THEN 0.250000 WHEN 2 THEN 12.000001 END, "
				"cpu_sys = CASE seq WHEN 1 THEN 0.000010 WHEN 2 THEN 0.000000 END, "
				"max_rss = CASE seq WHEN 1 THEN 1048576 WHEN 2 THEN 0 END, status = ");
		CONTAINS(st[0], "WHERE seq IN (1,2) AND owner = CASE seq WHEN 1 THEN 11 WHEN 2 THEN 12 "
				"END AND status IN ('running', 'cancelled')");
		/* failed, with output */
		CHECK(starts_with(st[1], "UPDATE kyu_jobs SET lease_until = NULL, pid = 103, "));
		CONTAINS(st[1], "exit_code = 2, `signal` = NULL, error = 'exit code 2', output = "
				"'boom\\'\\n', finished_at = NOW(6)");
		CONTAINS(st[1], "/ 1e6, cpu_user = 0.000001, cpu_sys = 0.000002, max_rss = 4096, status = "
				"IF(status = 'cancelled', 'cancelled', 'failed')");
		CHECK(strstr(st[1], " WHERE seq = 3 AND owner = 13 AND status IN ('running', "
				    "'cancelled')") != NULL);
		LACKS(st[1], "run_at");
		LACKS(st[1], "tempfails");
		/* tempfail retry */
		CONTAINS(st[2], "pid = 104, exit_code = 75, ");
		CONTAINS(st[2], "output = NULL");
		CONTAINS(st[2], "tempfails = LEAST(tempfails, 4294967294) + 1, run_at = NOW(6) + INTERVAL CAST(LEAST(600, 2 "
				"* POW(2, LEAST(attempts, 40) - 1))");
		CONTAINS(st[2], "'waiting')");
		CONTAINS(st[2], "WHERE seq = 4 AND owner = 14 ");
		/* release: attempt not counted, no pid, error kept */
		CHECK(starts_with(st[3], "UPDATE kyu_jobs SET lease_until = NULL, output = IF(output LIKE "
					 "CONCAT('[kyu: live output of attempt ', attempts, ':%'), NULL, output), "
					 "attempts = IF(attempts "
					 "> 0, attempts - 1, 0), run_at = NOW(6), started_at = NULL, "
					 "error = 'interrupted', status = IF(status = 'cancelled', "
					 "'cancelled', 'waiting') WHERE seq = 5 AND owner = 15 "));
		LACKS(st[3], "pid");
		LACKS(st[3], "exit_code");
		LACKS(st[3], "cpu_user");
		/* no cost known: NULL, not a stale one */
		CONTAINS(st[2], "cpu_user = NULL, cpu_sys = NULL, max_rss = NULL, ");
		/* cancelled, by signal */
		CONTAINS(st[4], "exit_code = NULL, `signal` = 15, error = 'cancelled'");
		CONTAINS(st[4], "'cancelled', 'cancelled')");
		/* succeeded with output */
		CONTAINS(st[5], "exit_code = 0, `signal` = NULL, error = NULL, output = 'ok\\n'");
		CONTAINS(st[5], "'succeeded')");
		/* retry, not a tempfail */
		CONTAINS(st[6], "run_at = NOW(6) + INTERVAL");
		LACKS(st[6], "tempfails");
		CONTAINS(st[6], "WHERE seq = 8 AND owner = 18 ");
		free_split(st, k);
		sb_reset(&sb);

		/* Only plain ones. */
		count = store_finish_build(&sb, &cfg, f, 2, 1 << 20, &n_stmts);
		CHECK(count == 2);
		CHECK(n_stmts == 1);
		CHECK(count_str(sb.buf, "; ") == 0);
		sb_reset(&sb);
		/* Only others. */
		count = store_finish_build(&sb, &cfg, f + 2, 3, 1 << 20, &n_stmts);
		CHECK(count == 3);
		CHECK(n_stmts == 3);
		CHECK(starts_with(sb.buf, "UPDATE kyu_jobs SET lease_until = NULL, pid = 103, "));
		LACKS(sb.buf, "CASE seq");
		sb_reset(&sb);
		/* Nothing. */
		count = store_finish_build(&sb, &cfg, f, 0, 1 << 20, &n_stmts);
		CHECK(count == 0);
		CHECK(n_stmts == 0);
		CHECK(sb.len == 0);
		sb_reset(&sb);
		/* A plain success behind another result is not in the bulk
		 * statement: the batch stops there. */
		{
			struct finish g[] = { f[2], f[0], f[3] };
			count = store_finish_build(&sb, &cfg, g, 3, 1 << 20, &n_stmts);
			CHECK(count == 1);
			CHECK(n_stmts == 1);
			LACKS(sb.buf, "CASE seq");
			sb_reset(&sb);
		}
	}

	/* An output that alone would not fit is cut to fit, with the marker,
	 * and the statement stays within max_len. */
	{
		const size_t max_len = 4096;
		size_t out_len = max_len / 2 + 100;
		char *out = xmalloc(out_len);
		struct finish f[1];
		const char *p;
		size_t kept = 0;

		memset(out, 'x', out_len);
		f[0] = other(9, 19, 109, OUT_FAILED, 1, 0, "exit code 1", out, out_len);
		count = store_finish_build(&sb, &cfg, f, 1, max_len, &n_stmts);
		CHECK(count == 1);
		CHECK(n_stmts == 1);
		CHECK(sb.len <= max_len);
		CONTAINS(sb.buf, ", output = CONCAT('x");
		CONTAINS(sb.buf, "x', " CUT_MARK_SQL "), finished_at = NOW(6)");
		p = strstr(sb.buf, "CONCAT('");
		if (p)
			for (p += 8; *p == 'x'; p++)
				kept++;
		CHECK(kept > 0 && kept < out_len);
		CONTAINS(sb.buf, "WHERE seq = 9 AND owner = 19 ");
		sb_reset(&sb);

		/* Bytes that escape to two take twice the room. */
		memset(out, '\'', out_len);
		count = store_finish_build(&sb, &cfg, f, 1, max_len, &n_stmts);
		CHECK(count == 1);
		CHECK(sb.len <= max_len);
		CONTAINS(sb.buf, "\\'', " CUT_MARK_SQL ")");
		sb_reset(&sb);

		/* One that fits is not cut. */
		memset(out, 'x', out_len);
		f[0].output_len = 1000;
		count = store_finish_build(&sb, &cfg, f, 1, max_len, &n_stmts);
		CHECK(count == 1);
		CHECK(sb.len <= max_len);
		LACKS(sb.buf, "CONCAT(");
		LACKS(sb.buf, "[kyu: output cut");
		sb_reset(&sb);

		/* The marker's room is counted: with a max_len just above the
		 * fixed overhead, the output is still cut to fit (the room left
		 * for it must not wrap around below zero). */
		f[0].output_len = 2000;
		count = store_finish_build(&sb, &cfg, f, 1, 1024 + sizeof(CUT_MARK_RAW) + 30, &n_stmts);
		CHECK(count == 1);
		CHECK(sb.len <= 1024 + sizeof(CUT_MARK_RAW) + 30);
		CONTAINS(sb.buf, CUT_MARK_SQL);
		sb_reset(&sb);

		/* However small max_len, one result is always covered. */
		count = store_finish_build(&sb, &cfg, f, 1, 100, &n_stmts);
		CHECK(count == 1);
		CHECK(n_stmts == 1);
		CONTAINS(sb.buf, "WHERE seq = 9 AND owner = 19 ");
		sb_reset(&sb);
		free(out);
	}

	/* A batch that would exceed max_len stops early: the rest goes in the
	 * next round trip, uncut; what is sent stays within max_len. */
	{
		const size_t max_len = 4096, out_len = 1400;
		char *out = xmalloc(out_len);
		struct finish f[5];
		size_t one;

		memset(out, 'y', out_len);
		for (int i = 0; i < 5; i++)
			f[i] = other(20 + (uint64_t)i, 30 + (uint64_t)i, 200 + i, OUT_FAILED, 1, 0,
				     "exit code 1", out, out_len);
		count = store_finish_build(&sb, &cfg, f, 1, max_len, &n_stmts);
		CHECK(count == 1);
		one = sb.len;
		CHECK(one > out_len && one < max_len / 2); /* two fit, three do not */
		LACKS(sb.buf, "CONCAT(");
		sb_reset(&sb);

		count = store_finish_build(&sb, &cfg, f, 5, max_len, &n_stmts);
		CHECK(count == 2);
		CHECK(n_stmts == 2);
		CHECK(sb.len <= max_len);
		CHECK(sb.len == 2 * one + 2);
		LACKS(sb.buf, "CONCAT(");
		LACKS(sb.buf, "[kyu: output cut");
		CHECK(count_str(sb.buf, "yyyy', finished_at") == 2);
		sb_reset(&sb);

		/* The same behind the bulk UPDATE of plain successes. */
		{
			struct finish g[7] = { plain(1, 11, 101), plain(2, 12, 102) };
			memcpy(g + 2, f, sizeof(f));
			count = store_finish_build(&sb, &cfg, g, 7, max_len, &n_stmts);
			CHECK(count >= 3 && count < 7);
			CHECK(n_stmts == count - 1);
			CHECK(sb.len <= max_len);
			LACKS(sb.buf, "[kyu: output cut");
			sb_reset(&sb);
		}
		free(out);
	}

	/* Right behind the bulk UPDATE (which may be there every round trip),
	 * a result that does not fit is cut to the room the bulk leaves,
	 * rather than wait; when not even that fits, it waits. */
	{
		const size_t max_len = 4096, out_len = 3000;
		char *out = xmalloc(out_len);
		struct finish g[201];
		int n_plain = 0;
		size_t bulk = 0;

		memset(out, '\'', out_len); /* escaped to twice its size */
		for (int i = 0; i < 200; i++)
			g[i] = plain(1000 + (uint64_t)i, 2000 + (uint64_t)i, 3000 + i);
		/* Enough plain successes for a bulk of about a quarter. */
		while (bulk < max_len / 4 && n_plain < 200) {
			n_plain++;
			CHECK(store_finish_build(&sb, &cfg, g, n_plain, max_len, &n_stmts) == n_plain);
			bulk = sb.len;
			sb_reset(&sb);
		}
		g[n_plain] = other(9, 19, 109, OUT_FAILED, 1, 0, "exit code 1", out, out_len);
		count = store_finish_build(&sb, &cfg, g, n_plain + 1, max_len, &n_stmts);
		CHECK(count == n_plain + 1);
		CHECK(n_stmts == 2);
		CHECK(sb.len <= max_len);
		CONTAINS(sb.buf, CUT_MARK_SQL);
		CONTAINS(sb.buf, "WHERE seq = 9 AND owner = 19 ");
		sb_reset(&sb);

		/* A bulk that leaves no useful room. */
		g[n_plain] = plain(1000 + (uint64_t)n_plain, 2000 + (uint64_t)n_plain, 3000 + n_plain);
		while (bulk < max_len - 200 && n_plain < 200) {
			n_plain++;
			CHECK(store_finish_build(&sb, &cfg, g, n_plain, max_len, &n_stmts) == n_plain);
			bulk = sb.len;
			sb_reset(&sb);
		}
		CHECK(bulk <= max_len);
		g[n_plain] = other(9, 19, 109, OUT_FAILED, 1, 0, "exit code 1", out, out_len);
		count = store_finish_build(&sb, &cfg, g, n_plain + 1, max_len, &n_stmts);
		CHECK(count == n_plain);
		CHECK(n_stmts == 1);
		CHECK(sb.len == bulk);
		LACKS(sb.buf, "seq = 9");
		sb_reset(&sb);
		free(out);
	}
	sb_free(&sb);
}

static void test_finish_read(void)
{
	struct finish f[] = {
		plain(1, 11, 101),
		plain(2, 12, 102),
		other(3, 13, 103, OUT_FAILED, 2, 0, "exit code 2", NULL, 0),
		other(4, 14, 104, OUT_RETRY, 1, 0, "exit code 1", NULL, 0),
		other(5, 15, 105, OUT_SUCCEEDED, 0, 0, NULL, "out", 3),
	};
	struct db_result res[4];
	struct db_reply rep = { .fail = DB_OK, .r = res };
	int done, rejected;

	/* All ok. */
	memset(res, 0, sizeof(res));
	res[0].affected = 2;
	res[1].affected = 1;
	res[2].affected = 1;
	res[3].affected = 1;
	rep.n = 4;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 5);
	CHECK(rejected == 0);

	/* Rows no longer ours: in the bulk (affected < plain) and singly
	 * (affected != 1). */
	res[0].affected = 1;
	res[2].affected = 0;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 5);
	CHECK(rejected == 2);
	res[0].affected = 0;
	res[2].affected = 2;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 5);
	CHECK(rejected == 3);

	/* A failure in statement k: only the results before it are done. */
	memset(res, 0, sizeof(res));
	res[0].affected = 2;
	res[1].affected = 1;
	res[2].err_no = 1406;
	res[2].err = "Data too long";
	rep.fail = DB_ERROR;
	rep.n = 3;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 3);
	CHECK(rejected == 0);
	res[1].err_no = 1406;
	rep.n = 2;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 2);
	/* ... the bulk statement failed: none. */
	memset(res, 0, sizeof(res));
	res[0].err_no = 1213;
	rep.fail = DB_RETRY;
	rep.n = 1;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 0);
	CHECK(rejected == 0);
	/* ... connection lost before any reply. */
	rep.fail = DB_LOST;
	rep.n = 0;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 0);
	CHECK(rejected == 0);
	/* ... lost after the first two statements. */
	memset(res, 0, sizeof(res));
	res[0].affected = 2;
	res[1].affected = 0;
	rep.n = 2;
	store_finish_read(&rep, f, 5, &done, &rejected);
	CHECK(done == 3);
	CHECK(rejected == 1);

	/* No plain successes: statement i is result i. */
	memset(res, 0, sizeof(res));
	res[0].affected = 1;
	res[1].err_no = 1064;
	rep.fail = DB_ERROR;
	rep.n = 2;
	store_finish_read(&rep, f + 2, 3, &done, &rejected);
	CHECK(done == 1);
	CHECK(rejected == 0);
	/* count covers part of f only. */
	memset(res, 0, sizeof(res));
	res[0].affected = 1;
	rep.fail = DB_OK;
	rep.n = 1;
	store_finish_read(&rep, f, 1, &done, &rejected);
	CHECK(done == 1);
	CHECK(rejected == 0);
}

struct hb_seen {
	int calls;
	uint64_t seq[4], owner[4];
	char status[4][16];
};

static void hb_cb(void *arg, uint64_t seq, uint64_t owner, const char *status)
{
	struct hb_seen *s = arg;
	if (s->calls < 4) {
		s->seq[s->calls] = seq;
		s->owner[s->calls] = owner;
		snprintf(s->status[s->calls], sizeof(s->status[0]), "%s", status ? status : "(null)");
	}
	s->calls++;
}

static void test_live(void)
{
	const struct live_row rows[] = {
		{ .seq = 5, .token = 50, .text = "[kyu: live output of attempt 1: 3 bytes so far]\nab'", .len = 51 },
		{ .seq = 7, .token = 70, .text = "x\0y", .len = 3 },
	};
	/* Progress only, progress and output: only the columns some row
	 * changes are named. */
	const struct live_row progress[] = {
		{ .seq = 5, .token = 50, .status = true, .progress = 40, .note = "half 'way'" },
	};
	const struct live_row both[] = {
		{ .seq = 5, .token = 50, .text = "o", .len = 1 },
		{ .seq = 7, .token = 70, .status = true, .progress = 100 },
	};
	struct strbuf sb = { 0 };

	store_live_build(&sb, progress, 1);
	CHECK_STR(sb.buf, "UPDATE kyu_jobs SET progress = CASE seq WHEN 5 THEN 40 ELSE progress END, "
			  "progress_note = CASE seq WHEN 5 THEN 'half \\'way\\'' ELSE progress_note END "
			  "WHERE seq IN (5) AND owner = CASE seq WHEN 5 THEN 50 END AND status = 'running'");
	sb_reset(&sb);
	store_live_build(&sb, both, 2);
	CHECK_STR(sb.buf, "UPDATE kyu_jobs SET output = CASE seq WHEN 5 THEN 'o' ELSE output END, "
			  "progress = CASE seq WHEN 7 THEN 100 ELSE progress END, "
			  "progress_note = CASE seq WHEN 7 THEN NULL ELSE progress_note END "
			  "WHERE seq IN (5,7) AND owner = CASE seq WHEN 5 THEN 50 WHEN 7 THEN 70 END AND "
			  "status = 'running'");
	sb_reset(&sb);

	store_live_build(&sb, rows, 2);
	CHECK_STR(sb.buf, "UPDATE kyu_jobs SET output = CASE seq WHEN 5 THEN '[kyu: live output of "
			  "attempt 1: 3 bytes so far]\\nab\\'' WHEN 7 THEN 'x\\0y' ELSE output END "
			  "WHERE seq IN (5,7) AND owner = CASE seq WHEN 5 THEN 50 WHEN 7 THEN 70 END AND "
			  "status = 'running'");
	CHECK(sb.len <= 256 + store_live_room(51) + store_live_room(3));
	sb_free(&sb);
}

static void test_heartbeat(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	const uint64_t seqs[] = { 5, 6, 7 }, tokens[] = { 50, 60, 70 };
	const int pids[] = { 0, 1234, 0 }, no_pids[] = { 0, 0, 0 }, all_pids[] = { 1, 2, 3 };

	config(&cfg, CLAIM_PLAIN, 0);
	store_heartbeat_build(&sb, &cfg, seqs, tokens, pids, 3);
	CHECK_STR(sb.buf, "UPDATE kyu_jobs SET lease_until = NOW(6) + INTERVAL 30 SECOND, pid = CASE seq "
			  "WHEN 6 THEN 1234 ELSE pid END WHERE seq IN (5,6,7) AND owner = CASE seq WHEN "
			  "5 THEN 50 WHEN 6 THEN 60 WHEN 7 THEN 70 END AND status = 'running'; SELECT "
			  "seq, COALESCE(owner, 0), status, TIMESTAMPDIFF(MICROSECOND, '1970-01-01', "
			  "NOW(6)) FROM kyu_jobs WHERE seq IN (5,6,7)");
	sb_reset(&sb);
	store_heartbeat_build(&sb, &cfg, seqs, tokens, no_pids, 3);
	CHECK_STR(sb.buf, "UPDATE kyu_jobs SET lease_until = NOW(6) + INTERVAL 30 SECOND WHERE seq IN "
			  "(5,6,7) AND owner = CASE seq WHEN 5 THEN 50 WHEN 6 THEN 60 WHEN 7 THEN 70 END "
			  "AND status = 'running'; SELECT seq, COALESCE(owner, 0), status, "
			  "TIMESTAMPDIFF(MICROSECOND, '1970-01-01', NOW(6)) FROM kyu_jobs WHERE seq IN (5,6,7)");
	sb_reset(&sb);
	store_heartbeat_build(&sb, &cfg, seqs, tokens, all_pids, 2);
	CONTAINS(sb.buf, ", pid = CASE seq WHEN 5 THEN 1 WHEN 6 THEN 2 ELSE pid END WHERE seq IN (5,6) ");
	LACKS(sb.buf, "WHEN 7");
	LACKS(sb.buf, ",7");
	sb_reset(&sb);
	sb_free(&sb);

	{
		char *cells[] = { "5", "50", "running", "1795000000123456", "6", "0", "cancelled", "1795000000123456",
				  "7", "71", "running", "1795000000123456" };
		struct db_result res[2] = { { .affected = 2 },
					    { .n_cols = 4, .n_rows = 3, .cells = cells } };
		struct db_reply rep = { .fail = DB_OK, .n = 2, .r = res };
		struct hb_seen seen = { 0 };

		CHECK(store_heartbeat_read(&rep, hb_cb, &seen) == 2);
		CHECK(seen.calls == 3);
		CHECK(seen.seq[0] == 5 && seen.owner[0] == 50);
		CHECK_STR(seen.status[0], "running");
		CHECK(seen.seq[1] == 6 && seen.owner[1] == 0);
		CHECK_STR(seen.status[1], "cancelled");
		CHECK(seen.seq[2] == 7 && seen.owner[2] == 71);
		/* The server's clock rides along (lease.c watches it). */
		CHECK(store_heartbeat_now(&rep) == 1795000000123456LL);

		/* Rows gone: no call for them. */
		memset(&seen, 0, sizeof(seen));
		res[0].affected = 0;
		res[1].n_rows = 0;
		CHECK(store_heartbeat_read(&rep, hb_cb, &seen) == 0);
		CHECK(seen.calls == 0);
		CHECK(store_heartbeat_now(&rep) == 0);

		/* Failed: -1 and no calls. */
		rep.fail = DB_LOST;
		rep.n = 0;
		CHECK(store_heartbeat_read(&rep, hb_cb, &seen) == -1);
		rep.fail = DB_RETRY;
		rep.n = 1;
		res[0].err_no = 1213;
		CHECK(store_heartbeat_read(&rep, hb_cb, &seen) == -1);
		rep.fail = DB_OK;
		rep.n = 1;
		CHECK(store_heartbeat_read(&rep, hb_cb, &seen) == -1);
		CHECK(seen.calls == 0);
	}
}

static void test_cleanup(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	struct db_result res[4];
	struct db_reply rep = { .fail = DB_OK, .n = 4, .r = res };

	config(&cfg, CLAIM_PLAIN, 0);
	store_cleanup_build(&sb, &cfg);
	CHECK_STR(sb.buf, "SET @kyu_cleanup = GET_LOCK(CONCAT('kyu_cleanup.', DATABASE()), 0); DELETE "
			  "FROM kyu_jobs WHERE @kyu_cleanup = 1 AND (status = 'succeeded' AND updated_at < "
			  "NOW(6) - INTERVAL 86400 SECOND OR status IN ('failed', 'cancelled') AND updated_at < "
			  "NOW(6) - INTERVAL 604800 SECOND) AND NOT EXISTS (SELECT 1 "
			  "FROM kyu_after AS e JOIN kyu_jobs AS d ON d.seq = e.down_seq WHERE e.up_seq = "
			  "kyu_jobs.seq AND d.status IN ('blocked', 'waiting', 'running')) LIMIT 1000; "
			  "DELETE s FROM kyu_queue_starts AS s LEFT JOIN kyu_queues AS q ON q.name = "
			  "s.queue WHERE @kyu_cleanup = 1 AND (q.rate_period IS NULL OR s.at < NOW(6) - "
			  "INTERVAL q.rate_period SECOND); DO "
			  "IF(@kyu_cleanup = 1, RELEASE_LOCK(CONCAT('kyu_cleanup.', DATABASE())), 0)");
	sb_free(&sb);

	memset(res, 0, sizeof(res));
	res[1].affected = 17;
	CHECK(store_cleanup_read(&rep) == 17);
	res[1].affected = 0; /* another session held the lock */
	CHECK(store_cleanup_read(&rep) == 0);
	rep.n = 2;
	rep.fail = DB_ERROR;
	res[1].err_no = 1205;
	CHECK(store_cleanup_read(&rep) == -1);
	rep.fail = DB_LOST;
	rep.n = 0;
	CHECK(store_cleanup_read(&rep) == -1);
	rep.fail = DB_OK;
	rep.n = 3;
	CHECK(store_cleanup_read(&rep) == -1);
	CHECK(!store_cleanup_lock_refused(&rep));

	/* A server that refuses GET_LOCK (1235 on some Galera releases): the
	 * reply fails at the first statement, and the next cleanup goes
	 * without the lock, with the same statements in the same places. */
	memset(res, 0, sizeof(res));
	rep.fail = DB_ERROR;
	rep.n = 1;
	res[0].err_no = 1235;
	CHECK(store_cleanup_lock_refused(&rep));
	rep.n = 2; /* the DELETE failed, not the lock */
	res[0].err_no = 0;
	res[1].err_no = 1205;
	CHECK(!store_cleanup_lock_refused(&rep));
	store_cleanup_build_lock(&sb, &cfg, false);
	CHECK_STR(sb.buf, "SET @kyu_cleanup = 1; DELETE "
			  "FROM kyu_jobs WHERE @kyu_cleanup = 1 AND (status = 'succeeded' AND updated_at < "
			  "NOW(6) - INTERVAL 86400 SECOND OR status IN ('failed', 'cancelled') AND updated_at < "
			  "NOW(6) - INTERVAL 604800 SECOND) AND NOT EXISTS (SELECT 1 "
			  "FROM kyu_after AS e JOIN kyu_jobs AS d ON d.seq = e.down_seq WHERE e.up_seq = "
			  "kyu_jobs.seq AND d.status IN ('blocked', 'waiting', 'running')) LIMIT 1000; "
			  "DELETE s FROM kyu_queue_starts AS s LEFT JOIN kyu_queues AS q ON q.name = "
			  "s.queue WHERE @kyu_cleanup = 1 AND (q.rate_period IS NULL OR s.at < NOW(6) - "
			  "INTERVAL q.rate_period SECOND); DO 0");
	sb_free(&sb);

	/* Failures are never kept less than successes: an id is held at
	 * least retention, whatever the end of its job. */
	CHECK(store_retention_failed(&cfg) == 604800);
	cfg.retention_failed = 60;
	CHECK(store_retention_failed(&cfg) == 86400);
	cfg.retention_failed = 0;
	cfg.retention = 0;
	CHECK(store_retention_failed(&cfg) == 0);
}

int main(void)
{
	test_quote();
	test_claim_build();
	test_claim_read();
	test_traceparent();
	test_finish_hook();
	test_finish_build();
	test_finish_status();
	test_finish_read();
	test_heartbeat();
	test_live();
	test_cleanup();
	return check_done("store");
}
