/* The scheduler's planning (which instant fires, which next_run follows,
 * what the missed policies do) and its statements, without a server. The
 * instants are whole seconds since the epoch, UTC; 1798761600 is
 * 2027-01-01T00:00:00Z. */
#include <stdio.h>
#include <string.h>

#include "worker/schedules.h"
#include "check.h"

#define T0 INT64_C(1798761600)
#define US(s) ((int64_t)(s) * 1000000)

static struct schedules_row row(const char *cron, char missed, int64_t next, bool has_next)
{
	return (struct schedules_row){ .name = (char *)(uintptr_t) "s", .cron = (char *)(uintptr_t)cron,
				   .tz = (char *)(uintptr_t) "UTC", .next_run = next,
				   .has_next = has_next, .missed = missed, .grace = 60 };
}

static void test_new_row(void)
{
	struct schedules_row r = row("0 * * * *", 'o', 0, false);
	struct schedules_step st;
	char err[256];

	/* A new row: the first instant after now, nothing fired. */
	CHECK(schedules_plan(&r, US(T0 + 10) + 5, &st, err, sizeof(err)) == 0);
	CHECK(!st.fire);
	CHECK(st.next == T0 + 3600);
	/* Exactly on an instant: that instant is not "after now". */
	CHECK(schedules_plan(&r, US(T0), &st, err, sizeof(err)) == 0);
	CHECK(st.next == T0 + 3600);
}

