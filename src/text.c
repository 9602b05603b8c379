#include "text.h"

#include <stdint.h>

size_t utf8_char_len(const char *s, size_t left)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned c, n;
	uint32_t cp;

	if (left == 0)
		return 0;
	c = p[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 1, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 2, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 3, cp = c & 0x07;
	else
		return 0;
	if (left < n + 1)
		return 0;
	for (unsigned i = 1; i <= n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n + 1;
}

/* C0, DEL, or C1 (U+0080..U+009F, encoded as C2 80..C2 9F). */
static bool is_control(const unsigned char *p, size_t n)
{
	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

long name_chars(const char *s)
{
	size_t left = 0, n;
	long chars = 0;

	while (s[left])
		left++;
	for (; left > 0; s += n, left -= n, chars++) {
		n = utf8_char_len(s, left);
		if (n == 0 || is_control((const unsigned char *)s, n))
			return -1;
	}
	return chars;
}

void text_escape(struct strbuf *sb, const char *s, size_t len, enum escape e)
{
	static const char hex[] = "0123456789abcdef";
	size_t i = 0;

	sb_reserve(sb, len);
	while (i < len) {
		const unsigned char *p = (const unsigned char *)s + i;
		size_t n = e == ESCAPE_TERMINAL ? utf8_char_len(s + i, len - i) : 1;
		const char *named = NULL;

		switch (p[0]) {
		case '\\': named = "\\\\"; break;
		case '\t': named = "\\t"; break;
		case '\n': named = "\\n"; break;
		case '\0': named = "\\0"; break;
		}
		if (!named && e == ESCAPE_TERMINAL) {
			switch (p[0]) {
			case '\r': named = "\\r"; break;
			case 0x1b: named = "\\e"; break;
			}
		}
		if (named) {
			sb_adds(sb, named);
			i++;
			continue;
		}
		if (e == ESCAPE_TERMINAL && (n == 0 || is_control(p, n))) {
			/* A bad byte alone, a control character whole. */
			size_t k = n ? n : 1;
			for (size_t j = 0; j < k; j++) {
				char x[4] = { '\\', 'x', hex[p[j] >> 4], hex[p[j] & 15] };
				sb_add(sb, x, sizeof(x));
			}
			i += k;
			continue;
		}
		sb_add(sb, s + i, n);
		i += n;
	}
}
