/* A failure's cause: the first line of a job's error with what differs
 * between two jobs failing for the same reason folded away. See cause.h. */
#include "cause.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "utf8.h"

/* The folded line being written: it stops at the first token that does
 * not fit, so that what is there is whole tokens and characters. */
struct out {
	char *buf;
	size_t cap, len;
	bool full, space; /* space: one is owed before the next token */
};

static void put(struct out *o, const char *s, size_t n)
{
	size_t need = n + (o->space && o->len > 0);

	if (o->full || o->len + need + 1 > o->cap) {
		o->full = true;
		return;
	}
	if (o->space && o->len > 0)
		o->buf[o->len++] = ' ';
	o->space = false;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool is_hex(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Letters, digits, '_' and any byte of a multi-byte character: what a
 * token must not be glued to. */
static bool is_word(unsigned char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c >= 0x80;
}

static bool is_space(unsigned char c)
{
	return c == ' ' || c < 0x20 || c == 0x7f;
}

static bool ends_word(const unsigned char *s, size_t i, size_t n)
{
	return i >= n || !is_word(s[i]);
}

/* 8-4-4-4-12 hex digits and dashes at s: its length (36), or 0. */
static size_t uuid_at(const unsigned char *s, size_t left)
{
	static const size_t groups[] = { 8, 4, 4, 4, 12 };
	size_t i = 0;

	for (size_t g = 0; g < 5; g++) {
		if (g && (i >= left || s[i++] != '-'))
			return 0;
		for (size_t k = 0; k < groups[g]; k++, i++)
			if (i >= left || !is_hex(s[i]))
				return 0;
	}
	return ends_word(s, i, left) ? i : 0;
}

/* A hex id at s (a word start): 0x and hex digits, or a word of at least
 * 8 hex digits with a digit and a letter among them. Its length, or 0. */
static size_t hex_at(const unsigned char *s, size_t left)
{
	size_t i = 0;
	bool digit = false, letter = false;

	if (left > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && is_hex(s[2])) {
		for (i = 2; i < left && is_hex(s[i]); i++)
			;
		return ends_word(s, i, left) ? i : 0;
	}
	for (; i < left && is_hex(s[i]); i++) {
		digit |= is_digit(s[i]);
		letter |= !is_digit(s[i]);
	}
	return i >= 8 && digit && letter && ends_word(s, i, left) ? i : 0;
}

/* The quote that opens at s ('...', "...", `...`, the typographic single
 * and double quotes): the bytes of the opener in *open, the closer into
 * close (*closelen). false when s opens none. */
static bool quote_opens(const unsigned char *s, size_t left, size_t *open, const char **close,
			size_t *closelen)
{
	if (s[0] == '\'' || s[0] == '"' || s[0] == '`') {
		*open = 1;
		*close = (const char *)s;
		*closelen = 1;
		return true;
	}
	/* U+2018 closes with U+2019, U+201C with U+201D. */
	if (left >= 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0x98 || s[2] == 0x9c)) {
		*open = 3;
		*close = s[2] == 0x98 ? "\xe2\x80\x99" : "\xe2\x80\x9d";
		*closelen = 3;
		return true;
	}
	return false;
}

/* The end (just past the closer) of a quoted string opening at s, its
 * inside at most CAUSE_QUOTE_MAX bytes; 0 when it does not close. */
static size_t quote_at(const unsigned char *s, size_t left)
{
	const char *close;
	size_t open, closelen, i;

	if (!quote_opens(s, left, &open, &close, &closelen))
		return 0;
	for (i = open; i + closelen <= left && i - open <= CAUSE_QUOTE_MAX; i++)
		if (memcmp(s + i, close, closelen) == 0)
			return i + closelen;
	return 0;
}

/* A path at s (after a space, =, ( or [): /x, ./x, ../x or ~/x up to a
 * space or quote, its trailing punctuation left out. Its length, or 0. */
static size_t path_at(const unsigned char *s, size_t left)
{
	size_t i;

	if (s[0] == '/')
		i = 1;
	else if (left > 1 && (s[0] == '~' || s[0] == '.') && s[1] == '/')
		i = 2;
	else if (left > 2 && s[0] == '.' && s[1] == '.' && s[2] == '/')
		i = 3;
	else
		return 0;
	/* A lone slash ("a / b") is no path. */
	if (i >= left || is_space(s[i]))
		return 0;
	for (; i < left && !is_space(s[i]) && !strchr("'\"`)]", s[i]); i++)
		;
	while (i > 1 && strchr(".,:;", s[i - 1]))
		i--;
	return i;
}

/* Digits, with ".digits" parts: "4.6", "10.0.0.1". Its length. */
static size_t number_at(const unsigned char *s, size_t left)
{
	size_t i = 0;

	while (i < left && is_digit(s[i]))
		i++;
	while (i + 1 < left && s[i] == '.' && is_digit(s[i + 1]))
		for (i++; i < left && is_digit(s[i]); i++)
			;
	return i;
}

size_t cause_fold(const char *str, size_t len, char *buf, size_t cap)
{
	const unsigned char *s = (const unsigned char *)str;
	struct out o = { buf, cap, 0, cap == 0, false };
	const char *nl = memchr(str, '\n', len);
	size_t n = nl ? (size_t)(nl - str) : len, i = 0, k;

	if (n > CAUSE_LINE_MAX)
		n = utf8_cut(str, n, CAUSE_LINE_MAX);
	if (cap)
		buf[0] = '\0';
	while (i < n && !o.full) {
		/* What comes before is what was written, not what was
		 * read: a cause folds to itself again (a text the operator
		 * copies stands for its cause). */
		unsigned char c = s[i],
			      prev = o.space || !o.len ? ' ' : (unsigned char)o.buf[o.len - 1];
		bool start = !is_word(prev);

		/* C1 controls (U+0080 to U+009F) are control characters too. */
		if (is_space(c) ||
		    (c == 0xc2 && i + 1 < n && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)) {
			i += c == 0xc2 ? 2 : 1;
			o.space = true;
			continue;
		}
		if (start && (k = uuid_at(s + i, n - i)) > 0) {
			puts_(&o, "<uuid>");
		} else if (start && (k = hex_at(s + i, n - i)) > 0) {
			puts_(&o, "<hex>");
		} else if (is_digit(c)) {
			k = number_at(s + i, n - i);
			/* kyud's "exit code N" keeps its N. */
			if (o.len == 9 && o.space && memcmp(o.buf, "exit code", 9) == 0)
				put(&o, str + i, k);
			else
				puts_(&o, "<n>");
		} else if (start && (k = quote_at(s + i, n - i)) > 0) {
			size_t open = 0, closelen = 0;
			const char *close = "";
			(void)quote_opens(s + i, n - i, &open, &close, &closelen);
			/* put() owes no space after the opener: the
			 * placeholder is glued to its quotes. */
			put(&o, str + i, open);
			puts_(&o, "<s>");
			put(&o, close, closelen);
		} else if ((is_space(prev) || strchr("=([", prev)) &&
			   (k = path_at(s + i, n - i)) > 0) {
			puts_(&o, "<path>");
		} else if (c >= 0x80) {
			k = utf8_char_len(str + i, n - i);
			if (k == 0) {
				k = 1;
				puts_(&o, "\xef\xbf\xbd");
			} else {
				put(&o, str + i, k);
			}
		} else {
			k = 1;
			put(&o, str + i, 1);
		}
		i += k;
	}
	return o.len;
}

uint32_t cause_id(const char *folded, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)folded[i];
		h *= 16777619u;
	}
	return h;
}

