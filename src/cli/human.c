/* Readings of values for eyes rather than for programs. See human.h. */
#include "human.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"

/* snprintf's length, clamped to what buf holds. */
static size_t fit(int m, size_t n)
{
	if (m < 0 || n == 0)
		return 0;
	return (size_t)m < n ? (size_t)m : n - 1;
}

size_t human_size(char *buf, size_t n, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	size_t u = 0;

	if (!(bytes >= 0))
		bytes = 0;
	while (bytes >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	/* 9.96 rounds to "10.0": print it as 10 rather than with a decimal
	 * that adds nothing. */
	if (u > 0 && bytes < 9.95)
		return fit(snprintf(buf, n, "%.1f %s", bytes, unit[u]), n);
	return fit(snprintf(buf, n, "%.0f %s", (double)(long long)bytes, unit[u]), n);
}

/* Whole seconds as two units, the larger first; the second left out when
 * it is 0. */
static size_t two_units(char *buf, size_t n, long long s)
{
	static const struct {
		long long secs;
		const char *name;
	} u[] = { { 86400, "d" }, { 3600, "h" }, { 60, "min" }, { 1, "s" } };

	for (size_t i = 0; i + 1 < sizeof(u) / sizeof(u[0]); i++) {
		if (s < u[i].secs)
			continue;
		long long big = s / u[i].secs, small = s % u[i].secs / u[i + 1].secs;
		if (small)
			return fit(snprintf(buf, n, "%lld %s %lld %s", big, u[i].name, small,
					    u[i + 1].name),
				   n);
		return fit(snprintf(buf, n, "%lld %s", big, u[i].name), n);
	}
	return fit(snprintf(buf, n, "%lld s", s), n);
}

size_t human_duration(char *buf, size_t n, double seconds)
{
	size_t k = 0;

	if (seconds != seconds)
		return fit(snprintf(buf, n, "-"), n);
	if (seconds < 0) {
		k = fit(snprintf(buf, n, "-"), n);
		seconds = -seconds;
		buf += k;
		n -= k;
	}
	if (seconds == 0)
		return k + fit(snprintf(buf, n, "0 s"), n);
	if (seconds < 0.0001)
		return k +
		       fit(snprintf(buf, n, "%.0f us", seconds * 1e6 < 1 ? 1 : seconds * 1e6), n);
	if (seconds < 0.00995)
		return k + fit(snprintf(buf, n, "%.1f ms", seconds * 1e3), n);
	if (seconds < 0.9995)
		return k + fit(snprintf(buf, n, "%.0f ms", seconds * 1e3), n);
	if (seconds < 9.95)
		return k + fit(snprintf(buf, n, "%.1f s", seconds), n);
	if (seconds > 9e15)
		return k + fit(snprintf(buf, n, "%.3g s", seconds), n);
	return k + two_units(buf, n, (long long)(seconds + 0.5));
}

/* Days since 1970-01-01 of a date of the proleptic Gregorian calendar
 * (the civil-from-days inverse, by eras of 400 years). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* n digits at s as a number, or -1. */
static int digits(const char *s, int n)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	return v;
}

bool human_time_parse(const char *s, long long *ret_secs, const char **end)
{
	int y, mo, d, h, mi, se;

	if (strlen(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' || s[13] != ':' ||
	    s[16] != ':')
		return false;
	y = digits(s, 4);
	mo = digits(s + 5, 2);
	d = digits(s + 8, 2);
	h = digits(s + 11, 2);
	mi = digits(s + 14, 2);
	se = digits(s + 17, 2);
	if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 ||
	    se < 0 || se > 59)
		return false;
	s += 19;
	if (*s == '.' && s[1] >= '0' && s[1] <= '9')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	*ret_secs = days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + (long long)h * 3600 +
		    (long long)mi * 60 + se;
	if (end)
		*end = s;
	return true;
}

size_t human_ago(char *buf, size_t n, long long delta)
{
	long long a = delta < 0 ? -delta : delta;
	long long v;
	const char *u;

	if (a < 1)
		return fit(snprintf(buf, n, "now"), n);
	if (a < 60) {
		v = a;
		u = "s";
	} else if (a < 3600) {
		v = a / 60;
		u = "min";
	} else if (a < 2LL * 86400) {
		v = a / 3600;
		u = "h";
	} else {
		v = a / 86400;
		u = "d";
	}
	if (delta < 0)
		return fit(snprintf(buf, n, "in %lld %s", v, u), n);
	return fit(snprintf(buf, n, "%lld %s ago", v, u), n);
}

size_t human_width(const char *s, size_t len)
{
	size_t w = 0;

	for (size_t i = 0; i < len; w++) {
		size_t c = utf8_char_len(s + i, len - i);
		i += c ? c : 1;
	}
	return w;
}

size_t human_cut(const char *s, size_t len, size_t cols)
{
	size_t i = 0;

	for (size_t w = 0; i < len && w < cols; w++) {
		size_t c = utf8_char_len(s + i, len - i);
		i += c ? c : 1;
	}
	return i;
}
