/* SQL string literals. Cut from db.c because quoting is pure text and
 * needs no connection: every module that builds statements uses it (the
 * worker, kyu, kyu web, common's own builders), and the unit tests read
 * its output without a server. db.h includes this header. */
#ifndef KYU_DB_QUOTE_H
#define KYU_DB_QUOTE_H

#include <stddef.h>

#include "util.h"

/* Append s as a quoted SQL string literal ('...'), or NULL when s is NULL.
 * Pure: every kyu session runs with a fixed sql_mode (without
 * NO_BACKSLASH_ESCAPES, db_session.c), so the escaping does not depend on
 * the server. */
void db_quote(struct strbuf *sb, const char *s, size_t len);
static inline void db_quotes(struct strbuf *sb, const char *s)
{
	db_quote(sb, s, s ? __builtin_strlen(s) : 0);
}

#endif
