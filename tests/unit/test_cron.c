/* Unit tests for cron.c and tz.c: every field form and error, the day
 * rules, the calendar, and the daylight-saving semantics of cron_next in
 * real zones (skipped, with a note, where tzdata is missing). Expected
 * instants were computed with `date -u -d '...' +%s`; each comment gives
 * the time it stands for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cron.h"
#include "common/tz.h"
#include "check.h"

#define ALL60 ((UINT64_C(1) << 60) - 1)
#define HOUR INT64_C(3600)
#define DAY INT64_C(86400)

static char err[512];

static bool contains(const char *s, const char *part)
{
	bool ok = strstr(s, part) != NULL;

	if (!ok)
		fprintf(stderr, "  \"%s\" lacks \"%s\"\n", s, part);
	return ok;
}

static bool parses(const char *expr, struct cron *c)
{
	err[0] = '\0';
	if (cron_parse(c, expr, err, sizeof(err)) == 0)
		return true;
	fprintf(stderr, "  cron_parse(\"%s\"): %s\n", expr, err);
	return false;
}

/* The error text for expr, "" when it parses. */
static const char *parse_error(const char *expr)
{
	struct cron c;

	err[0] = '\0';
	if (cron_parse(&c, expr, err, sizeof(err)) == 0)
		return "";
	return err;
}

/* cron_next of expr after t in z; -1 on any error (printed). */
static int64_t next(const char *expr, const struct tz *z, int64_t t)
{
	struct cron c;
	int64_t out = 0;

	if (!parses(expr, &c))
		return -1;
	if (cron_next(&c, z, t, &out, err, sizeof(err)) != 0) {
		fprintf(stderr, "  cron_next(\"%s\", %lld): %s\n", expr, (long long)t, err);
		return -1;
	}
	return out;
}

/* Each of the n instants cron_next gives in turn from t. */
static bool sequence(const char *expr, const struct tz *z, int64_t t, const int64_t *want, int n)
{
	bool ok = true;

	for (int i = 0; i < n; i++) {
		t = next(expr, z, t);
		if (t != want[i]) {
			fprintf(stderr, "  \"%s\" #%d: got %lld, want %lld\n", expr, i,
				(long long)t, (long long)want[i]);
			ok = false;
		}
	}
	return ok;
}

static void test_fields(void)
{
	struct cron c;

	CHECK(parses("* * * * *", &c));
	CHECK(c.sec == 1 && c.min == ALL60 && c.hour == 0xffffff && c.dom == 0xfffffffe &&
	      c.mon == 0x1ffe && c.dow == 0x7f);
	CHECK(c.dom_star && c.dow_star && !c.has_seconds);

	CHECK(parses("5 * * * *", &c) && c.min == UINT64_C(1) << 5);
	CHECK(parses("1-3 * * * *", &c) && c.min == 0xe);
	CHECK(parses("*/15 * * * *", &c) && c.min == ((UINT64_C(1) << 0) | (UINT64_C(1) << 15) |
						      (UINT64_C(1) << 30) | (UINT64_C(1) << 45)));
	CHECK(parses("10-20/5 * * * *", &c) &&
	      c.min == ((UINT64_C(1) << 10) | (UINT64_C(1) << 15) | (UINT64_C(1) << 20)));
	CHECK(parses("50/3 * * * *", &c) && c.min == ((UINT64_C(1) << 50) | (UINT64_C(1) << 53) |
						      (UINT64_C(1) << 56) | (UINT64_C(1) << 59)));
	CHECK(parses("1,3,5-7,*/20 * * * *", &c) &&
	      c.min == ((UINT64_C(1) << 1) | (UINT64_C(1) << 3) | (UINT64_C(0x7) << 5) | 1 |
			(UINT64_C(1) << 20) | (UINT64_C(1) << 40)));
	CHECK(parses("0-59 * * * *", &c) && c.min == ALL60);
	CHECK(parses("*/60 * * * *", &c) && c.min == 1);
	CHECK(parses("05 007 * * *", &c) && c.min == 1u << 5 && c.hour == 1u << 7);
	CHECK(parses("0 */6 * * *", &c) &&
	      c.hour == ((1u << 0) | (1u << 6) | (1u << 12) | (1u << 18)));
	CHECK(parses("0 23 * * *", &c) && c.hour == 1u << 23);
	CHECK(parses("0 0 1,15,31 * *", &c) && c.dom == ((1u << 1) | (1u << 15) | (1u << 31)));
	CHECK(!c.dom_star && c.dow_star);
	CHECK(parses("0 0 */10 * *", &c) &&
	      c.dom == ((1u << 1) | (1u << 11) | (1u << 21) | (1u << 31)) && c.dom_star);
	CHECK(parses("0 0 1-31 * 0-6", &c) && c.dom == 0xfffffffe && !c.dom_star && !c.dow_star &&
	      c.dow == 0x7f);
	CHECK(parses("0 0 * 2-4,12 *", &c) && c.mon == ((7u << 2) | (1u << 12)));

	/* Six fields: the first is seconds. */
	CHECK(parses("*/5 * * * * *", &c) && c.has_seconds);
	for (int s = 0; s < 60; s++)
		CHECK(((c.sec >> s) & 1) == (s % 5 == 0));
	CHECK(c.min == ALL60);
	CHECK(parses("59 0 0 1 1 *", &c) && c.sec == UINT64_C(1) << 59 && c.min == 1 &&
	      c.hour == 1 && c.dom == 2 && c.mon == 2);

	/* Blanks. */
	CHECK(parses("  \t0\t\t12  *  *   *  \t", &c) && c.min == 1 && c.hour == 1u << 12);
}

