#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/capture.h"
#include "check.h"

static char *live(struct capture *c, unsigned attempt, size_t max)
{
	struct strbuf sb = { 0 };
	capture_live(c, attempt, max, &sb);
	return sb.buf;
}

/* The live tail: the last bytes written so far, after a line saying so. */
static void test_live(void)
{
	struct capture c;
	char *s, in[200], want[256];

	for (int i = 0; i < 200; i++)
		in[i] = (char)('a' + i % 26);
	/* Nothing yet. */
	capture_init(&c, 70);
	CHECK(capture_live_len(&c, 16) == 0);
	/* All of it, from the head alone. */
	capture_add(&c, "line 1\n", 7);
	s = live(&c, 2, 16);
	CHECK_STR(s, "[kyu: live output of attempt 2: 7 bytes so far]\nline 1\n");
	CHECK(capture_is_live(s, strlen(s), 2));
	CHECK(!capture_is_live(s, strlen(s), 1));
	CHECK(!capture_is_live(s, strlen(s), 22));
	CHECK(!capture_is_live("line 1", 6, 2));
	CHECK(!capture_is_live(NULL, 0, 2));
	free(s);
	/* Across head and ring (nothing omitted yet): contiguous. */
	capture_add(&c, in, 40);
	s = live(&c, 2, 16);
	snprintf(want, sizeof(want), "[kyu: live output of attempt 2: the last 16 of 47 bytes so far]\n%.16s", in + 24);
	CHECK_STR(s, want);
	free(s);
	s = live(&c, 2, 100);
	snprintf(want, sizeof(want), "[kyu: live output of attempt 2: 47 bytes so far]\nline 1\n%.40s", in);
	CHECK_STR(s, want);
	free(s);
	/* Once the middle is cut, only the ring follows on: its last 35 at most,
	 * in order across its wrap. */
	capture_add(&c, in, 200);
	capture_add(&c, "wrapped", 7);
	s = live(&c, 1, 100);
	snprintf(want, sizeof(want), "[kyu: live output of attempt 1: the last 35 of 254 bytes so far]\n%.28swrapped",
		 in + 172);
	CHECK_STR(s, want);
	free(s);
	capture_free(&c);

	/* A cut inside a UTF-8 character starts at the next one. */
	capture_init(&c, 1000);
	capture_add(&c, "a\xc3\xa9\xe2\x82\xacz", 7);
	s = live(&c, 1, 5);
	CHECK_STR(s, "[kyu: live output of attempt 1: the last 4 of 7 bytes so far]\n\xe2\x82\xacz");
	free(s);
	s = live(&c, 1, 3);
	CHECK_STR(s, "[kyu: live output of attempt 1: the last 1 of 7 bytes so far]\nz");
	free(s);
	capture_free(&c);

	/* output_limit 0: nothing to show. */
	capture_init(&c, 0);
	capture_add(&c, "abc", 3);
	CHECK(capture_live_len(&c, 16) == 0);
	capture_free(&c);
}

/* Feed s to both, as a job's pipe would: the line tracker sees the bytes
 * at the capture's offset. */
static void feed(struct capture *c, struct capture_line *l, const char *s)
{
	capture_line_add(l, s, strlen(s), c->total);
	capture_add(c, s, strlen(s));
}

static const char *line_of(struct capture *c, struct capture_line *l)
{
	static char buf[CAPTURE_LINE_MAX + 8];
	capture_line_get(l, c, buf, sizeof(buf));
	return buf;
}

