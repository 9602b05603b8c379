/* SQL string literals. Kept apart from db.c because quoting is pure text and
 * needs no connection: every module that builds statements uses it (the
 * worker, kyu, kyu web, common's own builders), and the unit tests read
 * its output without a server. db.h includes this header. */
#ifndef KYU_DB_QUOTE_H
#define KYU_DB_QUOTE_H

#include <stddef.h>

#include "util.h"

/* Append s as a quoted SQL string literal ('...'), or NULL when s is NULL.
 * Pure: every kyu session runs in utf8mb4 with a fixed sql_mode (without
 * NO_BACKSLASH_ESCAPES), and db.c refuses a session where either did not
 * hold (db_session.h), so the escaping does not depend on the server. It
 * escapes byte by byte, which is exact in utf8mb4: no byte of a multibyte
 * character is below 0x80, so none is a quote or a backslash. In gbk, sjis,
 * big5 or gb18030 it would not be: a character's second byte may be 0x5C,
 * and one that began before the escaping backslash would swallow it. */
void db_quote(struct strbuf *sb, const char *s, size_t len);
static inline void db_quotes(struct strbuf *sb, const char *s)
{
	db_quote(sb, s, s ? __builtin_strlen(s) : 0);
}

/* Append the quoted LIKE pattern that matches s anywhere ('%s%', with s's
 * own %, _ and \ escaped): a search box's text is text, not a pattern. */
void db_quote_like_anywhere(struct strbuf *sb, const char *s);

#endif
