/* cause.c: the folding of an error's first line into its cause. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cause.h"
#include "common/utf8.h"
#include "check.h"

static const char *fold(const char *s)
{
	static char buf[CAUSE_MAX];

	cause_fold(s, strlen(s), buf, sizeof(buf));
	return buf;
}

static const char *like(const char *folded)
{
	static char buf[CAUSE_MAX * 3];

	if (cause_like(folded, buf, sizeof(buf)) < 0)
		return "(ENOSPC)";
	return buf;
}

/* Whether every byte of s[0..n) is part of a valid UTF-8 character. */
static bool valid_utf8(const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t k = utf8_char_len(s + i, n - i);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

int main(void)
{
	char buf[CAUSE_MAX], id[9];
	uint32_t v;

	/* Numbers, wherever they are; kyud's exit code stays. */
	CHECK_STR(fold("exit code 7: curl: (7) Failed to connect to localhost port 8123: Connection refused"),
		  "exit code 7: curl: (<n>) Failed to connect to localhost port <n>: Connection refused");
	CHECK_STR(fold("exit code 3: item 17 failed (attempt 3 of 3)"),
		  "exit code 3: item <n> failed (attempt <n> of <n>)");
	CHECK_STR(fold("took 4.6 s on 10.0.0.12:5432"), "took <n> s on <n>:<n>");
	CHECK_STR(fold("job42 and web-3"), "job<n> and web-<n>");
	CHECK_STR(fold("killed by signal 9 (SIGKILL)"), "killed by signal <n> (SIGKILL)");
	CHECK_STR(fold("no exit code 5 here"), "no exit code <n> here");
	/* The same cause whatever the numbers. */
	CHECK_STR(fold("exit code 1: fetch 1 of 30 failed"), fold("exit code 1: fetch 29 of 30 failed"));
	snprintf(buf, sizeof(buf), "%s", fold("exit code 1: x"));
	CHECK(strcmp(buf, fold("exit code 2: x")) != 0);

	/* Hex ids and UUIDs. */
	CHECK_STR(fold("object 0x7ffd1234 freed twice"), "object <hex> freed twice");
	CHECK_STR(fold("commit 3f9a1c2e4b5d not found"), "commit <hex> not found");
	CHECK_STR(fold("req-3f9a1c2e4b"), "req-<hex>");
	CHECK_STR(fold("deadbeef and cafebabe stay"), "deadbeef and cafebabe stay"); /* no digit */
	CHECK_STR(fold("id 550e8400-e29b-41d4-a716-446655440000 gone"), "id <uuid> gone");
	CHECK_STR(fold("550E8400-E29B-41D4-A716-446655440000"), "<uuid>");
	CHECK_STR(fold("550e8400-e29b-41d4-a716-44665544000"), "<hex>-e<n>b-<n>d<n>-a<n>-<n>");

	/* Quoted strings: the quote kept, the inside folded. */
	CHECK_STR(fold("KeyError: 'user_id'"), "KeyError: '<s>'");
	CHECK_STR(fold("no table \"t_42\" in `db`"), "no table \"<s>\" in `<s>`");
	CHECK_STR(fold("can't open it"), "can't open it"); /* an apostrophe opens nothing */
	CHECK_STR(fold("say 'unclosed"), "say 'unclosed");
	CHECK_STR(fold("\xe2\x80\x9csmart\xe2\x80\x9d and \xe2\x80\x98single\xe2\x80\x99"),
		  "\xe2\x80\x9c<s>\xe2\x80\x9d and \xe2\x80\x98<s>\xe2\x80\x99");
	CHECK_STR(fold("'a b' and 'c'"), "'<s>' and '<s>'");

	/* Paths. */
	CHECK_STR(fold("convert: unable to open /var/lib/in/42.png: No such file"),
		  "convert: unable to open <path>: No such file");
	CHECK_STR(fold("file=./tmp/x.log, ~/y and (../z)"), "file=<path>, <path> and (<path>)");
	CHECK_STR(fold("a / b"), "a / b");
	CHECK_STR(fold("GET https://api.example.com/v1/users/123 500"),
		  "GET https://api.example.com/v<n>/users/<n> <n>");

	/* Space: runs, control characters, the ends; only the first line. */
	CHECK_STR(fold("  a\t\tb \x1b[31mred\r\nsecond line 1"), "a b [<n>mred");
	CHECK_STR(fold("a\xc2\x9b" "31mb\xc2\xa0" "c"), "a <n>mb\xc2\xa0" "c"); /* C1 CSI; NBSP stays */
	CHECK_STR(fold(""), "");
	CHECK_STR(fold("\n"), "");
	CHECK_STR(fold("   "), "");

	/* Not UTF-8: U+FFFD; UTF-8 as is. */
	CHECK_STR(fold("caf\xe9 1"), "caf\xef\xbf\xbd <n>");
	CHECK_STR(fold("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
	CHECK_STR(fold("\xc0\xaf\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");

	/* A small buffer ends on a whole token. */
	CHECK(cause_fold("abc 123 def", 11, buf, 6) == 3);
	CHECK_STR(buf, "abc");
	CHECK(cause_fold("abc 123 def", 11, buf, 8) == 7);
	CHECK_STR(buf, "abc <n>");
	CHECK(cause_fold("abc", 3, buf, 0) == 0);
	CHECK(cause_fold("\xc3\xa9\xc3\xa9", 4, buf, 4) == 2);
	CHECK_STR(buf, "\xc3\xa9");

	/* Hostile input: long, all digits, all quotes, random bytes; bounded
	 * in time (well under a second for all) and always valid UTF-8. */
	{
		static char big[1 << 20];
		clock_t t0 = clock();
		size_t n;

		memset(big, '7', sizeof(big));
		n = cause_fold(big, sizeof(big), buf, sizeof(buf));
		CHECK_STR(buf, "<n>");
		memset(big, ' ', sizeof(big));
		for (size_t i = 0; i < sizeof(big); i += 2)
			big[i] = '1';
		n = cause_fold(big, sizeof(big), buf, sizeof(buf));
		CHECK(n < sizeof(buf));
		CHECK(strncmp(buf, "<n> <n> <n>", 11) == 0);
		memset(big, '\'', sizeof(big));
		n = cause_fold(big, sizeof(big), buf, sizeof(buf));
		CHECK(n < sizeof(buf) && valid_utf8(buf, n));
		for (size_t i = 0; i < sizeof(big); i++)
			big[i] = "/ '\"`0x9aF.\xe2\x80\x98\xc3-"[i % 17];
		n = cause_fold(big, sizeof(big), buf, sizeof(buf));
		CHECK(n < sizeof(buf) && valid_utf8(buf, n));
		srand(41);
		for (int round = 0; round < 2000; round++) {
			size_t len = (size_t)rand() % 2000;
			for (size_t i = 0; i < len; i++)
				big[i] = (char)(rand() & 0xff);
			n = cause_fold(big, len, buf, sizeof(buf));
			CHECK(n < sizeof(buf) && strlen(buf) == n && valid_utf8(buf, n));
			/* Its LIKE pattern always fits; folding a cause again
			 * gives it back (a text stands for its cause: kyu retry
			 * --cause TEXT, the dashboard's buttons). */
			CHECK(cause_like(buf, big + 4096, 4 * CAUSE_MAX) == 0);
			{
				char again[CAUSE_MAX];
				cause_fold(buf, n, again, sizeof(again));
				if (strcmp(again, buf) != 0)
					fprintf(stderr, "not idempotent: '%s' -> '%s'\n", buf, again);
				CHECK(strcmp(again, buf) == 0);
			}
		}
		CHECK((double)(clock() - t0) / CLOCKS_PER_SEC < 5.0);
	}

	/* Ids. */
	CHECK(cause_id("", 0) == 2166136261u);
	CHECK(cause_id("a", 1) == 0xe40c292cu);
	cause_id_text(0xe40c292cu, id);
	CHECK_STR(id, "e40c292c");
	CHECK(cause_id_parse("e40c292c", &v) == 0 && v == 0xe40c292cu);
	CHECK(cause_id_parse("E40C292C", &v) == 0 && v == 0xe40c292cu);
	CHECK(cause_id_parse("e40c292", &v) < 0);
	CHECK(cause_id_parse("e40c292cd", &v) < 0);
	CHECK(cause_id_parse("e40c292g", &v) < 0);

	/* LIKE patterns: placeholders and spaces are %, the rest literal. */
	CHECK_STR(like("exit code 7: item <n> failed"), "%exit%code%7:%item%failed%");
	CHECK_STR(like("100% of '<s>' at <path>"), "%100\\%%of%'%'%at%");
	CHECK_STR(like("a_b\\c"), "%a\\_b\\\\c%");
	CHECK_STR(like(""), "%");
	CHECK(cause_like("abcdef", buf, 5) < 0);
	return check_done("cause");
}