/* The last line that is not blank, however the chunks fall. */
static void test_line(void)
{
	struct capture c;
	struct capture_line l = { 0 };
	char big[600], buf[16];

	capture_init(&c, 4096);
	CHECK_STR(line_of(&c, &l), "");
	feed(&c, &l, "first\nsecond");
	CHECK_STR(line_of(&c, &l), "second"); /* unfinished: still the last */
	feed(&c, &l, " half\n\n  \n\t\n");
	CHECK_STR(line_of(&c, &l), "second half");
	feed(&c, &l, "  x\ny\n");
	CHECK_STR(line_of(&c, &l), "y");
	/* \r ends a line too (progress bars, CRLF); trailing blanks go,
	 * tabs become spaces, other controls '?'. */
	feed(&c, &l, "50%\r100%\rerror:\tgone \x1b[0m  \r\n");
	CHECK_STR(line_of(&c, &l), "error: gone ?[0m");
	/* One byte at a time. */
	for (const char *p = "abc\ndef\n\n"; *p; p++) {
		capture_line_add(&l, p, 1, c.total);
		capture_add(&c, p, 1);
	}
	CHECK_STR(line_of(&c, &l), "def");
	/* A long line: its first bytes, cut on a character, marked. */
	for (size_t i = 0; i + 2 < sizeof(big); i += 2)
		memcpy(big + i, "\xc3\xa9", 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	feed(&c, &l, big);
	{
		const char *s = line_of(&c, &l);
		size_t n = strlen(s);
		CHECK(n <= CAPTURE_LINE_MAX + 7 && n > 100);
		CHECK(memcmp(s, "\xc3\xa9\xc3\xa9", 4) == 0);
		CHECK(n >= 3 && strcmp(s + n - 3, "\xe2\x80\xa6") == 0);
		CHECK(n >= 5 && memcmp(s + n - 5, "\xc3\xa9", 2) == 0);
	}
	/* A small buffer: cut on a character, marked. */
	capture_line_add(&l, big, 20, c.total);
	capture_add(&c, big, 20);
	capture_line_get(&l, &c, buf, sizeof(buf));
	CHECK_STR(buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
	/* Bytes that are not UTF-8 become '?'. */
	feed(&c, &l, "\nbad \xff\xfe byte\n");
	CHECK_STR(line_of(&c, &l), "bad ?? byte");
	capture_free(&c);

	/* Not in what the output column keeps: nothing. */
	memset(&l, 0, sizeof(l));
	capture_init(&c, 400);
	feed(&c, &l, "at the start\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	feed(&c, &l, big);
	CHECK_STR(line_of(&c, &l), ""); /* the unfinished line of x's is cut */
	feed(&c, &l, "\n");
	CHECK_STR(line_of(&c, &l), ""); /* and it ends past the head */
	feed(&c, &l, "in the tail\n");
	CHECK_STR(line_of(&c, &l), "in the tail");
	capture_free(&c);
	memset(&l, 0, sizeof(l));
	capture_init(&c, 400);
	feed(&c, &l, "in the head\n");
	feed(&c, &l, big);
	feed(&c, &l, big);
	/* The last line is the x's, which was cut: nothing, not an older one. */
	CHECK_STR(line_of(&c, &l), "");
	capture_free(&c);
	/* output_limit 0: nothing is kept, nothing is said. */
	memset(&l, 0, sizeof(l));
	capture_init(&c, 0);
	feed(&c, &l, "secret\n");
	CHECK_STR(line_of(&c, &l), "");
	capture_free(&c);
}

/* What capture_line_get should say of the whole stream s[0..n): its last
 * line that holds more than blanks, from its first byte that is not one,
 * at most CAPTURE_LINE_MAX bytes, trailing blanks dropped, "…" when cut
 * (s holds only a, b, space and the separators). */
static void line_reference(const char *s, size_t n, char *out)
{
	size_t end = n, from, to;

	out[0] = '\0';
	for (;;) {
		size_t start = end;
		while (start > 0 && s[start - 1] != '\n' && s[start - 1] != '\r')
			start--;
		from = start;
		while (from < end && s[from] == ' ')
			from++;
		if (from < end)
			break;
		if (start == 0)
			return;
		end = start - 1;
	}
	to = end - from > CAPTURE_LINE_MAX ? from + CAPTURE_LINE_MAX : end;
	memcpy(out, s + from, to - from);
	while (to > from && s[to - 1] == ' ')
		to--;
	out[to - from] = '\0';
	if (end - from > CAPTURE_LINE_MAX)
		strcat(out, "\xe2\x80\xa6");
}

/* Random streams cut into random chunks: the same line as the reference. */
static void test_line_random(void)
{
	static const char alphabet[] = "aab  \n\n\r";
	char s[2000], want[CAPTURE_LINE_MAX + 8];
	unsigned seed = 1;

	for (int round = 0; round < 3000; round++) {
		struct capture c;
		struct capture_line l = { 0 };
		size_t n = (size_t)(rand_r(&seed) % 600), at = 0;
		/* Now and then a long line. */
		bool longer = rand_r(&seed) % 8 == 0;

		for (size_t i = 0; i < n; i++)
			s[i] = longer && i > 10 && i < 400 ? 'a' : alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
		capture_init(&c, 65536);
		while (at < n) {
			size_t k = 1 + (size_t)(rand_r(&seed) % (rand_r(&seed) % 2 ? 3 : 300));
			if (k > n - at)
				k = n - at;
			capture_line_add(&l, s + at, k, c.total);
			capture_add(&c, s + at, k);
			at += k;
		}
		line_reference(s, n, want);
		CHECK_STR(line_of(&c, &l), want);
		capture_free(&c);
	}
}

static char *render(struct capture *c)
{
	struct strbuf sb = { 0 };
	capture_render(c, &sb);
	sb_adds(&sb, "");
	return sb.buf;
}

int main(void)
{
	struct capture c;
	char *s, big[1000];

	test_line();
	test_line_random();

	capture_init(&c, 10);
	s = render(&c);
	CHECK_STR(s, "");
	free(s);
	capture_add(&c, "hello", 5);
	s = render(&c);
	CHECK_STR(s, "hello");
	free(s);
	capture_add(&c, "world", 5);
	s = render(&c);
	CHECK_STR(s, "helloworld");
	free(s);
	capture_free(&c);

	/* Head keeps the first half, tail the last half, the middle is marked;
	 * the marker takes its room from the tail, so exactly 70 bytes are
	 * kept: 35 + a 26-byte marker counting 156 omitted + the last 9. */
	char in[200], want[128];
	for (int i = 0; i < 200; i++)
		in[i] = (char)('a' + i % 26);
	snprintf(want, sizeof(want), "%.35s\n[kyu: 156 bytes omitted]\n%.9s", in, in + 191);
	capture_init(&c, 70);
	capture_add(&c, in, sizeof(in));
	s = render(&c);
	CHECK_STR(s, want);
	CHECK(strlen(s) == 70);
	free(s);
	capture_free(&c);

	/* Many small writes wrap the tail ring: same result. */
	capture_init(&c, 70);
	for (int i = 0; i < 200; i++)
		capture_add(&c, &in[i], 1);
	s = render(&c);
	CHECK_STR(s, want);
	free(s);
	CHECK(c.total == 200);
	capture_free(&c);

	/* One huge write bigger than the whole limit. */
	memset(big, 'x', sizeof(big));
	big[999] = 'E';
	capture_init(&c, 70);
	capture_add(&c, big, sizeof(big));
	s = render(&c);
	snprintf(want, sizeof(want), "%.35s\n[kyu: 956 bytes omitted]\nxxxxxxxxE", big);
	CHECK_STR(s, want);
	free(s);
	capture_free(&c);

	/* A limit smaller than the marker keeps only the marker. */
	capture_init(&c, 8);
	capture_add(&c, in, 26);
	s = render(&c);
	CHECK_STR(s, "\n[kyu: 26 bytes omitted]\n");
	free(s);
	capture_free(&c);

	/* Limit 0 keeps nothing but still counts. */
	capture_init(&c, 0);
	capture_add(&c, "abc", 3);
	s = render(&c);
	CHECK_STR(s, "\n[kyu: 3 bytes omitted]\n");
	free(s);
	capture_free(&c);
	test_live();
	return check_done("capture");
}
