/* Cron expressions: parsing, a static sanity check, and the next instant at
 * which one fires in a time zone. See cron.h. */
#include "cron.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "tz.h"

#define DAY 86400

/* Numbers longer than this are refused before they are converted, so no
 * input can overflow; every valid value and step fits in 3 digits. */
#define MAX_DIGITS 3

/* Quoted field text in messages is cut here: enough to recognise it. */
#define SHOWN_MAX 40

/* `after` must lie in [1970, 9000): years stay positive and far from any
 * overflow in the calendar arithmetic, with room for the horizon. */
#define AFTER_MIN INT64_C(0)
#define AFTER_MAX INT64_C(221845392000) /* 9000-01-01 00:00:00 UTC */

static const char *const month_names[] = { "JAN", "FEB", "MAR", "APR", "MAY", "JUN",
					   "JUL", "AUG", "SEP", "OCT", "NOV", "DEC" };
static const char *const day_names[] = { "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT" };
static const char *const month_long[] = { "January",   "February", "March",    "April",
					  "May",       "June",     "July",     "August",
					  "September", "October",  "November", "December" };

enum { F_SEC, F_MIN, F_HOUR, F_DOM, F_MON, F_DOW };

struct field {
	const char *name;
	int lo, hi;
	const char *const *names; /* three-letter names of lo, lo + 1, ...; or NULL */
	int nnames;
};

/* Day of week runs to 7 so that 7 and ranges such as 5-7 mean Sunday, as
 * in Vixie cron; the bit is folded onto 0 once the field is parsed. */
static const struct field fields[] = {
	[F_SEC] = { "second", 0, 59, NULL, 0 },
	[F_MIN] = { "minute", 0, 59, NULL, 0 },
	[F_HOUR] = { "hour", 0, 23, NULL, 0 },
	[F_DOM] = { "day-of-month", 1, 31, NULL, 0 },
	[F_MON] = { "month", 1, 12, month_names, 12 },
	[F_DOW] = { "day-of-week", 0, 7, day_names, 7 },
};

static const struct {
	const char *name, *expr;
} macros[] = {
	{ "@yearly", "0 0 1 1 *" }, { "@annually", "0 0 1 1 *" }, { "@monthly", "0 0 1 * *" },
	{ "@weekly", "0 0 * * 0" }, { "@daily", "0 0 * * *" },    { "@midnight", "0 0 * * *" },
	{ "@hourly", "0 * * * *" },
};

/* ---- parsing */

