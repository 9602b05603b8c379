/* Text that goes into the database's utf8mb4 columns. A server in strict
 * mode refuses a statement whose text is not well-formed UTF-8 (error
 * 1366), and kyud builds texts from row values cut by bytes (fixed
 * buffers, %.Ns): cut them here, on a character boundary, instead. Used
 * by kyud's workers (src/worker) and text.c.
 *
 * Pure and allocation-free, so that callers with fixed buffers can use
 * them (tests/unit/test_utf8.c). */
#ifndef KYU_UTF8_H
#define KYU_UTF8_H

#include <stddef.h>

/* The length of the longest prefix of s[0..len) that is at most max bytes
 * and does not end inside a character (a malformed byte counts as one
 * character of its own). For "%.*s": (int)utf8_cut(s, strlen(s), 64). */
size_t utf8_cut(const char *s, size_t len, size_t max);

/* The length (1 to 4) of the UTF-8 character at s, reading at most left
 * bytes, or 0 when s does not start with one (or it is cut short). Valid
 * means what utf8mb4 stores: the shortest form, no surrogates, nothing
 * past U+10FFFF. */
size_t utf8_char_len(const char *s, size_t left);

/* Make NUL-terminated s well-formed UTF-8 in place: an incomplete
 * character at its end (what a byte-wise cut leaves) is removed, and every
 * other byte that is not part of a well-formed character (overlong forms,
 * surrogates, code points above U+10FFFF included) becomes '?'. Never
 * makes s longer. Returns the number of bytes replaced or removed. */
size_t utf8_fix(char *s);

#endif
