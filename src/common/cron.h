/* Cron expressions: parsing, a static sanity check, and the next instant at
 * which one fires in a time zone. Pure functions over a small bitmask
 * struct (no allocation, no clock: the caller passes the time), so that the
 * scheduler can keep one per schedule row and tests need no waiting.
 * Used by kyud's workers (src/worker: the schedules) and kyu (src/cli:
 * kyu schedule checks an expression and shows its first run).
 *
 * One module of some 740 lines, over the rule's 700: parsing, the
 * calendar and the search for the next instant share the field table and
 * struct cron, and none is of use without the others; the calendar's
 * helpers are a few static lines each.
 *
 * Syntax: five fields "min hour dom mon dow", or six with a leading
 * seconds field "sec min hour dom mon dow"; blanks (spaces, tabs) separate
 * them, and may also lead and trail. Each field is a comma list of items:
 *   *        every value          a-b      a range, a <= b
 *   n        one value            a/n, a-b/n, *\/n
 *                                          every n-th value from a (to the
 *                                          field's end, or to b, or over
 *                                          the whole field)
 * Ranges: second and minute 0-59, hour 0-23, day of month 1-31, month 1-12
 * or JAN-DEC, day of week 0-7 or SUN-SAT (0 and 7 are Sunday; names are
 * case-insensitive and may end ranges: MON-FRI). A step is 1 to the number
 * of values of the field; numbers have at most 3 digits. Macros: @yearly
 * (@annually) "0 0 1 1 *", @monthly "0 0 1 * *", @weekly "0 0 * * 0",
 * @daily (@midnight) "0 0 * * *", @hourly "0 * * * *"; @reboot is refused,
 * as there is no boot for a schedule to follow.
 *
 * Days, as Vixie cron decides them: when the day-of-month or the day-of-week
 * field begins with '*' (also "*\/2"), a day must match both fields; when
 * neither does, a day matches when either matches ("0 0 1 * MON" fires on
 * the 1st and on every Monday). */
#ifndef KYU_CRON_H
#define KYU_CRON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attr.h"

struct tz;

struct cron {
	uint64_t sec, min;       /* bit n: second/minute n (0-59) */
	uint32_t hour;           /* 0-23 */
	uint32_t dom;            /* bit n: day of month n (1-31) */
	uint16_t mon;            /* bit n: month n (1-12) */
	uint8_t dow;             /* bit n: weekday n (0 = Sunday .. 6) */
	bool dom_star, dow_star; /* the field began with '*' (cron's OR rule, above) */
	bool hour_star;          /* the hour field began with '*': see cron_next */
	bool has_seconds;        /* six fields were given */
};

/* How far cron_next looks ahead, in days (8 years and a bit). */
#define CRON_HORIZON_DAYS 2928 /* 8 * 366 */

/* Parse expr: 0, or -1 with a message in err naming the field and the bad
 * text, e.g. `minute field "61": 61 out of range 0-59`. */
KYU_MUSTCHECK int cron_parse(struct cron *c, const char *expr, char *err, size_t errlen);

/* The first instant strictly after `after` (UTC, seconds since the epoch)
 * at which c fires in zone z: 0 and *out, or -1 with a message in err when
 * it does not fire within CRON_HORIZON_DAYS (at once, without a search,
 * when cron_check fails) or `after` lies outside 1970-9000.
 *
 * The fields match the zone's wall-clock time. A matching wall time W fires
 * at f(W), the earliest instant whose local time is W:
 *  - a W that occurs twice, when clocks go back (02:30 on the day Berlin
 *    goes from 03:00 back to 02:00), fires once, at its first occurrence,
 *    when the hour field names hours ("30 2 * * *": a daily job runs once
 *    a day). When the hour field begins with '*' (hour_star: "0 * * * *",
 *    "*\/10 * * * *", @hourly) the expression is periodic through the day
 *    and fires at both occurrences, as Vixie cron runs such jobs by the
 *    clock it sees: an hourly job still runs every hour (in New York on a
 *    fall-back day: 05:00Z = 01:00 EDT, 06:00Z = 01:00 EST, 07:00Z =
 *    02:00 EST);
 *  - a W that does not occur, in the gap when clocks go forward (02:30 on
 *    the day New York goes from 02:00 to 03:00), fires at the end of the
 *    gap, the transition instant (03:00 local); every W in one gap maps to
 *    that same instant, which fires once ("*\/15 2 * * *" fires once that
 *    day, "30 2 * * *" and "0 3 * * *" share that instant).
 * The result is the smallest f(W) > after over all matching W. Five-field
 * expressions fire at second 0. */
KYU_MUSTCHECK int cron_next(const struct cron *c, const struct tz *z, int64_t after, int64_t *out,
			    char *err, size_t errlen);

/* Cheap static check, for when a schedule row is read: -1 with a message
 * when the day-of-month and month fields can never meet (e.g. "day 31
 * never occurs in February", "days 30-31 never occur in February"),
 * counting February 29 as possible; 0 otherwise. Only the AND rule can make
 * that happen: a day-of-week field that does not begin with '*' adds its
 * own days. */
KYU_MUSTCHECK int cron_check(const struct cron *c, char *err, size_t errlen);

#endif
