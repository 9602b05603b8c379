/* SQL string literals (db_quote.h). */
#include "db_quote.h"

void db_quote(struct strbuf *sb, const char *s, size_t len)
{
	if (!s) {
		sb_adds(sb, "NULL");
		return;
	}
	sb_reserve(sb, len * 2 + 3);
	sb->buf[sb->len++] = '\'';
	for (size_t i = 0; i < len; i++) {
		char c = s[i], e = 0;
		switch (c) {
		case '\0':
			e = '0';
			break;
		case '\n':
			e = 'n';
			break;
		case '\r':
			e = 'r';
			break;
		case '\\':
			e = '\\';
			break;
		case '\'':
			e = '\'';
			break;
		case '"':
			e = '"';
			break;
		case '\032':
			e = 'Z';
			break;
		}
		if (e) {
			sb->buf[sb->len++] = '\\';
			sb->buf[sb->len++] = e;
		} else {
			sb->buf[sb->len++] = c;
		}
	}
	sb->buf[sb->len++] = '\'';
	sb->buf[sb->len] = '\0';
}

void db_quote_like_anywhere(struct strbuf *sb, const char *s)
{
	struct strbuf p = { 0 };

	sb_adds(&p, "%");
	for (; *s; s++) {
		if (*s == '%' || *s == '_' || *s == '\\')
			sb_adds(&p, "\\");
		sb_add(&p, s, 1);
	}
	sb_adds(&p, "%");
	db_quotes(sb, p.buf);
	sb_free(&p);
}
