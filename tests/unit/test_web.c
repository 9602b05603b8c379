/* kyu web without HTTP: the gatekeeping rules (guard.h), the text of
 * job output as JSON (webapi_text), list cursors, and the statements of
 * the actions (common/action.h) as kyu(1) documents them. */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/action.h"
#include "common/util.h"
#include "web/guard.h"
#include "web/webapi.h"
#include "check.h"

static void test_equal(void)
{
	CHECK(guard_equal("abc", "abc"));
	CHECK(!guard_equal("abc", "abd"));
	CHECK(!guard_equal("ab", "abc"));
	CHECK(!guard_equal("abcd", "abc"));
	CHECK(!guard_equal("", "abc"));
	CHECK(guard_equal("", ""));
}

static void test_host(void)
{
	CHECK(guard_host_is_local("localhost"));
	CHECK(guard_host_is_local("localhost:7780"));
	CHECK(guard_host_is_local("LocalHost:7780"));
	CHECK(guard_host_is_local("127.0.0.1:7780"));
	CHECK(guard_host_is_local("[::1]:7780"));
	CHECK(guard_host_is_local("[::1]"));
	CHECK(guard_host_is_local("127.0.0.2:80"));
	CHECK(!guard_host_is_local("10.1.2.3"));
	CHECK(!guard_host_is_local("192.0.2.1:7780"));
	CHECK(!guard_host_is_local("[2001:db8::1]:7780"));
	CHECK(!guard_host_is_local("evil.example"));
	CHECK(!guard_host_is_local("evil.example:7780"));
	CHECK(!guard_host_is_local("localhost.evil.example"));
	CHECK(!guard_host_is_local("[::1]x"));
	CHECK(!guard_host_is_local(""));
	CHECK(!guard_host_is_local(NULL));
}

static void test_origin(void)
{
	CHECK(guard_origin_matches(NULL, "localhost:7780"));
	CHECK(guard_origin_matches("http://localhost:7780", "localhost:7780"));
	CHECK(guard_origin_matches("https://kyu.example.com", "kyu.example.com"));
	CHECK(!guard_origin_matches("http://evil.example", "localhost:7780"));
	CHECK(!guard_origin_matches("http://localhost:7781", "localhost:7780"));
	CHECK(!guard_origin_matches("null", "localhost:7780"));
	CHECK(!guard_origin_matches("http://localhost:7780", NULL));
}

static void test_loopback(void)
{
	CHECK(guard_addr_is_loopback("127.0.0.1"));
	CHECK(guard_addr_is_loopback("127.8.9.10"));
	CHECK(guard_addr_is_loopback("::1"));
	CHECK(!guard_addr_is_loopback("0.0.0.0"));
	CHECK(!guard_addr_is_loopback("::"));
	CHECK(!guard_addr_is_loopback("192.168.1.1"));
	CHECK(!guard_addr_is_loopback("localhost"));
}

static void test_token(void)
{
	char a[65], b[65];

	CHECK(guard_token(a) == 0);
	CHECK(guard_token(b) == 0);
	CHECK(strlen(a) == 64 && strspn(a, "0123456789abcdef") == 64);
	CHECK(strcmp(a, b) != 0);
}

static void test_auth(void)
{
	char *hash = guard_hash_password("pw-s3cret");
	struct guard_auth *a;

	CHECK(hash && hash[0] == '$');
	if (!hash)
		return;
	a = guard_auth_new("admin", hash);
	CHECK(a != NULL);
	if (a) {
		CHECK(!guard_auth_check(a, "admin", "wrong"));
		CHECK(guard_auth_check(a, "admin", "pw-s3cret"));
		/* Again, from the remembered digest. */
		CHECK(guard_auth_check(a, "admin", "pw-s3cret"));
		/* The digest covers the user name and the whole password. */
		CHECK(!guard_auth_check(a, "admin2", "pw-s3cret"));
		CHECK(!guard_auth_check(a, "admin", "pw-s3cre"));
		CHECK(!guard_auth_check(a, "admi", "npw-s3cret"));
		CHECK(!guard_auth_check(a, NULL, "pw-s3cret"));
		CHECK(!guard_auth_check(a, "admin", NULL));
		guard_auth_free(a);
	}
	/* A hash that crypt cannot read matches nothing. */
	a = guard_auth_new("admin", "$nonsense$");
	CHECK(a && !guard_auth_check(a, "admin", "$nonsense$"));
	guard_auth_free(a);
	free(hash);
}

static void text_is(const char *in, size_t len, const char *want)
{
	json_t *j = webapi_text(in, len);
	CHECK(j != NULL);
	if (j)
		CHECK_STR(json_string_value(j), want);
	if (j)
		CHECK(json_string_length(j) == strlen(want));
	json_decref(j);
}

