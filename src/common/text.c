/* Text from the database or a file, checked and made safe to show. See
 * text.h. */
#include "text.h"

#include "utf8.h"

/* C0, DEL, or C1 (U+0080..U+009F, encoded as C2 80..C2 9F). */
static bool is_control(const unsigned char *p, size_t n)
{
	if (n == 1)
		return p[0] < 0x20 || p[0] == 0x7f;
	return n == 2 && p[0] == 0xc2 && p[1] < 0xa0;
}

long text_name_chars(const char *s)
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
		case '\\':
			named = "\\\\";
			break;
		case '\t':
			named = "\\t";
			break;
		case '\n':
			named = "\\n";
			break;
		case '\0':
			named = "\\0";
			break;
		}
		if (!named && e == ESCAPE_TERMINAL) {
			switch (p[0]) {
			case '\r':
				named = "\\r";
				break;
			case 0x1b:
				named = "\\e";
				break;
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
