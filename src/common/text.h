/* Text from the database or a file, checked and made safe to show. Used
 * by kyu (src/cli), which prints rows to a terminal, and within common/
 * by the configuration (config.c, config_ini.c, domain.c), which checks
 * names. */
#ifndef KYU_TEXT_H
#define KYU_TEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* The number of characters of the name s when it is valid UTF-8 with no
 * control character (C0, DEL, C1), else -1: a name nobody could type or
 * see, and no row could match. */
long text_name_chars(const char *s);

enum escape {
	/* Tabs, newlines, NUL and backslash as \t, \n, \0, \\: one row of
	 * tab-separated fields stays one row with the same fields. */
	ESCAPE_FIELD,
	/* Also every other control character (\e, \r, \xNN, C1 as the
	 * bytes of its encoding) and every byte that is not part of valid
	 * UTF-8 (\xNN): nothing reaches a terminal that it would act on. */
	ESCAPE_TERMINAL,
};

/* Append len bytes of s to sb, escaped as e says. */
void text_escape(struct strbuf *sb, const char *s, size_t len, enum escape e);

#endif