static void test_text(void)
{
	text_is("<script>", 8, "<script>");
	text_is("caf\xc3\xa9", 5, "caf\xc3\xa9");
	text_is("a\xff" "b", 3, "a\xef\xbf\xbd" "b");
	/* A sequence cut short at the end, an overlong form, a surrogate. */
	text_is("a\xc3", 2, "a\xef\xbf\xbd");
	text_is("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd");
	text_is("\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	text_is("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");
	/* A NUL byte is not shown either. */
	text_is("a\0b", 3, "a\xef\xbf\xbd" "b");
	text_is("", 0, "");
}

static void test_cursor(void)
{
	char t[64];
	unsigned long long seq = 0;

	CHECK(webapi_parse_cursor("2026-11-24 06:35:00.123456,42", t, sizeof(t), &seq) == 0);
	CHECK_STR(t, "2026-11-24 06:35:00.123456");
	CHECK(seq == 42);
	CHECK(webapi_parse_cursor("2026-11-24,x", t, sizeof(t), &seq) < 0);
	CHECK(webapi_parse_cursor("2026-11-24' OR 1,1", t, sizeof(t), &seq) < 0);
	CHECK(webapi_parse_cursor(",1", t, sizeof(t), &seq) < 0);
	CHECK(webapi_parse_cursor("42", t, sizeof(t), &seq) < 0);
	CHECK(webapi_parse_cursor(NULL, t, sizeof(t), &seq) < 0);
}

static void sql_is(enum action a, const char *target, const char *want)
{
	struct strbuf sb = { 0 };

	action_sql(&sb, a, target);
	CHECK_STR(sb.buf, want);
	sb_free(&sb);
}

static void test_actions(void)
{
	enum action a;

	sql_is(ACT_CANCEL, "j'1",
	       "UPDATE kyu_jobs SET status = 'cancelled' WHERE status IN ('waiting', 'blocked', 'running') AND id = 'j\\'1'");
	sql_is(ACT_RETRY, "j",
	       "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, tempfails = 0, "
	       "error = NULL WHERE status IN ('failed', 'cancelled') AND id = 'j'");
	sql_is(ACT_RUN_NOW, "j",
	       "UPDATE kyu_jobs SET run_at = NOW(6) WHERE status = 'waiting' AND run_at > NOW(6) AND id = 'j'");
	sql_is(ACT_DELETE, "j",
	       "DELETE FROM kyu_jobs WHERE status IN ('succeeded', 'failed', 'cancelled') AND id = 'j'");
	/* What the dashboard sends after a job's cancel, retry or delete
	 * (webapi.c), as kyu_jobs(7) documents it. */
	CHECK(strcmp(ACTION_SETTLE_SQL, "CALL kyu_settle(1000)") == 0);
	/* Only a queue that exists (jobs or settings): a typo makes no row. */
	sql_is(ACT_PAUSE, "mail",
	       "INSERT INTO kyu_queues (name, paused) SELECT 'mail', 1 FROM DUAL WHERE EXISTS (SELECT 1 FROM "
	       "kyu_jobs WHERE queue = 'mail') OR EXISTS (SELECT 1 FROM kyu_queues WHERE name = 'mail') "
	       "ON DUPLICATE KEY UPDATE paused = VALUES(paused)");
	sql_is(ACT_RESUME, "m'q",
	       "INSERT INTO kyu_queues (name, paused) SELECT 'm\\'q', 0 FROM DUAL WHERE EXISTS (SELECT 1 FROM "
	       "kyu_jobs WHERE queue = 'm\\'q') OR EXISTS (SELECT 1 FROM kyu_queues WHERE name = 'm\\'q') "
	       "ON DUPLICATE KEY UPDATE paused = VALUES(paused)");
	sql_is(ACT_RESET, "mail", "DELETE FROM kyu_queues WHERE name = 'mail'");
	{
		struct strbuf sb = { 0 };
		action_sql_create(&sb, ACT_PAUSE, "mail", true);
		CHECK_STR(sb.buf, "INSERT INTO kyu_queues (name, paused) SELECT 'mail', 1 FROM DUAL "
				  "ON DUPLICATE KEY UPDATE paused = VALUES(paused)");
		sb_free(&sb);
	}
	for (int i = 0; i < ACT_N; i++) {
		CHECK(action_parse(action_name((enum action)i), &a) == 0 && a == (enum action)i);
		CHECK(action_on_queue(a) == (action_needs(a) == NULL));
	}
	CHECK(action_parse("drop", &a) < 0);
}

/* The schedules' actions, one statement each, shared by kyu schedule and
 * the dashboard. */
static void test_schedule_actions(void)
{
	static const char *const want[ACT_SCHED_N] = {
		"UPDATE kyu_schedules SET enabled = 1 WHERE name = 'n\\'1'",
		"UPDATE kyu_schedules SET enabled = 0 WHERE name = 'n\\'1'",
		"INSERT INTO kyu_jobs (id, queue, command, argv, env, cwd, priority, max_attempts, time_limit, "
		"concurrency_key) SELECT CONCAT('cron:', name, ':now:', DATE_FORMAT(UTC_TIMESTAMP(6), "
		"'%Y-%m-%dT%H:%i:%s.%fZ')), queue, command, argv, env, cwd, priority, max_attempts, time_limit, "
		"IF(overlap = 'queue', IFNULL(concurrency_key, CONCAT('cron:', name)), concurrency_key) "
		"FROM kyu_schedules WHERE name = 'n\\'1'",
		"DELETE FROM kyu_schedules WHERE name = 'n\\'1'",
	};
	enum action_schedule a;

	for (int i = 0; i < ACT_SCHED_N; i++) {
		struct strbuf sb = { 0 };
		action_schedule_sql(&sb, (enum action_schedule)i, "n'1");
		CHECK_STR(sb.buf, want[i]);
		sb_free(&sb);
		CHECK(action_schedule_parse(action_schedule_name((enum action_schedule)i), &a) == 0 &&
		      a == (enum action_schedule)i);
	}
	CHECK(action_schedule_parse("cancel", &a) < 0);
	CHECK(strcmp(action_schedule_done(ACT_SCHED_RUN_NOW), "enqueued") == 0);
}

static void test_strong(void)
{
	char prefix[16];
	char *h = guard_hash_password("pw");

	CHECK(h && guard_hash_is_strong(h, prefix, sizeof(prefix)));
	free(h);
	CHECK(!guard_hash_is_strong("$1$saltsalt$qjXMvbEw8oaL.CzflDugX/", prefix, sizeof(prefix)));
	CHECK(strcmp(prefix, "$1$") == 0);
	CHECK(!guard_hash_is_strong("$5$saltsalt$5YHGdtTj3cDvFYtOzLDTgEFNGbILGPU5ZVjmC17eSg1", prefix,
				    sizeof(prefix)));
	CHECK(strcmp(prefix, "$5$") == 0);
	CHECK(!guard_hash_is_strong("$md5$x$y", prefix, sizeof(prefix)));
	CHECK(strcmp(prefix, "$md5$") == 0);
	CHECK(!guard_hash_is_strong("abJnggxhB/yWI", prefix, sizeof(prefix)));
	CHECK(strcmp(prefix, "ab") == 0);
	CHECK(guard_hash_is_strong("$6$saltsalt$pauPrmdmG4BTE9h2HPmywiw152IFch6BJCEsaY6D.PLTfpV8sqvXwWdyfsgVgozkYH9B80bAip/"
				   "08R2BPH2xk/",
				   prefix, sizeof(prefix)));
}

static void test_fails(void)
{
	struct guard_fails *f = guard_fails_new();
	unsigned char a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	long now = 1000;

	for (int i = 1; i < GUARD_FAILS_FREE; i++) {
		guard_fails_record(f, a, 4, now, false);
		CHECK(guard_fails_wait(f, a, 4, now) == 0);
	}
	guard_fails_record(f, a, 4, now, false);
	CHECK(guard_fails_wait(f, a, 4, now) == 1);
	CHECK(guard_fails_wait(f, b, 4, now) == 0); /* another address */
	CHECK(guard_fails_wait(f, a, 4, now + 1) == 0);
	guard_fails_record(f, a, 4, now + 1, false);
	CHECK(guard_fails_wait(f, a, 4, now + 1) == 2);
	for (int i = 0; i < 20; i++)
		guard_fails_record(f, a, 4, now + 1, false);
	CHECK(guard_fails_wait(f, a, 4, now + 1) == GUARD_WAIT_MAX);
	guard_fails_record(f, a, 4, now + 100, true);
	CHECK(guard_fails_wait(f, a, 4, now + 100) == 0);
	guard_fails_record(f, a, 4, now + 100, false);
	CHECK(guard_fails_wait(f, a, 4, now + 100) == 0); /* counted from the success */
	/* A full table: new addresses still get counted. */
	for (unsigned i = 0; i < 2 * GUARD_FAIL_SLOTS; i++) {
		unsigned char k[4] = { 192, 0, (unsigned char)(i >> 8), (unsigned char)i };
		for (int j = 0; j < GUARD_FAILS_FREE; j++)
			guard_fails_record(f, k, 4, now, false);
		CHECK(guard_fails_wait(f, k, 4, now) == 1);
	}
	guard_fails_free(f);
}

int main(void)
{
	test_equal();
	test_host();
	test_origin();
	test_loopback();
	test_token();
	test_auth();
	test_strong();
	test_fails();
	test_text();
	test_cursor();
	test_actions();
	test_schedule_actions();
	return check_done("test_web");
}
