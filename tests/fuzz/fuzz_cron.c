/* libFuzzer target: cron_parse on a schedule's expression, which whoever
 * may write the schedules table chooses, then cron_check and cron_next
 * (in UTC) on what it accepts, checked against a matcher of their own. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cron.h"
#include "common/tz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Does instant t (UTC) match c? gmtime's fields, not cron.c's calendar. */
static bool matches(const struct cron *c, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	bool dom, dow;

	if (!gmtime_r(&tt, &tm))
		__builtin_trap();
	if (!(c->sec >> tm.tm_sec & 1) || !(c->min >> tm.tm_min & 1) ||
	    !(c->hour >> tm.tm_hour & 1) || !(c->mon >> (tm.tm_mon + 1) & 1))
		return false;
	dom = c->dom >> tm.tm_mday & 1;
	dow = c->dow >> tm.tm_wday & 1;
	return (c->dom_star || c->dow_star) ? dom && dow : dom || dow;
}

/* An error message: terminated within its buffer, and not empty unless
 * the buffer has room for nothing else. */
static void check_err(const char *err, size_t len)
{
	size_t n = strnlen(err, len);

	if (n == len || (n == 0 && len > 1))
		__builtin_trap();
}

static void check_next(const struct cron *c, const struct tz *utc, int64_t after, bool possible)
{
	char err[256];
	int64_t out = 0;

	/* A failure may be right (no firing within 8 years); a success after
	 * cron_check said never is not. */
	if (cron_next(c, utc, after, &out, err, sizeof(err)) != 0) {
		check_err(err, sizeof(err));
		return;
	}
	if (!possible || out <= after || !matches(c, out))
		__builtin_trap();
	/* Nothing matches in between, as far as a cheap look goes. */
	for (int64_t t = after + 1; t < out && t <= after + 1000; t++)
		if (matches(c, t))
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* 2026-01-01 00:00:00, 2028-02-28 23:59:59 (before a leap day) and
	 * 2099-12-31 23:59:59 (before a year that is not leap). */
	static const int64_t afters[] = { 1767225600, 1835395199, 4102444799 };
	static const size_t lens[] = { 256, 16, 1 };
	static struct tz *utc;
	struct cron c;
	char *expr, *err;
	bool possible;

	if (!utc) {
		char e[128];

		if (tz_open(&utc, "UTC", e, sizeof(e)) != 0)
			__builtin_trap();
	}
	expr = malloc(size + 1);
	if (!expr)
		abort();
	memcpy(expr, data, size);
	expr[size] = '\0';
	/* Error buffers of several sizes, each allocated to its exact size
	 * so that AddressSanitizer sees a write past it. */
	for (size_t k = 1; k < sizeof(lens) / sizeof(lens[0]); k++) {
		err = malloc(lens[k]);
		if (!err)
			abort();
		if (cron_parse(&c, expr, err, lens[k]) != 0)
			check_err(err, lens[k]);
		free(err);
	}
	err = malloc(lens[0]);
	if (!err)
		abort();
	if (cron_parse(&c, expr, err, lens[0]) != 0) {
		check_err(err, lens[0]);
	} else {
		if (!c.sec || !c.min || !c.hour || !c.dom || !c.mon || !c.dow || (c.dom & 1) ||
		    c.hour >> 24 || c.mon & 0xe001 || c.dow & 0x80 || c.sec >> 60 || c.min >> 60)
			__builtin_trap();
		possible = cron_check(&c, err, lens[0]) == 0;
		if (!possible)
			check_err(err, lens[0]);
		for (size_t i = 0; i < sizeof(afters) / sizeof(afters[0]); i++)
			check_next(&c, utc, afters[i], possible);
	}
	free(err);
	free(expr);
	return 0;
}
