#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"

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
	return check_done("capture");
}