void cause_id_text(uint32_t id, char buf[9])
{
	snprintf(buf, 9, "%08x", id);
}

int cause_id_parse(const char *s, uint32_t *ret)
{
	uint32_t v = 0;

	for (int i = 0; i < 8; i++) {
		unsigned char c = (unsigned char)s[i];
		if (!is_hex(c))
			return -EINVAL;
		v = v << 4 | (uint32_t)(is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
	}
	if (s[8])
		return -EINVAL;
	*ret = v;
	return 0;
}

int cause_like(const char *folded, char *out, size_t cap)
{
	static const char *const holders[] = { "<uuid>", "<hex>", "<n>", "<s>", "<path>" };
	size_t o = 0;
	bool any = true; /* out ends with a wildcard, not an escaped % */

	/* Room for the worst case of what is added next: "\\x" and "%". */
#define ROOM(n)                                                                                    \
	do {                                                                                       \
		if (o + (n) + 2 > cap)                                                             \
			return -ENOSPC;                                                            \
	} while (0)
	ROOM(1);
	out[o++] = '%';
	for (const char *p = folded; *p;) {
		size_t h;
		for (h = 0; h < sizeof(holders) / sizeof(holders[0]); h++)
			if (strncmp(p, holders[h], strlen(holders[h])) == 0)
				break;
		if (h < sizeof(holders) / sizeof(holders[0]) || *p == ' ' ||
		    strncmp(p, "\xef\xbf\xbd", 3) == 0) {
			p += h < sizeof(holders) / sizeof(holders[0]) ? strlen(holders[h])
			     : *p == ' '                              ? 1
								      : 3;
			if (!any) {
				ROOM(1);
				out[o++] = '%';
				any = true;
			}
			continue;
		}
		ROOM(2);
		if (*p == '%' || *p == '_' || *p == '\\')
			out[o++] = '\\';
		out[o++] = *p++;
		any = false;
	}
	if (!any) {
		ROOM(1);
		out[o++] = '%';
	}
	out[o] = '\0';
#undef ROOM
	return 0;
}
