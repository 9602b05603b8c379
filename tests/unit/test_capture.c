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