static void test_names(void)
{
	struct cron c;

	CHECK(parses("0 0 1 JAN,mar,Dec *", &c) && c.mon == ((1u << 1) | (1u << 3) | (1u << 12)));
	CHECK(parses("0 0 1 jun-AUG *", &c) && c.mon == (7u << 6));
	CHECK(parses("0 0 1 FEB/3 *", &c) &&
	      c.mon == ((1u << 2) | (1u << 5) | (1u << 8) | (1u << 11)));
	CHECK(parses("0 9 * * MON-FRI", &c) && c.dow == 0x3e && !c.dow_star);
	CHECK(parses("0 9 * * sun", &c) && c.dow == 1);
	CHECK(parses("0 9 * * Sat,SUN", &c) && c.dow == 0x41);
	/* 7 is Sunday too, alone and ending a range. */
	CHECK(parses("0 9 * * 7", &c) && c.dow == 1);
	CHECK(parses("0 9 * * 5-7", &c) && c.dow == 0x61);
	CHECK(parses("0 9 * * SAT-7", &c) && c.dow == 0x41);
	CHECK(parses("0 9 * * 0,7", &c) && c.dow == 1);
	CHECK(parses("0 9 * * MON/2", &c) && c.dow == 0x2b); /* 1,3,5,7 */
	CHECK(parses("0 9 * * */2", &c) && c.dow == 0x55 && c.dow_star);
}

static bool same(const struct cron *a, const struct cron *b)
{
	return a->sec == b->sec && a->min == b->min && a->hour == b->hour && a->dom == b->dom &&
	       a->mon == b->mon && a->dow == b->dow && a->dom_star == b->dom_star &&
	       a->dow_star == b->dow_star && a->has_seconds == b->has_seconds;
}

