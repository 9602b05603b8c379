#include <string.h>

#include "cli/human.h"
#include "check.h"

static char buf[64];

static const char *size(double b)
{
	human_size(buf, sizeof(buf), b);
	return buf;
}

static const char *dur(double s)
{
	human_duration(buf, sizeof(buf), s);
	return buf;
}

static const char *ago(long long d)
{
	human_ago(buf, sizeof(buf), d);
	return buf;
}

int main(void)
{
	long long t, u;
	const char *end;
	char small[5];

	CHECK_STR(size(0), "0 B");
	CHECK_STR(size(1023), "1023 B");
	CHECK_STR(size(1024), "1.0 KiB");
	CHECK_STR(size(8077312), "7.7 MiB");
	CHECK_STR(size(10.5 * 1024 * 1024), "10 MiB");
	CHECK_STR(size(3.0 * 1024 * 1024 * 1024), "3.0 GiB");

	CHECK_STR(dur(0), "0 s");
	CHECK_STR(dur(0.00466), "4.7 ms");
	CHECK_STR(dur(0.00086), "0.9 ms");
	CHECK_STR(dur(0.00005), "50 us");
	CHECK_STR(dur(0.25), "250 ms");
	CHECK_STR(dur(3.21), "3.2 s");
	CHECK_STR(dur(12), "12 s");
	CHECK_STR(dur(123), "2 min 3 s");
	CHECK_STR(dur(120), "2 min");
	CHECK_STR(dur(3600 * 5 + 600), "5 h 10 min");
	CHECK_STR(dur(86400 * 3 + 3600 * 4 + 5), "3 d 4 h");
	CHECK_STR(dur(-2.5), "-2.5 s");

	CHECK_STR(ago(0), "now");
	CHECK_STR(ago(12), "12 s ago");
	CHECK_STR(ago(185), "3 min ago");
	CHECK_STR(ago(-7300), "in 2 h");
	CHECK_STR(ago(3 * 86400 + 5), "3 d ago");

	/* Times of one clock: differences, whatever the host's zone. */
	CHECK(human_time_parse("1970-01-01 00:00:00", &t, NULL) && t == 0);
	CHECK(human_time_parse("2026-11-24 06:35:00.123456 UTC", &t, &end) && strcmp(end, " UTC") == 0);
	CHECK(human_time_parse("2026-11-24 06:38:05", &u, NULL) && u - t == 185);
	CHECK(human_time_parse("2024-03-01 00:00:00", &u, NULL) &&
	      human_time_parse("2024-02-28 00:00:00", &t, NULL) && u - t == 2 * 86400);
	CHECK(human_time_parse("2000-01-01 00:00:00", &t, NULL) && t == 946684800);
	CHECK(!human_time_parse("2026-11-24", &t, NULL));
	CHECK(!human_time_parse("2026-13-24 06:35:00", &t, NULL));
	CHECK(!human_time_parse("abcd-11-24 06:35:00", &t, NULL));

	/* Widths count characters; a cut never splits one. */
	CHECK(human_width("a\xC3\xA9z", 4) == 3);
	CHECK(human_width("\xFF", 1) == 1);
	CHECK(human_cut("a\xC3\xA9z", 4, 2) == 3);
	CHECK(human_cut("a\xC3\xA9z", 4, 1) == 1);
	CHECK(human_cut("\xE2\x94\x80\xE2\x94\x80", 6, 1) == 3);
	CHECK(human_cut("abc", 3, 9) == 3);

	/* A buffer too small still ends in NUL. */
	CHECK(human_size(small, sizeof(small), 8077312) == 4 && strlen(small) == 4);
	return check_done("human");
}