/* One field being parsed; the whole text is kept for messages. */
struct scan {
	const struct field *f;
	const char *text, *p, *end;
	char *err;
	size_t errlen;
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Copy len bytes of s for a message: unprintable bytes as '?', so that
 * input cannot forge log lines, and long text cut with "...". */
static void shown(char *dst, size_t dstlen, const char *s, size_t len)
{
	size_t i, n = len < SHOWN_MAX ? len : SHOWN_MAX;

	if (n >= dstlen)
		n = dstlen - 1;
	for (i = 0; i < n; i++) {
		if (s[i] >= 0x20 && s[i] < 0x7f)
			dst[i] = s[i];
		else
			dst[i] = '?';
	}
	dst[n] = '\0';
	if (n < len && n >= 3)
		memcpy(dst + n - 3, "...", 3);
}

/* Format an error about the field: `minute field "61": ...`. */
__attribute__((format(printf, 2, 3))) static int fail(const struct scan *s, const char *fmt, ...)
{
	char text[SHOWN_MAX + 1];
	va_list ap;
	int n;

	shown(text, sizeof(text), s->text, (size_t)(s->end - s->text));
	n = snprintf(s->err, s->errlen, "%s field \"%s\": ", s->f->name, text);
	if (n >= 0 && (size_t)n < s->errlen) {
		va_start(ap, fmt);
		vsnprintf(s->err + n, s->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* The rest of the current item, for "unexpected ..." messages. */
static int fail_unexpected(struct scan *s)
{
	char what[SHOWN_MAX + 1];
	const char *q = s->p;

	while (q < s->end && *q != ',')
		q++;
	shown(what, sizeof(what), s->p, (size_t)(q - s->p));
	return fail(s, "unexpected \"%s\"", what);
}

/* A run of digits of at most MAX_DIGITS, as a number. */
static int number(struct scan *s, int *v)
{
	const char *q = s->p;
	int n = 0;

	*v = 0;
	while (q < s->end && is_digit(*q))
		q++;
	if (q - s->p > MAX_DIGITS) {
		char what[SHOWN_MAX + 1];

		shown(what, sizeof(what), s->p, (size_t)(q - s->p));
		return fail(s, "number %s too long (at most %d digits)", what, MAX_DIGITS);
	}
	for (; s->p < q; s->p++)
		n = n * 10 + (*s->p - '0');
	*v = n;
	return 0;
}

/* A month or weekday name, in a field that has them. */
static int name(struct scan *s, int *v)
{
	const char *q = s->p;
	char what[SHOWN_MAX + 1];

	while (q < s->end && is_alpha(*q))
		q++;
	shown(what, sizeof(what), s->p, (size_t)(q - s->p));
	if (!s->f->names)
		return fail(s, "unexpected \"%s\" (names only in month and day-of-week)", what);
	if (q - s->p == 3)
		for (int i = 0; i < s->f->nnames; i++)
			if (strncasecmp(s->p, s->f->names[i], 3) == 0) {
				*v = s->f->lo + i;
				s->p = q;
				return 0;
			}
	return fail(s, "unknown %s name \"%s\"", s->f->name, what);
}

/* One value (number or name) within the field's range. */
static int value(struct scan *s, int *v)
{
	*v = 0;
	if (s->p < s->end && is_alpha(*s->p))
		return name(s, v);
	if (s->p >= s->end || !is_digit(*s->p)) {
		if (s->p >= s->end || *s->p == ',')
			return fail(s, "a number is missing");
		return fail_unexpected(s);
	}
	if (number(s, v) != 0)
		return -1;
	if (*v < s->f->lo || *v > s->f->hi)
		return fail(s, "%d out of range %d-%d", *v, s->f->lo, s->f->hi);
	return 0;
}

/* The n of "/n": 1 up to the number of values of the field. */
static int step(struct scan *s, int *v)
{
	int span = s->f->hi - s->f->lo + 1;

	if (s->p >= s->end || !is_digit(*s->p)) {
		if (s->p >= s->end || *s->p == ',')
			return fail(s, "a step is missing after '/'");
		return fail_unexpected(s);
	}
	if (number(s, v) != 0)
		return -1;
	if (*v < 1 || *v > span)
		return fail(s, "step %d out of range 1-%d", *v, span);
	return 0;
}

/* One list item: *, n, a-b, each optionally with /step (n/step runs to
 * the field's end). */
static int item(struct scan *s, uint64_t *bits)
{
	const char *start = s->p;
	int a, b, by = 1;

	if (*s->p == '*') {
		s->p++;
		a = s->f->lo;
		b = s->f->hi;
	} else {
		if (value(s, &a) != 0)
			return -1;
		b = a;
		if (s->p < s->end && *s->p == '-') {
			s->p++;
			if (value(s, &b) != 0)
				return -1;
			if (a > b) {
				char what[SHOWN_MAX + 1];

				shown(what, sizeof(what), start, (size_t)(s->p - start));
				return fail(s, "range %s runs backwards (%d > %d)", what, a, b);
			}
		} else if (s->p < s->end && *s->p == '/') {
			b = s->f->hi;
		}
	}
	if (s->p < s->end && *s->p == '/') {
		s->p++;
		if (step(s, &by) != 0)
			return -1;
	}
	if (s->p < s->end && *s->p != ',')
		return fail_unexpected(s);
	for (int v = a; v <= b; v += by)
		*bits |= UINT64_C(1) << v;
	return 0;
}

/* A whole field: a comma list of items, none empty. */
static int field(const struct field *f, const char *text, size_t len, uint64_t *bits, char *err,
		 size_t errlen)
{
	struct scan s = { f, text, text, text + len, err, errlen };

	*bits = 0;
	for (;;) {
		if (s.p >= s.end || *s.p == ',')
			return fail(&s, "empty list item");
		if (item(&s, bits) != 0)
			return -1;
		if (s.p >= s.end)
			return 0;
		s.p++; /* the comma */
	}
}

static int macro(struct cron *c, const char *p, char *err, size_t errlen)
{
	size_t len = 0;
	char what[SHOWN_MAX + 1];

	while (p[len] && !is_blank(p[len]))
		len++;
	shown(what, sizeof(what), p, len);
	for (size_t i = len; p[i]; i++)
		if (!is_blank(p[i])) {
			snprintf(err, errlen, "macro \"%s\": unexpected text after it", what);
			return -1;
		}
	if (len == 7 && strncasecmp(p, "@reboot", 7) == 0) {
		snprintf(err, errlen,
			 "macro \"%s\": not supported (a schedule fires at times, not at start-up)",
			 what);
		return -1;
	}
	for (size_t i = 0; i < sizeof(macros) / sizeof(macros[0]); i++)
		if (strlen(macros[i].name) == len && strncasecmp(p, macros[i].name, len) == 0)
			return cron_parse(c, macros[i].expr, err, errlen);
	snprintf(err, errlen,
		 "unknown macro \"%s\" (expected @yearly, @annually, @monthly, @weekly, @daily, "
		 "@midnight or @hourly)",
		 what);
	return -1;
}

int cron_parse(struct cron *c, const char *expr, char *err, size_t errlen)
{
	const char *start[7];
	size_t len[7];
	uint64_t bits[6];
	int n = 0, first;
	const char *p = expr;

	memset(c, 0, sizeof(*c));
	while (is_blank(*p))
		p++;
	if (*p == '@')
		return macro(c, p, err, errlen);
	while (*p) {
		const char *q = p;

		while (*q && !is_blank(*q))
			q++;
		if (n < 7) {
			start[n] = p;
			len[n] = (size_t)(q - p);
		}
		n++;
		while (is_blank(*q))
			q++;
		p = q;
	}
	if (n == 0) {
		snprintf(err, errlen, "empty expression");
		return -1;
	}
	if (n != 5 && n != 6) {
		snprintf(err, errlen,
			 "expected 5 or 6 fields (optional seconds, then minute hour "
			 "day-of-month month day-of-week), got %d",
			 n);
		return -1;
	}
	first = n == 6 ? F_SEC : F_MIN;
	bits[F_SEC] = 1; /* five fields fire at second 0 */
	for (int i = 0; i < n; i++)
		if (field(&fields[first + i], start[i], len[i], &bits[first + i], err, errlen) != 0)
			return -1;
	if (bits[F_DOW] & (1u << 7))
		bits[F_DOW] = (bits[F_DOW] | 1u) & 0x7f;
	c->sec = bits[F_SEC];
	c->min = bits[F_MIN];
	c->hour = (uint32_t)bits[F_HOUR];
	c->dom = (uint32_t)bits[F_DOM];
	c->mon = (uint16_t)bits[F_MON];
	c->dow = (uint8_t)bits[F_DOW];
	c->dom_star = start[F_DOM - first][0] == '*';
	c->hour_star = start[F_HOUR - first][0] == '*';
	c->dow_star = start[F_DOW - first][0] == '*';
	c->has_seconds = n == 6;
	return 0;
}

/* ---- the calendar (proleptic Gregorian, years >= 1) */

static bool leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

static int month_days(int64_t y, int m)
{
	static const int days[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };

	return m == 2 && leap(y) ? 29 : days[m - 1];
}

/* Leap days in the years 1 .. y - 1. */
static int64_t leaps_before(int64_t y)
{
	return (y - 1) / 4 - (y - 1) / 100 + (y - 1) / 400;
}

/* Days from 1970-01-01 to y-m-d, without mktime, whose answer depends on TZ. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	static const int before[] = { 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334 };
	int64_t n = (y - 1970) * 365 + leaps_before(y) - leaps_before(1970);

	return n + before[m - 1] + (m > 2 && leap(y)) + d - 1;
}

static void civil_from_days(int64_t dn, int64_t *y, int *m, int *d)
{
	/* 146097 days make 400 years: a guess within a year of the truth. */
	int64_t yy = 1970 + dn * 400 / 146097;
	int64_t doy;
	int mm = 1;

	while (days_from_civil(yy, 1, 1) > dn)
		yy--;
	while (days_from_civil(yy + 1, 1, 1) <= dn)
		yy++;
	doy = dn - days_from_civil(yy, 1, 1);
	while (doy >= month_days(yy, mm))
		doy -= month_days(yy, mm++);
	*y = yy;
	*m = mm;
	*d = (int)doy + 1;
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b < 0);
}

/* 0 = Sunday; 1970-01-01 was a Thursday. */
static int weekday(int64_t dn)
{
	return (int)(((dn % 7) + 7 + 4) % 7);
}

/* ---- matching */

/* The smallest n >= from with bit n set in mask, or -1. */
static int next_bit(uint64_t mask, int from)
{
	if (from >= 64)
		return -1;
	mask &= ~UINT64_C(0) << from;
	return mask ? __builtin_ctzll(mask) : -1;
}

static bool day_matches(const struct cron *c, int d, int wd)
{
	bool dom = c->dom >> d & 1, dow = c->dow >> wd & 1;

	if (c->dom_star || c->dow_star)
		return dom && dow;
	return dom || dow;
}

/* Move *h:*m:*s to the first matching time of day at or after it; false
 * when there is none left in the day. */
static bool time_of_day(const struct cron *c, int *h, int *m, int *s)
{
	int hh = *h, mm = *m, ss = *s, n;

	for (;;) {
		n = next_bit(c->hour, hh);
		if (n < 0)
			return false;
		if (n != hh) {
			hh = n;
			mm = ss = 0;
		}
		n = next_bit(c->min, mm);
		if (n < 0) {
			hh++;
			mm = ss = 0;
			continue;
		}
		if (n != mm) {
			mm = n;
			ss = 0;
		}
		n = next_bit(c->sec, ss);
		if (n < 0) {
			mm++;
			ss = 0;
			continue;
		}
		*h = hh;
		*m = mm;
		*s = n;
		return true;
	}
}

/* The first matching wall time at or after `from` (local seconds counted
 * as if the zone were UTC) on a day up to last_day: 0 and *out, or -1. */
static int next_wall(const struct cron *c, int64_t from, int64_t last_day, int64_t *out)
{
	int64_t dn = floor_div(from, DAY), y;
	int sod = (int)(from - dn * DAY), m, d;
	int hh = sod / 3600, mm = sod / 60 % 60, ss = sod % 60;

	civil_from_days(dn, &y, &m, &d);
	while (dn <= last_day) {
		if (!(c->mon >> m & 1) || d > month_days(y, m)) {
			if (++m > 12) {
				m = 1;
				y++;
			}
			d = 1;
			dn = days_from_civil(y, m, 1);
			hh = mm = ss = 0;
			continue;
		}
		if (day_matches(c, d, weekday(dn)) && time_of_day(c, &hh, &mm, &ss)) {
			*out = dn * DAY + (int64_t)hh * 3600 + (int64_t)mm * 60 + ss;
			return 0;
		}
		dn++;
		d++;
		hh = mm = ss = 0;
	}
	return -1;
}

/* The earliest instant whose local time in z is the wall time w, or, for
 * a w in a gap, the transition that ends the gap. The offsets a day either
 * side are the candidates; a verified one is an occurrence of w. */
static int64_t first_instant(const struct tz *z, int64_t w)
{
	int o1 = tz_offset(z, w - DAY), o2 = tz_offset(z, w + DAY);
	int big = o1 > o2 ? o1 : o2, small = o1 > o2 ? o2 : o1;
	int64_t lo, hi;
	int at_hi;

	/* The larger offset gives the earlier instant: the first of two. */
	if (tz_offset(z, w - big) == big)
		return w - big;
	if (small != big && tz_offset(z, w - small) == small)
		return w - small;
	if (small == big)
		return w - big; /* two transitions within two days: not in tzdata */
	/* A gap: clocks went forward from `small` to `big` in (w - big, w - small]. */
	lo = w - big;
	hi = w - small;
	at_hi = tz_offset(z, hi);
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (tz_offset(z, mid) == at_hi)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* The wall time w first occurred at f <= after, with offset o = w - f,
 * and the clock then ran on to a transition back, at T in (f, after]:
 * every wall time from w up to T + o (where the clock stood when it went
 * back) has occurred already. The next one that can be new, found with a
 * binary search for T rather than by walking the repeated hour second by
 * second. */
static int64_t past_repeat(const struct tz *z, int64_t w, int64_t f, int64_t after)
{
	int64_t o = w - f, lo = f, hi = after;

	if (tz_offset(z, after) == o)
		return w + 1;
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (tz_offset(z, mid) == o)
			lo = mid;
		else
			hi = mid;
	}
	return hi + o > w + 1 ? hi + o : w + 1;
}

/* For an hour_star expression, the second pass of a repeated hour fires
 * too. When clocks go back within the next MAX_DST_SHIFT after `after`
 * (from offset o1 to o2 < o1 at T), the walls [T + o2, T + o1) occur again
 * at the instants [T, T + o1 - o2): the first matching one there, if any
 * (else INT64_MAX). Further transitions cannot matter: a fall-back later
 * than that has its repeated walls' first occurrences after `after`, and
 * the first of those comes before any second one. */
#define MAX_DST_SHIFT INT64_C(10800) /* 3 hours */
static int64_t second_pass(const struct cron *c, const struct tz *z, int64_t after)
{
	int o1 = tz_offset(z, after), o2 = tz_offset(z, after + MAX_DST_SHIFT);
	int64_t lo = after, hi = after + MAX_DST_SHIFT, w;

	if (o2 >= o1)
		return INT64_MAX;
	while (hi - lo > 1) {
		int64_t mid = lo + (hi - lo) / 2;

		if (tz_offset(z, mid) == o1)
			lo = mid;
		else
			hi = mid;
	}
	/* hi is T, the first instant of the new offset. */
	o2 = tz_offset(z, hi);
	if (o2 >= o1 || next_wall(c, hi + o2, floor_div(hi + o2, DAY) + 1, &w) != 0 || w >= hi + o1)
		return INT64_MAX;
	return w - o2;
}

/* ---- messages */

/* A field's bits as cron text: "*" when full, else "1-5,7". */
static void fmt_mask(char *buf, size_t len, uint64_t mask, int lo, int hi)
{
	size_t n = 0;
	uint64_t full = ((UINT64_C(2) << hi) - 1) & ~((UINT64_C(1) << lo) - 1);

	buf[0] = '\0';
	if ((mask & full) == full) {
		snprintf(buf, len, "*");
		return;
	}
	for (int v = lo; v <= hi && n < len; v++) {
		int e = v;

		if (!(mask >> v & 1))
			continue;
		while (e < hi && mask >> (e + 1) & 1)
			e++;
		if (e > v)
			n += (size_t)snprintf(buf + n, len - n, "%s%d-%d", n ? "," : "", v, e);
		else
			n += (size_t)snprintf(buf + n, len - n, "%s%d", n ? "," : "", v);
		v = e;
	}
}

/* The expression, rebuilt from its bits, for messages. */
static void fmt_cron(char *buf, size_t len, const struct cron *c)
{
	char f[6][100]; /* the longest, "0,2,4,...,58", has 84 bytes */

	fmt_mask(f[0], sizeof(f[0]), c->sec, 0, 59);
	fmt_mask(f[1], sizeof(f[1]), c->min, 0, 59);
	fmt_mask(f[2], sizeof(f[2]), c->hour, 0, 23);
	fmt_mask(f[3], sizeof(f[3]), c->dom, 1, 31);
	fmt_mask(f[4], sizeof(f[4]), c->mon, 1, 12);
	fmt_mask(f[5], sizeof(f[5]), c->dow, 0, 6);
	if (c->has_seconds)
		snprintf(buf, len, "%s %s %s %s %s %s", f[0], f[1], f[2], f[3], f[4], f[5]);
	else
		snprintf(buf, len, "%s %s %s %s %s", f[1], f[2], f[3], f[4], f[5]);
}

static void fmt_time(char *buf, size_t len, int64_t t)
{
	int64_t dn = floor_div(t, DAY), y;
	int sod = (int)(t - dn * DAY), m, d;

	civil_from_days(dn, &y, &m, &d);
	snprintf(buf, len, "%04" PRId64 "-%02d-%02d %02d:%02d:%02d UTC", y, m, d, sod / 3600,
		 sod / 60 % 60, sod % 60);
}

/* ---- the public functions */

int cron_check(const struct cron *c, char *err, size_t errlen)
{
	char days[200], months[200] = "";
	size_t n = 0;
	int nmonths = 0, last = 0;

	/* Under the OR rule the weekdays add days of their own. */
	if (!c->dom_star && !c->dow_star)
		return 0;
	for (int m = 1; m <= 12; m++) {
		if (!(c->mon >> m & 1))
			continue;
		/* February counts 29 days: leap years come. */
		if (c->dom & ((UINT64_C(2) << (m == 2 ? 29 : month_days(1970, m))) - 2))
			return 0;
		nmonths++;
	}
	if (nmonths == 0 || !(c->dom & 0xfffffffeu))
		return 0; /* nothing to blame on the months; cron_next looks */
	for (int m = 1; m <= 12; m++) {
		const char *sep;

		if (!(c->mon >> m & 1))
			continue;
		sep = ++last == 1 ? "" : (last == nmonths ? " or " : ", ");
		n += (size_t)snprintf(months + n, sizeof(months) - n, "%s%s", sep,
				      month_long[m - 1]);
	}
	fmt_mask(days, sizeof(days), c->dom, 1, 31);
	if (strpbrk(days, ",-"))
		snprintf(err, errlen, "days %s never occur in %s", days, months);
	else
		snprintf(err, errlen, "day %s never occurs in %s", days, months);
	return -1;
}

int cron_next(const struct cron *c, const struct tz *z, int64_t after, int64_t *out, char *err,
	      size_t errlen)
{
	struct cron k = *c;
	bool utc = !z || tz_is_utc(z);
	int64_t w, last_day;

	if (after < AFTER_MIN || after >= AFTER_MAX) {
		snprintf(err, errlen, "instant %" PRId64 " is outside the years 1970-8999", after);
		return -1;
	}
	/* Only valid bits, whoever filled the struct. */
	k.sec &= (UINT64_C(1) << 60) - 1;
	k.min &= (UINT64_C(1) << 60) - 1;
	k.hour &= (UINT32_C(1) << 24) - 1;
	k.dom &= 0xfffffffeu;
	k.mon &= 0x1ffe;
	k.dow &= 0x7f;
	if (cron_check(&k, err, errlen) != 0)
		return -1;
	w = after + (utc ? 0 : tz_offset(z, after)) + 1;
	last_day = floor_div(w, DAY) + CRON_HORIZON_DAYS;
	/* Wall times come in order and f() never decreases along them, so
	 * the first f(W) past `after` is the answer. An f(W) at or before it
	 * means `after` lies in the second pass of a repeated hour, whose wall
	 * times first occurred before it: past_repeat skips them. */
	for (;;) {
		int64_t f;

		if (next_wall(&k, w, last_day, &w) != 0) {
			char expr[6 * 100 + 8], when[64];

			fmt_cron(expr, sizeof(expr), &k);
			fmt_time(when, sizeof(when), after);
			snprintf(err, errlen, "\"%s\" does not fire within 8 years after %s", expr,
				 when);
			return -1;
		}
		f = utc ? w : first_instant(z, w);
		if (f > after) {
			/* A periodic expression may fire in a second pass
			 * before it. */
			if (!utc && k.hour_star) {
				int64_t s = second_pass(&k, z, after);
				if (s < f)
					f = s;
			}
			*out = f;
			return 0;
		}
		/* `after` lies in a second pass: a periodic expression fires
		 * at this W's second occurrence, which is the next instant
		 * of the pass with a matching wall. */
		if (!utc && k.hour_star) {
			int o = tz_offset(z, after);
			if (w - o > after && tz_offset(z, w - o) == o) {
				*out = w - o;
				return 0;
			}
		}
		w = utc ? w + 1 : past_repeat(z, w, f, after);
	}
}