static void test_macros(void)
{
	static const char *const pairs[][2] = {
		{ "@yearly", "0 0 1 1 *" },  { "@annually", "0 0 1 1 *" },
		{ "@monthly", "0 0 1 * *" }, { "@weekly", "0 0 * * 0" },
		{ "@daily", "0 0 * * *" },   { "@midnight", "0 0 * * *" },
		{ "@hourly", "0 * * * *" },  { "  @DAILY\t ", "0 0 * * *" },
		{ "@Hourly", "0 * * * *" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct cron a = { 0 }, b = { 0 };

		CHECK(parses(pairs[i][0], &a) && parses(pairs[i][1], &b));
		CHECK(same(&a, &b));
	}
	CHECK(contains(parse_error("@reboot"), "\"@reboot\": not supported"));
	CHECK(contains(parse_error("@fortnightly"), "unknown macro \"@fortnightly\""));
	CHECK(contains(parse_error("@"), "unknown macro \"@\""));
	CHECK(contains(parse_error("@daily 5"), "macro \"@daily\": unexpected text"));
	CHECK(contains(parse_error("@dailyx"), "unknown macro \"@dailyx\""));
}

static void test_errors(void)
{
	CHECK_STR(parse_error("61 * * * *"), "minute field \"61\": 61 out of range 0-59");
	CHECK_STR(parse_error("60 * * * * *"), "second field \"60\": 60 out of range 0-59");
	CHECK_STR(parse_error("0 60 * * * *"), "minute field \"60\": 60 out of range 0-59");
	CHECK_STR(parse_error("0 24 * * *"), "hour field \"24\": 24 out of range 0-23");
	CHECK_STR(parse_error("0 0 0 * *"), "day-of-month field \"0\": 0 out of range 1-31");
	CHECK_STR(parse_error("0 0 1-32 * *"), "day-of-month field \"1-32\": 32 out of range 1-31");
	CHECK_STR(parse_error("0 0 * 13 *"), "month field \"13\": 13 out of range 1-12");
	CHECK_STR(parse_error("0 0 * 0 *"), "month field \"0\": 0 out of range 1-12");
	CHECK_STR(parse_error("0 0 * * 8"), "day-of-week field \"8\": 8 out of range 0-7");
	CHECK(contains(parse_error("1,61 * * * *"), "minute field \"1,61\": 61 out of range"));

	CHECK_STR(parse_error("* * * *"),
		  "expected 5 or 6 fields (optional seconds, then minute hour day-of-month month "
		  "day-of-week), got 4");
	CHECK(contains(parse_error("* * * * * * *"), "got 7"));
	CHECK(contains(parse_error("0 0 * * * * * * * *"), "got 10"));
	CHECK_STR(parse_error(""), "empty expression");
	CHECK_STR(parse_error(" \t "), "empty expression");

	CHECK_STR(parse_error("1,,2 * * * *"), "minute field \"1,,2\": empty list item");
	CHECK_STR(parse_error(",1 * * * *"), "minute field \",1\": empty list item");
	CHECK_STR(parse_error("0 1, * * *"), "hour field \"1,\": empty list item");

	CHECK_STR(parse_error("5-2 * * * *"),
		  "minute field \"5-2\": range 5-2 runs backwards (5 > 2)");
	CHECK(contains(parse_error("0 0 * * FRI-MON"), "range FRI-MON runs backwards"));
	CHECK(contains(parse_error("0 0 * DEC-JAN *"), "month field \"DEC-JAN\""));

	CHECK_STR(parse_error("*/0 * * * *"), "minute field \"*/0\": step 0 out of range 1-60");
	CHECK_STR(parse_error("*/61 * * * *"), "minute field \"*/61\": step 61 out of range 1-60");
	CHECK_STR(parse_error("0 */25 * * *"), "hour field \"*/25\": step 25 out of range 1-24");
	CHECK(contains(parse_error("0 0 1-10/0 * *"), "step 0 out of range 1-31"));
	CHECK(contains(parse_error("0 0 * */13 *"), "month field \"*/13\": step 13"));
	CHECK(contains(parse_error("5/0 * * * *"), "step 0"));
	CHECK_STR(parse_error("*/ * * * *"), "minute field \"*/\": a step is missing after '/'");
	CHECK(contains(parse_error("*/x * * * *"), "unexpected \"x\""));

	CHECK_STR(parse_error("5x * * * *"), "minute field \"5x\": unexpected \"x\"");
	CHECK_STR(parse_error("1-2-3 * * * *"), "minute field \"1-2-3\": unexpected \"-3\"");
	CHECK_STR(parse_error("1/2/3 * * * *"), "minute field \"1/2/3\": unexpected \"/3\"");
	CHECK_STR(parse_error("*5 * * * *"), "minute field \"*5\": unexpected \"5\"");
	CHECK_STR(parse_error("** * * * *"), "minute field \"**\": unexpected \"*\"");
	CHECK_STR(parse_error("-1 * * * *"), "minute field \"-1\": unexpected \"-1\"");
	CHECK_STR(parse_error("1- * * * *"), "minute field \"1-\": a number is missing");
	CHECK_STR(parse_error("0 0 * * 1,2;"), "day-of-week field \"1,2;\": unexpected \";\"");
	CHECK_STR(parse_error("0 0 * * *\n"), "day-of-week field \"*?\": unexpected \"?\"");
	CHECK(contains(parse_error("0 0 * * *\x01"), "unexpected \"?\""));
	CHECK(contains(parse_error("+5 * * * *"), "unexpected \"+5\""));

	CHECK_STR(parse_error("1234 * * * *"),
		  "minute field \"1234\": number 1234 too long (at most 3 digits)");
	CHECK(contains(parse_error("99999999999999999999999 * * * *"), "too long"));
	CHECK(contains(parse_error("0 0 1-99999999999 * *"), "day-of-month field"));
	CHECK(contains(parse_error("*/4294967297 * * * *"), "too long"));

	CHECK_STR(parse_error("0 0 * FOO *"), "month field \"FOO\": unknown month name \"FOO\"");
	CHECK_STR(parse_error("0 0 * * MONDAY"),
		  "day-of-week field \"MONDAY\": unknown day-of-week name \"MONDAY\"");
	CHECK(contains(parse_error("0 0 * JANUARY *"), "unknown month name \"JANUARY\""));
	CHECK(contains(parse_error("0 0 * * MO"), "unknown day-of-week name \"MO\""));
	CHECK(contains(parse_error("0 0 * MON *"), "unknown month name \"MON\""));
	CHECK(contains(parse_error("0 0 * * JAN"), "unknown day-of-week name \"JAN\""));
	CHECK_STR(parse_error("MON * * * *"),
		  "minute field \"MON\": unexpected \"MON\" (names only in month and day-of-week)");
	CHECK(contains(parse_error("0 0 JAN * *"), "day-of-month field \"JAN\""));

	/* Long garbage is cut in the message, and the message stays short. */
	{
		char buf[300];

		memset(buf, 'x', sizeof(buf) - 1);
		buf[sizeof(buf) - 1] = '\0';
		memcpy(buf, "1", 1);
		memcpy(buf + sizeof(buf) - 9, " * * * *", 8);
		CHECK(contains(parse_error(buf), "minute field \"1xxx"));
		CHECK(contains(err, "...\": unexpected \"xxx"));
		CHECK(strlen(err) < 200);
	}
	/* A small err buffer truncates but stays terminated. */
	{
		struct cron c;
		char small[8];

		CHECK(cron_parse(&c, "61 * * * *", small, sizeof(small)) == -1);
		CHECK_STR(small, "minute ");
	}
}

static void test_check(void)
{
	struct cron c;

	CHECK(parses("0 0 31 2 *", &c) && cron_check(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "day 31 never occurs in February");
	CHECK(parses("0 0 30 2 *", &c) && cron_check(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "day 30 never occurs in February");
	CHECK(parses("0 0 30,31 2 *", &c) && cron_check(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "days 30-31 never occur in February");
	CHECK(parses("0 0 31 4,6,9,11 *", &c) && cron_check(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "day 31 never occurs in April, June, September or November");
	CHECK(parses("0 0 31 FEB,APR */2", &c) && cron_check(&c, err, sizeof(err)) == -1);
	CHECK_STR(err, "day 31 never occurs in February or April");
	/* Possible: Feb 29 (leap years), a 31-day month among others, the OR
	 * rule (Mondays in February), a day-of-month beginning with '*'. */
	CHECK(parses("0 0 29 2 *", &c) && cron_check(&c, err, sizeof(err)) == 0);
	CHECK(parses("0 0 31 2,3 *", &c) && cron_check(&c, err, sizeof(err)) == 0);
	CHECK(parses("0 0 30,31 2 MON", &c) && cron_check(&c, err, sizeof(err)) == 0);
	CHECK(parses("0 0 */30 2 *", &c) && cron_check(&c, err, sizeof(err)) == 0);
	CHECK(parses("0 0 1-31 2 *", &c) && cron_check(&c, err, sizeof(err)) == 0);
	CHECK(parses("* * * * *", &c) && cron_check(&c, err, sizeof(err)) == 0);
}

static void test_utc(const struct tz *utc)
{
	struct cron c;
	int64_t out = 0;
	struct timespec t0, t1;

	/* Year rollover: 2026-12-31 23:59:59 -> 2027-01-01 00:00:00. */
	CHECK(next("0 0 1 1 *", utc, 1798761599) == 1798761600);
	CHECK(next("@yearly", utc, 1798761600) == 1830297600); /* 2028-01-01 */
	/* 2025-12-31 23:59:59 -> 2026-01-01 00:00:00, by seconds and minutes. */
	CHECK(next("* * * * * *", utc, 1767225599) == 1767225600);
	CHECK(next("* * * * *", utc, 1767225599) == 1767225600);
	/* Strictly after: from 00:00:00 itself, the next is 00:01:00. */
	CHECK(next("* * * * *", utc, 1767225600) == 1767225660);
	/* Seconds: 2026-01-01 00:00:00 -> :05 -> :10; from :01 -> :05. */
	{
		static const int64_t want[] = { 1767225605, 1767225610, 1767225615 };

		CHECK(sequence("*/5 * * * * *", utc, 1767225600, want, 3));
	}
	CHECK(next("*/5 * * * * *", utc, 1767225601) == 1767225605);
	CHECK(next("30 * * * * *", utc, 1767225600) == 1767225630);
	/* Month rollover: 2026-01-31 23:59 -> 2026-02-01 00:00. */
	CHECK(next("0 0 1 * *", utc, 1769903999) == 1769904000);
	/* 2026-01-31 00:00 -> 2026-03-31 -> 2026-05-31: no 31st in Feb, Apr. */
	{
		static const int64_t want[] = { 1774915200, 1780185600 };

		CHECK(sequence("0 0 31 * *", utc, 1769817600, want, 2));
	}
	/* Leap years: from 2025-01-01, Feb 29 is 2028-02-29; 2100 is not leap,
	 * so from 2097-03-01 the next is 2104-02-29. */
	CHECK(next("0 0 29 2 *", utc, 1735689600) == 1835395200);
	CHECK(next("0 0 29 2 *", utc, 4012934400) == 4233686400);
	CHECK(next("0 0 29 2 *", utc, 4070908800) == 4233686400); /* from 2099-01-01 */
	/* 2100-02-28 (Sun) -> 2100-03-01 (Mon), by day and by weekday; 2101-01-01. */
	CHECK(next("0 0 * * *", utc, 4107456000) == 4107542400);
	CHECK(next("0 0 * * MON", utc, 4107456000) == 4107542400);
	CHECK(next("0 0 1 3 *", utc, 4107456000) == 4107542400);
	CHECK(next("0 0 1 1 *", utc, 4133937600) == 4133980800);

	/* OR rule: "13 * FRI" fires on Fridays and on the 13th. From
	 * 2026-01-01 (Thu): Fri 01-02, Fri 01-09, Tue 01-13. */
	{
		static const int64_t want[] = { 1767312000, 1767916800, 1768262400 };

		CHECK(sequence("0 0 13 * FRI", utc, 1767225600, want, 3));
	}
	/* AND rule with '*': "* * FRI" only Fridays; "*\/2 * FRI" odd days
	 * that are Fridays (01-02 is even: 01-09); "13 * *\/2" the 13th on
	 * Sun/Tue/Thu/Sat (2026-01-13 is a Tuesday); "13 * *\/3" the 13th on
	 * Sun/Wed/Sat: 2026-05-13, a Wednesday. */
	CHECK(next("0 0 * * FRI", utc, 1767225600) == 1767312000);
	CHECK(next("0 0 */2 * FRI", utc, 1767225600) == 1767916800);
	CHECK(next("0 0 13 * */2", utc, 1767225600) == 1768262400);
	CHECK(next("0 0 13 * */3", utc, 1767225600) == 1778630400);
	/* 7 and SUN: 2026-01-04 is the first Sunday after 2026-01-01. */
	CHECK(next("0 0 * * 7", utc, 1767225600) == 1767484800);
	CHECK(next("0 0 * * SUN", utc, 1767225600) == 1767484800);
	{
		static const int64_t want[] = { 1767312000, 1767398400, 1767484800, 1767916800 };

		CHECK(sequence("0 0 * * 5-7", utc, 1767225600, want, 4));
	}
	/* "0 9 * * MON-FRI" from Sat 2026-01-03: Mon 2026-01-05 09:00. */
	CHECK(next("0 9 * * MON-FRI", utc, 1767398400) == 1767571200 + 9 * 3600);

	/* Impossible dates: cron_check's message, at once. The process's CPU
	 * time, not the wall clock: a loaded machine may leave this process
	 * off the CPU for longer than the bound between the two readings. */
	CHECK(parses("0 0 31 2 *", &c));
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
	CHECK(cron_next(&c, utc, 1767225600, &out, err, sizeof(err)) == -1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
	CHECK_STR(err, "day 31 never occurs in February");
	CHECK((t1.tv_sec - t0.tv_sec) * 1000000000L + (t1.tv_nsec - t0.tv_nsec) < 5000000L);
	CHECK(parses("0 0 30 2 *", &c) &&
	      cron_next(&c, utc, 1767225600, &out, err, sizeof(err)) == -1);
	CHECK_STR(err, "day 30 never occurs in February");
	/* Possible, but not within 8 years: Feb 29 on a Sunday (AND rule) is
	 * 2032-02-29 from 2025, then 2060 from 2033. */
	CHECK(next("0 0 29 2 */7", utc, 1735689600) == 1961625600);
	CHECK(parses("0 0 29 2 */7", &c) &&
	      cron_next(&c, utc, 1988150400, &out, err, sizeof(err)) == -1);
	CHECK_STR(err, "\"0 0 29 2 0\" does not fire within 8 years after 2033-01-01 00:00:00 UTC");
	CHECK(parses("*/20 0 29 2 */7", &c) &&
	      cron_next(&c, utc, 1988150400, &out, err, sizeof(err)) == -1);
	CHECK(contains(err, "\"0,20,40 0 29 2 0\""));
	CHECK(parses("1-5 0 0 29 2 */7", &c) &&
	      cron_next(&c, utc, 1988150400, &out, err, sizeof(err)) == -1);
	CHECK(contains(err, "\"1-5 0 0 29 2 0\""));
	/* Out of range instants. */
	CHECK(parses("* * * * *", &c) && cron_next(&c, utc, -1, &out, err, sizeof(err)) == -1);
	CHECK(contains(err, "instant -1 is outside"));
	CHECK(cron_next(&c, utc, INT64_MAX, &out, err, sizeof(err)) == -1);
	CHECK(cron_next(&c, utc, 0, &out, err, sizeof(err)) == 0 && out == 60);
	/* NULL means UTC too. */
	CHECK(cron_next(&c, NULL, 1767225599, &out, err, sizeof(err)) == 0 && out == 1767225600);
}

/* Does the wall time w (seconds, counted as if UTC) match c? An
 * independent matcher over gmtime's fields. */
static bool wall_matches(const struct cron *c, time_t w)
{
	struct tm tm;
	bool dom, dow;

	gmtime_r(&w, &tm);
	if (!(c->sec >> tm.tm_sec & 1) || !(c->min >> tm.tm_min & 1) ||
	    !(c->hour >> tm.tm_hour & 1) || !(c->mon >> (tm.tm_mon + 1) & 1))
		return false;
	dom = c->dom >> tm.tm_mday & 1;
	dow = c->dow >> tm.tm_wday & 1;
	return (c->dom_star || c->dow_star) ? dom && dow : dom || dow;
}

/* Brute force over UTC minutes: the first matching minute after t. */
static int64_t brute_utc(const struct cron *c, int64_t t, int64_t limit)
{
	for (int64_t m = (t / 60 + 1) * 60; m < t + limit; m += 60)
		if (wall_matches(c, (time_t)m))
			return m;
	return -1;
}

/* Brute force of the DST semantics, defined another way: walking the
 * instants minute by minute, the expression fires at an instant when the
 * local clock passes a matching wall time (a gap's walls pass at once, at
 * its end). A repeated hour passes its walls again for an expression
 * whose hour field begins with '*', and passes nothing new for one that
 * names hours: those follow the clock's high-water mark. Whole minutes are
 * enough: these zones change on the hour. */
static int64_t brute_zone(const struct cron *c, const struct tz *z, int64_t t, int64_t limit)
{
	/* The mark starts 6 hours early: t may be in a second pass. */
	int64_t u = (t / 60) * 60 - 6 * HOUR, mark = u + tz_offset(z, u), prev = mark;

	for (u += 60; u < t + limit; u += 60) {
		int64_t wall = u + tz_offset(z, u);
		int64_t from = !c->hour_star ? mark + 60 : wall > prev ? prev + 60 : wall;

		for (int64_t w = from; w <= wall; w += 60)
			if (wall_matches(c, (time_t)w) && u > t)
				return u;
		prev = wall;
		if (wall > mark)
			mark = wall;
	}
	return -1;
}

/* Follow c from start through three days in zone z (index zi, 0 being
 * UTC), each firing against the brute force's; the number compared. */
static int follow(const char *expr, const struct cron *c, const struct tz *z, size_t zi,
		  int64_t start)
{
	int64_t t = start;
	int n = 0;

	for (int i = 0; i < 40; i++, n++) {
		int64_t want = zi == 0 ? brute_utc(c, t, 8 * DAY) : brute_zone(c, z, t, 8 * DAY);
		int64_t got = -2;

		if (cron_next(c, z, t, &got, err, sizeof(err)) != 0)
			got = -1;
		/* Beyond the brute force's reach: only "later". */
		if (want < 0 && got >= t + 8 * DAY)
			break;
		if (got != want) {
			fprintf(stderr,
				"  brute: \"%s\" zone %zu after %lld: got %lld, want %lld\n", expr,
				zi, (long long)t, (long long)got, (long long)want);
			CHECK(got == want);
			break;
		}
		if (want < 0 || want > start + 3 * DAY)
			break;
		t = want;
	}
	return n;
}

static void test_brute(const struct tz *utc, const struct tz *berlin, const struct tz *ny)
{
	static const char *const exprs[] = {
		"* * * * *",          "0 * * * *",       "30 2 * * *",     "*/15 2 * * *",
		"0 3 * * *",          "59 1 * * *",      "0,30 1-3 * * *", "5 4 * * SUN",
		"0 0 13 * FRI",       "0 0 */2 * MON",   "17 */5 * * *",   "0 2 8,25 * *",
		"0 12 * 3,10,11 */2", "45 23 28-31 * *", "0 0 1 * *",      "*/7 2 * * *",
	};
	/* Around the 2026 transitions: US spring 03-08, EU spring 03-29, EU
	 * fall 10-25, US fall 11-01, each from the day before (UTC); New Year;
	 * inside the second pass of the repeated hour in Berlin and New York. */
	static const int64_t starts[] = { 1772841600, 1774656000, 1792800000, 1793404800,
					  1767225600, 1792890600, 1793513400 };
	const struct tz *zones[] = { utc, berlin, ny };
	int compared = 0;

	for (size_t e = 0; e < sizeof(exprs) / sizeof(exprs[0]); e++) {
		struct cron c;

		CHECK(parses(exprs[e], &c));
		for (size_t zi = 0; zi < 3; zi++)
			for (size_t s = 0; zones[zi] && s < sizeof(starts) / sizeof(starts[0]); s++)
				compared += follow(exprs[e], &c, zones[zi], zi, starts[s]);
	}
	CHECK(compared > 500);
}

static void test_tz_errors(void)
{
	struct tz *keep = NULL, *z;
	char name[100];
	char dir[] = "/tmp/test_cron.XXXXXX";
	FILE *f;

	/* A failed tz_open sets *out to NULL. */
	CHECK(tz_open(&keep, "UTC", err, sizeof(err)) == 0);
	z = keep;
	CHECK(tz_open(&z, "Mars/Olympus", err, sizeof(err)) == -1 && z == NULL);
	tz_free(keep);
	CHECK_STR(
		err,
		"time zone \"Mars/Olympus\": not found in /usr/share/zoneinfo (is tzdata installed?)");
	CHECK(tz_open(&z, "../etc/passwd", err, sizeof(err)) == -1);
	CHECK_STR(err, "time zone \"../etc/passwd\": \".\" or \"..\" part");
	CHECK(tz_open(&z, "Europe/../../etc/passwd", err, sizeof(err)) == -1);
	CHECK(contains(err, "\"..\" part"));
	CHECK(tz_open(&z, "Europe/./Berlin", err, sizeof(err)) == -1);
	CHECK(tz_open(&z, "/etc/passwd", err, sizeof(err)) == -1);
	CHECK_STR(err, "time zone \"/etc/passwd\": a path, not a zone name such as Europe/Berlin");
	CHECK(tz_open(&z, "/usr/share/zoneinfo/Europe/Berlin", err, sizeof(err)) == -1);
	CHECK(contains(err, "a path"));
	CHECK(tz_open(&z, "", err, sizeof(err)) == -1);
	CHECK_STR(err, "time zone \"\": empty name");
	CHECK(tz_open(&z, "Europe//Berlin", err, sizeof(err)) == -1);
	CHECK(contains(err, "empty part"));
	CHECK(tz_open(&z, "Europe/", err, sizeof(err)) == -1);
	CHECK(tz_open(&z, "Europe/Berlin;reboot", err, sizeof(err)) == -1);
	CHECK(contains(err, "characters other than"));
	CHECK(tz_open(&z, "Europe/Ber lin", err, sizeof(err)) == -1);
	CHECK(tz_open(&z, "Europe/Berlin\n", err, sizeof(err)) == -1);
	CHECK(contains(err, "\"Europe/Berlin?\""));
	CHECK(tz_open(&z, ":Europe/Berlin", err, sizeof(err)) == -1);
	CHECK(tz_open(&z, "EST5EDT,M3.2.0,M11.1.0", err, sizeof(err)) == -1);
	CHECK(tz_open(&z, "Z", err, sizeof(err)) == -1);
	memset(name, 'A', 65);
	name[65] = '\0';
	CHECK(tz_open(&z, name, err, sizeof(err)) == -1);
	CHECK(contains(err, "longer than 64"));
	CHECK(contains(err, "AAA...\""));

	/* TZDIR is where names are looked up; a file there must be TZif. */
	if (mkdtemp(dir)) {
		char path[200];

		snprintf(path, sizeof(path), "%s/Fake", dir);
		f = fopen(path, "w");
		if (f) {
			fputs("not a zone\n", f);
			fclose(f);
		}
		snprintf(path, sizeof(path), "%s/Sub", dir);
		mkdir(path, 0700);
		setenv("TZDIR", dir, 1);
		CHECK(tz_open(&z, "Fake", err, sizeof(err)) == -1);
		snprintf(path, sizeof(path), "time zone \"Fake\": %s/Fake is not a TZif zone file",
			 dir);
		CHECK_STR(err, path);
		CHECK(tz_open(&z, "Sub", err, sizeof(err)) == -1);
		CHECK(contains(err, "is not a regular file"));
		CHECK(tz_open(&z, "Europe/Berlin", err, sizeof(err)) == -1);
		snprintf(path, sizeof(path), "not found in %s (is tzdata installed?)", dir);
		CHECK(contains(err, path));
		/* UTC needs no tzdata. */
		CHECK(tz_open(&z, "UTC", err, sizeof(err)) == 0 && tz_is_utc(z));
		tz_free(z);
		unsetenv("TZDIR");
		snprintf(path, sizeof(path), "%s/Fake", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/Sub", dir);
		rmdir(path);
		rmdir(dir);
	}
	tz_free(NULL);
}

static void test_utc_zone(void)
{
	struct tz *z = NULL;

	unsetenv("TZ");
	CHECK(tz_open(&z, "UTC", err, sizeof(err)) == 0 && z && tz_is_utc(z));
	CHECK(tz_offset(z, 1767225600) == 0);
	CHECK_STR(tz_name(z), "UTC");
	CHECK(getenv("TZ") == NULL);
	tz_free(z);
	CHECK(tz_open(&z, "Etc/UTC", err, sizeof(err)) == 0 && tz_is_utc(z));
	tz_free(z);
}

/* The caller's TZ, set or unset, is as it was after every tz_offset. */
static void test_tz_env(const struct tz *berlin)
{
	struct tm tm;
	time_t t = 1767225600; /* 2026-01-01 00:00 UTC */

	setenv("TZ", "Asia/Tokyo", 1);
	tzset();
	CHECK(tz_offset(berlin, 1767225600) == 3600);
	CHECK(tz_offset(berlin, 1782864000) == 7200); /* 2026-07-01 */
	CHECK_STR(getenv("TZ"), "Asia/Tokyo");
	/* The process's own zone still works once it asks for it again. */
	tzset();
	CHECK(localtime_r(&t, &tm) && tm.tm_gmtoff == 9 * HOUR);

	setenv("TZ", "Europe/Berlin", 1);
	CHECK(tz_offset(berlin, 1767225600) == 3600);
	CHECK_STR(getenv("TZ"), "Europe/Berlin");

	unsetenv("TZ");
	CHECK(tz_offset(berlin, 1767225600) == 3600);
	CHECK(getenv("TZ") == NULL);
	{
		struct cron c;
		int64_t out;

		CHECK(parses("*/15 2 * * *", &c) &&
		      cron_next(&c, berlin, 1774738800, &out, err, sizeof(err)) == 0);
		CHECK(getenv("TZ") == NULL);
		setenv("TZ", "Asia/Tokyo", 1);
		CHECK(cron_next(&c, berlin, 1774738800, &out, err, sizeof(err)) == 0);
		CHECK_STR(getenv("TZ"), "Asia/Tokyo");
		unsetenv("TZ");
	}
}

static void test_offsets(const struct tz *berlin, const struct tz *ny)
{
	CHECK(tz_offset(berlin, 1774745999) == 3600);  /* 2026-03-29 00:59:59Z, CET */
	CHECK(tz_offset(berlin, 1774746000) == 7200);  /* 01:00:00Z, CEST */
	CHECK(tz_offset(ny, 1772953199) == -5 * 3600); /* 2026-03-08 01:59:59 EST */
	CHECK(tz_offset(ny, 1772953200) == -4 * 3600); /* 03:00:00 EDT */
	CHECK(tz_offset(ny, 1793512799) == -4 * 3600); /* 2026-11-01 01:59:59 EDT */
	CHECK(tz_offset(ny, 1793512800) == -5 * 3600); /* 01:00:00 EST */
	CHECK_STR(tz_name(ny), "America/New_York");
	CHECK(!tz_is_utc(ny));
}

static void test_dst_new_york(const struct tz *ny)
{
	/* Spring forward, 2026-03-08 02:00 EST -> 03:00 EDT at 1772953200.
	 * "30 2": from 00:00 EST (1772946000) fires at the transition (03:00
	 * EDT), once; then 2026-03-09 02:30 EDT. */
	{
		static const int64_t want[] = { 1772953200, 1773037800 };

		CHECK(sequence("30 2 * * *", ny, 1772946000, want, 2));
	}
	/* From just before the gap, and from the transition itself. */
	CHECK(next("30 2 * * *", ny, 1772953199) == 1772953200);
	CHECK(next("30 2 * * *", ny, 1772953200) == 1773037800);
	/* "*\/15 2": all four walls are in the gap: one firing that day. */
	{
		static const int64_t want[] = { 1772953200, 1773036000 }; /* then 03-09 02:00 EDT */

		CHECK(sequence("*/15 2 * * *", ny, 1772946000, want, 2));
	}
	/* "0 *": 01:00 EST, then 02:00 (gap) and 03:00 EDT share the
	 * transition, then 04:00 EDT. */
	{
		static const int64_t want[] = { 1772949600, 1772953200, 1772956800 };

		CHECK(sequence("0 * * * *", ny, 1772946000, want, 3));
	}
	/* "0 3" fires at the transition too: 03:00 EDT is its first instant. */
	CHECK(next("0 3 * * *", ny, 1772946000) == 1772953200);

	/* Fall back, 2026-11-01 02:00 EDT -> 01:00 EST at 1793512800: 01:xx
	 * happens twice. A periodic expression (hour field '*') fires in both
	 * passes: "0 *" from 00:00 EDT: 01:00 EDT (1793509200), 01:00 EST
	 * (1793512800), 02:00 EST (1793516400): every real hour. */
	{
		static const int64_t want[] = { 1793509200, 1793512800, 1793516400, 1793520000 };

		CHECK(sequence("0 * * * *", ny, 1793505600, want, 4));
		CHECK(sequence("@hourly", ny, 1793505600, want, 4));
	}
	/* Named hours fire once, at the first (EDT) pass: "0 1,2" gives 01:00
	 * EDT, then 02:00 EST, not 01:00 EST. */
	{
		static const int64_t want[] = { 1793509200, 1793516400 };

		CHECK(sequence("0 1,2 * * *", ny, 1793505600, want, 2));
	}
	/* "30 1": 01:30 EDT (1793511000), then 2026-11-02 01:30 EST. */
	{
		static const int64_t want[] = { 1793511000, 1793601000 };

		CHECK(sequence("30 1 * * *", ny, 1793505600, want, 2));
	}
	/* From inside the second pass (01:10 EST), 01:30 EST is not new for
	 * a named hour; a periodic expression goes on by the clock. */
	CHECK(next("30 1 * * *", ny, 1793513400) == 1793601000);
	CHECK(next("0 * * * *", ny, 1793513400) == 1793516400);
	CHECK(next("30 * * * *", ny, 1793513400) == 1793514600); /* 01:30 EST */
	/* Every second or minute goes on without a pause through the
	 * repeated hour: 01:59:59 EDT -> 01:00:00 EST, one second later. */
	CHECK(next("* * * * *", ny, 1793512740) == 1793512800);
	CHECK(next("* * * * * *", ny, 1793512799) == 1793512800);
	CHECK(next("* * * * * *", ny, 1793512798) == 1793512799);
	/* From inside the second pass (01:10 EST): the next second, minute. */
	CHECK(next("* * * * *", ny, 1793513400) == 1793513460);
	CHECK(next("* * * * * *", ny, 1793513400) == 1793513401);
	CHECK(next("0,1 1,2 * * *", ny, 1793513400) == 1793516400);
}

static void test_dst_berlin(const struct tz *berlin)
{
	/* Spring forward, 2026-03-29 02:00 CET -> 03:00 CEST at 1774746000
	 * (01:00Z). "30 2" from 00:00 CET (1774738800): the transition, then
	 * 2026-03-30 02:30 CEST (1774830600). */
	{
		static const int64_t want[] = { 1774746000, 1774830600 };

		CHECK(sequence("30 2 * * *", berlin, 1774738800, want, 2));
	}
	/* "*\/15 2": once on the 29th, then 2026-03-30 02:00 CEST. */
	{
		static const int64_t want[] = { 1774746000, 1774828800 };

		CHECK(sequence("*/15 2 * * *", berlin, 1774738800, want, 2));
	}
	/* A six-field expression in the gap: 02:30:30 -> the transition. */
	CHECK(next("30 30 2 * * *", berlin, 1774738800) == 1774746000);

	/* Fall back, 2026-10-25 03:00 CEST -> 02:00 CET at 1792890000 (01:00Z).
	 * "30 2" from 00:00 CEST (1792879200): 02:30 CEST (1792888200) only,
	 * then 2026-10-26 02:30 CET (1792978200). */
	{
		static const int64_t want[] = { 1792888200, 1792978200 };

		CHECK(sequence("30 2 * * *", berlin, 1792879200, want, 2));
	}
	/* From the second 02:00 (CET), the second 02:30 does not fire. */
	CHECK(next("30 2 * * *", berlin, 1792890000) == 1792978200);
	/* From 02:10 CET, every five minutes goes on by the clock: 02:15 CET. */
	CHECK(next("*/5 * * * *", berlin, 1792890600) == 1792890900);
	/* "0 *": 01:00 CEST, 02:00 CEST, the second 02:00 (CET, 1792890000),
	 * 03:00 CET: every real hour. */
	{
		static const int64_t want[] = { 1792882800, 1792886400, 1792890000, 1792893600 };

		CHECK(sequence("0 * * * *", berlin, 1792879200, want, 4));
	}
}

int main(void)
{
	struct tz *utc = NULL, *berlin = NULL, *ny = NULL;

	unsetenv("TZDIR");
	test_fields();
	test_names();
	test_macros();
	test_errors();
	test_check();
	test_tz_errors();
	test_utc_zone();
	CHECK(tz_open(&utc, "UTC", err, sizeof(err)) == 0);
	test_utc(utc);
	if (access("/usr/share/zoneinfo/Europe/Berlin", R_OK) != 0) {
		printf("test_cron: skipped the real-zone tests: /usr/share/zoneinfo/Europe/Berlin "
		       "is missing (install tzdata)\n");
		test_brute(utc, NULL, NULL);
	} else {
		CHECK(tz_open(&berlin, "Europe/Berlin", err, sizeof(err)) == 0);
		CHECK(tz_open(&ny, "America/New_York", err, sizeof(err)) == 0);
		if (berlin && ny) {
			test_offsets(berlin, ny);
			test_tz_env(berlin);
			test_dst_new_york(ny);
			test_dst_berlin(berlin);
			test_brute(utc, berlin, ny);
		}
	}
	tz_free(utc);
	tz_free(berlin);
	tz_free(ny);
	return check_done("test_cron");
}
