/* The dashboard's JSON (kyu web), made from result sets. See webjson.h. */
#include "webjson.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/util.h"

json_t *webjson_text(const char *s, size_t len)
{
	struct strbuf sb = { 0 };
	const unsigned char *p = (const unsigned char *)s;
	json_t *j;
	size_t i = 0;

	j = memchr(s, '\0', len) ? NULL : json_stringn(s, len);
	if (j)
		return j;
	/* Invalid UTF-8 (or a NUL byte, which jansson takes but a page
	 * should not show): rebuild it. */
	while (i < len) {
		size_t n = p[i] ? utf8_char_len(s + i, len - i) : 0;
		if (n) {
			sb_add(&sb, s + i, n);
			i += n;
		} else {
			sb_adds(&sb, "\xef\xbf\xbd");
			i++;
		}
	}
	j = json_stringn(sb.buf ? sb.buf : "", sb.len);
	sb_free(&sb);
	return j;
}

static bool is_numeric(const char *name, const char *const *numeric)
{
	for (size_t i = 0; numeric && numeric[i]; i++)
		if (strcmp(name, numeric[i]) == 0)
			return true;
	return false;
}

/* Number.MAX_SAFE_INTEGER: 2^53 - 1. */
#define JS_SAFE_INT 9007199254740991LL

json_t *webjson_cell(const struct db_result *r, size_t row, unsigned col,
		     const char *const *numeric)
{
	const char *v = db_cell(r, row, col);
	size_t len = r->lens[row * r->n_cols + col];
	char *end;

	if (!v)
		return json_null();
	if (is_numeric(r->names[col], numeric)) {
		long long i;
		double d;
		errno = 0;
		i = strtoll(v, &end, 10);
		/* A JavaScript number holds integers exactly up to 2^53 only: a
		 * larger one (a BIGINT UNSIGNED beyond that) would be shown
		 * rounded, so it goes as its decimal text. */
		if (errno == 0 && end != v && *end == '\0' && i <= JS_SAFE_INT && i >= -JS_SAFE_INT)
			return json_integer(i);
		if (end != v && *end == '\0')
			return webjson_text(v, len);
		d = strtod(v, &end);
		if (end != v && *end == '\0')
			return json_real(d);
	}
	return webjson_text(v, len);
}

/* Each row as an object keyed by column name. */
json_t *webjson_rows(const struct db_result *r, size_t max_rows, const char *const *numeric)
{
	json_t *rows = json_array();

	for (size_t i = 0; i < r->n_rows && i < max_rows; i++) {
		json_t *o = json_object();
		for (unsigned c = 0; c < r->n_cols; c++)
			json_object_set_new(o, r->names[c], webjson_cell(r, i, c, numeric));
		json_array_append_new(rows, o);
	}
	return rows;
}

unsigned webjson_error(json_t **out, unsigned status, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	*out = json_pack("{s:o}", "error", webjson_text(msg, strlen(msg)));
	return status;
}