static void test_on_time(void)
{
	struct schedules_row r = row("0 * * * *", 's', T0, true);
	struct schedules_step st;
	char err[256];

	/* Due and less than grace late: fires, whatever the policy. */
	CHECK(schedules_plan(&r, US(T0) + 300000, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.instant == T0 && st.next == T0 + 3600 && st.skipped == 0);
	CHECK(schedules_plan(&r, US(T0 + 59), &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.instant == T0);
	/* grace seconds late: missed, skipped. */
	CHECK(schedules_plan(&r, US(T0 + 60), &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.next == T0 + 3600 && st.skipped == 1);
}

static void test_missed(void)
{
	/* Every minute; next_run T0; now T0 + 10 min 30 s; grace 60 s: the
	 * instants T0 .. T0+9min are missed, T0+10min is on time. */
	int64_t now = US(T0 + 630);
	struct schedules_row r = row("* * * * *", 's', T0, true);
	struct schedules_step st;
	char err[256];

	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.next == T0 + 600 && st.skipped == 10 && !st.skipped_more);

	r.missed = 'o';
	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.instant == T0 && st.next == T0 + 600);

	r.missed = 'a';
	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.instant == T0 && st.next == T0 + 60);

	/* 150 missed: the oldest 50 are passed over in one step, the last
	 * 100 then fire one by one. */
	r.next_run = T0;
	now = US(T0 + 150 * 60 + 30);
	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.skipped == 50 && st.next == T0 + 50 * 60);
	r.next_run = st.next;
	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.instant == T0 + 50 * 60 && st.next == T0 + 51 * 60);

	/* Every second, down for two days: counting stops; all skipped. */
	r = row("* * * * * *", 'a', T0, true);
	CHECK(schedules_plan(&r, US(T0 + 2 * 86400), &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.skipped_more && st.next == T0 + 2 * 86400 - 59);
	r.missed = 's';
	CHECK(schedules_plan(&r, US(T0 + 2 * 86400), &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.skipped_more && st.next == T0 + 2 * 86400 - 59);
}

static void test_errors(void)
{
	struct schedules_row r = row("* * * *", 'o', 0, false);
	struct schedules_step st;
	char err[256];

	CHECK(schedules_plan(&r, US(T0), &st, err, sizeof(err)) < 0);
	r.cron = (char *)(uintptr_t) "0 0 31 2 *";
	CHECK(schedules_plan(&r, US(T0), &st, err, sizeof(err)) < 0);
	CONTAINS(err, "February");
	r.cron = (char *)(uintptr_t) "* * * * *";
	r.tz = (char *)(uintptr_t) "Mars/Olympus";
	CHECK(schedules_plan(&r, US(T0), &st, err, sizeof(err)) < 0);
	CONTAINS(err, "Mars/Olympus");
	r.tz = (char *)(uintptr_t) "UTC";
	r.runs_nothing = true;
	CHECK(schedules_plan(&r, US(T0), &st, err, sizeof(err)) < 0);
	CONTAINS(err, "neither command nor argv");
}

static void test_statements(void)
{
	struct schedules_row r = row("0 * * * *", 'o', T0, true);
	struct schedules_step st = { .fire = true, .instant = T0, .next = T0 + 3600 };
	struct strbuf sb = { 0 };

	schedules_job_id(&sb, "nightly", T0);
	CHECK_STR(sb.buf, "cron:nightly:2027-01-01T00:00:00Z");
	sb_reset(&sb);

	/* A firing step: one transaction, the compare-and-set on the values
	 * read, then the job only if it moved next_run. */
	schedules_step_build(&sb, "s", &r, &st);
	CONTAINS(sb.buf, "START TRANSACTION; UPDATE kyu_schedules s SET s.last_job = IF(");
	CONTAINS(sb.buf, "s.next_run = '2027-01-01 01:00:00' WHERE s.name = 's' AND s.next_run = "
			 "'2027-01-01 00:00:00' AND s.cron = '0 * * * *' AND s.timezone = 'UTC'");
	CONTAINS(sb.buf, "SET @kyu_cas = ROW_COUNT(); INSERT INTO kyu_jobs");
	CONTAINS(sb.buf, "SELECT 'cron:s:2027-01-01T00:00:00Z', s.queue");
	CONTAINS(sb.buf, "AND @kyu_cas = 1 AND s.last_job <=> 'cron:s:2027-01-01T00:00:00Z'");
	CONTAINS(sb.buf, "AND NOT EXISTS (SELECT 1 FROM kyu_jobs d WHERE d.id = "
			 "'cron:s:2027-01-01T00:00:00Z') ON DUPLICATE KEY UPDATE");
	CONTAINS(sb.buf, "; COMMIT");
	sb_reset(&sb);

	/* A step without a job: the compare-and-set alone. */
	st.fire = false;
	r.has_next = false;
	schedules_step_build(&sb, "s", &r, &st);
	CHECK_STR(sb.buf, "UPDATE kyu_schedules s SET s.next_run = '2027-01-01 01:00:00' WHERE "
			  "s.name = 's' AND s.next_run IS NULL AND s.cron = '0 * * * *' AND "
			  "s.timezone = 'UTC' AND s.enabled = 1 AND s.error IS NULL");
	sb_reset(&sb);

	schedules_mark_build(&sb, &r, "it's bad");
	CONTAINS(sb.buf, "SET s.error = 'it\\'s bad', s.next_run = NULL WHERE s.name = 's'");
	sb_reset(&sb);

	schedules_scan_build(&sb);
	CONTAINS(sb.buf, "next_run <= UTC_TIMESTAMP(6)");
	CONTAINS(sb.buf, "MIN(next_run)");
	sb_free(&sb);
}

static void test_pacing(void)
{
	struct schedules s;
	struct strbuf sb = { 0 };

	schedules_init(&s);
	/* A fresh scheduler scans at once, then not before the safety poll. */
	CHECK(schedules_ready(&s, 100.0));
	CHECK(!schedules_build(&s, &sb, 100.0));
	CHECK(s.sent == SCHEDULES_SCAN);
	CHECK(!schedules_ready(&s, 100.0));
	s.sent = SCHEDULES_NONE;
	CHECK(!schedules_ready(&s, 150.0));
	CHECK(schedules_ready(&s, 100.0 + SCHEDULES_POLL));
	/* A wake-up right after a scan waits SCHEDULES_MIN_GAP. */
	schedules_poke(&s, 100.05);
	CHECK(!schedules_ready(&s, 100.1));
	CHECK(schedules_ready(&s, 100.0 + SCHEDULES_MIN_GAP));
	CHECK(schedules_wake_time(&s, 100.1) == 100.0 + SCHEDULES_MIN_GAP);
	sb_free(&sb);
	schedules_free(&s);

	/* The fallback follows the daemon's poll_interval, never under
	 * SCHEDULES_POLL; a shorter one set later brings the timer forward. */
	schedules_init(&s);
	schedules_set_poll(&s, 120.0, 0.0);
	CHECK(!schedules_build(&s, &sb, 100.0) && s.sent == SCHEDULES_SCAN);
	s.sent = SCHEDULES_NONE;
	CHECK(!schedules_ready(&s, 100.0 + SCHEDULES_POLL));
	CHECK(schedules_ready(&s, 220.0));
	schedules_set_poll(&s, 1.0, 110.0);
	CHECK(s.poll == SCHEDULES_POLL);
	CHECK(schedules_wake_time(&s, 110.0) == 110.0 + SCHEDULES_POLL);
	sb_free(&sb);
	schedules_free(&s);
}

/* A due row whose insert failed waits for its hold, without waking the
 * loop before; nothing is planned while a statement is in flight. */
static void test_holds(void)
{
	struct schedules s;
	struct strbuf sb = { 0 };
	char *cells[10] = { (char *)(uintptr_t) "1798761600000000", NULL, (char *)(uintptr_t) "s",
			    (char *)(uintptr_t) "* * * * *", (char *)(uintptr_t) "UTC",
			    (char *)(uintptr_t) "1798761600", (char *)(uintptr_t) "once",
			    (char *)(uintptr_t) "60", (char *)(uintptr_t) "0", (char *)(uintptr_t) "1" };
	unsigned long lens[10];
	struct db_result res = { .n_cols = 10, .n_rows = 1, .cells = cells, .lens = lens };
	struct db_result fail = { .err_no = 1644, .err = "full" };
	struct db_reply scan = { .fail = DB_OK, .n = 1, .r = &res };
	struct db_reply bad = { .fail = DB_ERROR, .err = "full", .n = 1, .r = &fail };

	for (int i = 0; i < 10; i++)
		lens[i] = cells[i] ? strlen(cells[i]) : 0;
	schedules_init(&s);
	CHECK(!schedules_build(&s, &sb, 10.0) && s.sent == SCHEDULES_SCAN);
	CHECK(schedules_wake_time(&s, 10.0) == 0);
	schedules_read(&s, &scan, 10.0);
	CHECK(s.n_rows == 1 && s.rows[0].has_next && s.rows[0].next_run == 1798761600);
	CHECK(schedules_ready(&s, 10.0) && schedules_wake_time(&s, 10.0) == 10.0);
	sb_reset(&sb);
	CHECK(schedules_build(&s, &sb, 10.0) && s.sent == SCHEDULES_STEP);
	schedules_read(&s, &bad, 10.1);
	/* Held for 10 s; the next scan soon, and it finds the row held. */
	CHECK(s.n_holds == 1 && s.holds[0].until > 20.0);
	CHECK(s.scan_at <= 10.1 + SCHEDULES_MIN_GAP);
	sb_reset(&sb);
	CHECK(schedules_ready(&s, 10.3) && !schedules_build(&s, &sb, 10.3) && s.sent == SCHEDULES_SCAN);
	schedules_read(&s, &scan, 10.3);
	CHECK(!schedules_ready(&s, 10.4));
	CHECK(schedules_wake_time(&s, 10.4) == s.holds[0].until);
	CHECK(schedules_ready(&s, s.holds[0].until));
	/* The row no longer due (fixed, or fired elsewhere): its hold goes. */
	res.n_rows = 1;
	cells[2] = NULL;
	sb_reset(&sb);
	s.next_row = s.n_rows; /* as if stepped */
	CHECK(!schedules_build(&s, &sb, 30.0) && s.sent == SCHEDULES_SCAN);
	schedules_read(&s, &scan, 30.0);
	CHECK(s.n_rows == 0 && s.n_holds == 0);
	sb_free(&sb);
	schedules_free(&s);
}

/* A forward step of the clock (issue 44.2): the instants it jumped over
 * are missed, even the last minute of them, which the grace window would
 * otherwise call on time. Every two seconds; the clock jumped from T0 to
 * T0 + 3600; now is a second after. */
static void test_leap(void)
{
	struct schedules_row r = row("*/2 * * * * *", 'o', T0 + 2, true);
	struct schedules_step st;
	char err[256];
	const int64_t now = US(T0 + 3601);

	/* Without the step: one job for the missed hour, then every instant
	 * of the last minute on time (the 13 jobs at once of the issue). */
	CHECK(schedules_plan(&r, now, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.merged && st.instant == T0 + 2 && st.next == T0 + 3542);
	/* With it: one job for them all; the next on-time instant is after
	 * the step. */
	CHECK(schedules_plan_leap(&r, now, T0, T0 + 3600, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && st.merged && st.instant == T0 + 2 && st.next == T0 + 3602);
	/* An instant from before the step is late by the time that really
	 * passed (a second): on time. */
	r.next_run = T0;
	CHECK(schedules_plan_leap(&r, now, T0, T0 + 3600, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && !st.merged && st.instant == T0 && st.next == T0 + 2);
	/* skip: none of the jumped instants, the next one after the step. */
	r = row("*/2 * * * * *", 's', T0 + 2, true);
	CHECK(schedules_plan_leap(&r, now, T0, T0 + 3600, &st, err, sizeof(err)) == 0);
	CHECK(!st.fire && st.next == T0 + 3602 && st.skipped == 1800);
	/* A step long past changes nothing. */
	r = row("*/2 * * * * *", 'o', T0 + 7200, true);
	CHECK(schedules_plan_leap(&r, US(T0 + 7201), T0, T0 + 3600, &st, err, sizeof(err)) == 0);
	CHECK(st.fire && !st.merged && st.instant == T0 + 7200);
}

int main(void)
{
	test_leap();
	test_new_row();
	test_on_time();
	test_missed();
	test_errors();
	test_statements();
	test_pacing();
	test_holds();
	return check_done("test_schedules");
}
