/* Text that goes into the database's utf8mb4 columns. See utf8.h. */
#include "utf8.h"

#include <string.h>

/* The length of the well-formed character at s[0..len), or 0 if the bytes
 * there do not start one; *partial is set when they are a correct start
 * cut short by len. The ranges are those of RFC 3629's table (no overlong
 * forms, no surrogates, nothing above U+10FFFF), which is what MariaDB's
 * utf8mb4 accepts. */
static size_t char_len(const unsigned char *s, size_t len, int *partial)
{
	unsigned char lo = 0x80, hi = 0xBF;
	size_t n;

	*partial = 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF)
		n = 2;
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		n = 3;
		if (s[0] == 0xE0)
			lo = 0xA0;
		else if (s[0] == 0xED)
			hi = 0x9F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		n = 4;
		if (s[0] == 0xF0)
			lo = 0x90;
		else if (s[0] == 0xF4)
			hi = 0x8F;
	} else
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (i >= len) {
			*partial = 1;
			return 0;
		}
		if (s[i] < lo || s[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xBF;
	}
	return n;
}

size_t utf8_char_len(const char *s, size_t left)
{
	int partial;

	return left ? char_len((const unsigned char *)s, left, &partial) : 0;
}

size_t utf8_cut(const char *s, size_t len, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t at = 0;
	int partial;

	if (len <= max)
		max = len;
	while (at < max) {
		/* Judged on the whole text: a character that the cut splits
		 * is well-formed there, and must go whole. */
		size_t n = char_len(u + at, len - at, &partial);
		if (n == 0)
			n = 1;
		if (at + n > max)
			break;
		at += n;
	}
	return at;
}

size_t utf8_fix(char *s)
{
	unsigned char *u = (unsigned char *)s;
	size_t len = strlen(s), at = 0, changed = 0;
	int partial;

	while (at < len) {
		size_t n = char_len(u + at, len - at, &partial);
		if (n) {
			at += n;
			continue;
		}
		if (partial) {
			/* A character cut short at the end: the cut's, drop it. */
			changed += len - at;
			u[at] = '\0';
			break;
		}
		u[at++] = '?';
		changed++;
	}
	return changed;
}
