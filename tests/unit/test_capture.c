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

	/* Head keeps the first half, tail the last half, the middle is marked. */
	capture_init(&c, 10);
	capture_add(&c, "0123456789abcdefghij", 20);
	s = render(&c);
	CHECK_STR(s, "01234\n[kyu: 10 bytes omitted]\nfghij");
	free(s);
	capture_free(&c);

	/* Many small writes wrap the tail ring. */
	capture_init(&c, 8);
	for (int i = 0; i < 26; i++) {
		char ch = (char)('a' + i);
		capture_add(&c, &ch, 1);
	}
	s = render(&c);
	CHECK_STR(s, "abcd\n[kyu: 18 bytes omitted]\nwxyz");
	free(s);
	CHECK(c.total == 26);
	capture_free(&c);

	/* One huge write bigger than the whole limit. */
	memset(big, 'x', sizeof(big));
	big[999] = 'E';
	capture_init(&c, 4);
	capture_add(&c, big, sizeof(big));
	s = render(&c);
	CHECK_STR(s, "xx\n[kyu: 996 bytes omitted]\nxE");
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
