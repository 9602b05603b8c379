#include <stdio.h>
#include <string.h>

#include "common/utf8.h"
#include "check.h"

static const char *fixed(const char *in)
{
	static char buf[256];
	snprintf(buf, sizeof(buf), "%s", in);
	utf8_fix(buf);
	return buf;
}

int main(void)
{
	const char *e = "a\xC3\xA9\xC3\xA9"; /* "aéé": 5 bytes */
	const char *four = "\xF0\x9F\x98\x80x"; /* U+1F600, then x */
	char buf[16];

	/* Cut on a boundary, never inside a character. */
	CHECK(utf8_cut(e, 5, 64) == 5);
	CHECK(utf8_cut(e, 5, 5) == 5);
	CHECK(utf8_cut(e, 5, 4) == 3);
	CHECK(utf8_cut(e, 5, 3) == 3);
	CHECK(utf8_cut(e, 5, 2) == 1);
	CHECK(utf8_cut(e, 5, 0) == 0);
	CHECK(utf8_cut(four, 5, 3) == 0);
	CHECK(utf8_cut(four, 5, 4) == 4);
	/* A malformed byte is a character of its own: cut anywhere. */
	CHECK(utf8_cut("\xFFx\xFF", 3, 2) == 2);
	CHECK(utf8_cut("\xC3x", 2, 1) == 1);

	/* What snprintf's byte-wise cut leaves is repaired by removal. */
	memcpy(buf, e, 4);
	buf[4] = '\0';
	CHECK(utf8_fix(buf) == 1);
	CHECK_STR(buf, "a\xC3\xA9");
	CHECK_STR(fixed("\xF0\x9F\x98"), "");
	CHECK_STR(fixed("ok \xE2\x82"), "ok ");
	/* Well-formed text stays as it is. */
	CHECK_STR(fixed("plain"), "plain");
	CHECK_STR(fixed(e), e);
	CHECK_STR(fixed(four), four);
	CHECK_STR(fixed("\xE2\x82\xAC\xF4\x8F\xBF\xBF"), "\xE2\x82\xAC\xF4\x8F\xBF\xBF"); /* U+20AC, U+10FFFF */
	/* Anything else becomes '?', byte by byte, inside the text. */
	CHECK_STR(fixed("a\xFF" "b"), "a?b");
	CHECK_STR(fixed("a\xC3" "b"), "a?b");
	CHECK_STR(fixed("\xC0\xAF"), "??");            /* overlong '/' */
	CHECK_STR(fixed("\xE0\x80\xAF"), "???");       /* overlong, 3 bytes */
	CHECK_STR(fixed("\xED\xA0\x80z"), "???z");     /* a surrogate */
	CHECK_STR(fixed("\xF4\x90\x80\x80z"), "????z"); /* above U+10FFFF */
	CHECK_STR(fixed("\x80\xBF" "c"), "??c");        /* lone continuations */
	CHECK(utf8_fix(buf) == 0);
	return check_done("utf8");
}
