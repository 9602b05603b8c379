/* A failure's cause: the first line of a job's error with what differs
 * between two jobs failing for the same reason folded away (numbers, hex
 * ids, UUIDs, quoted strings, paths), so that thirty jobs failing alike
 * are one cause, not thirty rows. kyu causes and the dashboard's "by
 * cause" section group failures by it (causes.h); this is the text part,
 * pure and allocation-free (tests/unit/test_cause.c).
 *
 * What folds, each to a placeholder:
 *   <uuid>  8-4-4-4-12 hex digits with dashes;
 *   <hex>   0x followed by hex digits, or a word of 8 or more hex
 *           digits with at least one digit and one letter;
 *   <n>     a run of digits anywhere, with its decimal or dotted parts
 *           ("3", "4.6", "10.0.0.1", the 42 of "job42");
 *   '<s>'   the inside of '...', "...", `...` or the typographic quotes
 *           (at most CAUSE_QUOTE_MAX bytes, opened after no letter);
 *   <path>  a word that starts with /, ./, ../ or ~/ after a space, =,
 *           ( or [, up to the next space or quote, without a trailing
 *           . , : or ;.
 * Except: the code of kyud's leading "exit code N" (outcome.c) stays,
 * since two exit codes of one program are two of its answers. Control
 * characters (C0, DEL, C1) and runs of spaces become one space, leading and trailing
 * ones go; a byte that is not UTF-8 becomes U+FFFD. The result is valid
 * UTF-8 whatever the input. */
#ifndef KYU_CAUSE_H
#define KYU_CAUSE_H

#include <stddef.h>
#include <stdint.h>
#include "attr.h"

/* Bytes of the line read: the rest is ignored. The SQL that reads lines
 * for folding (causes.c) cuts them at CAUSE_LINE_CHARS characters, which
 * this holds in utf8mb4. */
#define CAUSE_LINE_CHARS 240
#define CAUSE_LINE_MAX ((size_t)CAUSE_LINE_CHARS * 4)
/* The line the server hands over for folding, from kyu_jobs.error:
 * what every reader of causes selects, so that all fold the same text. */
#define CAUSE_LINE_SQL "LEFT(SUBSTRING_INDEX(error, '\\n', 1), 240)"

/* The longest quoted string folded: a longer one stays as it is. */
#define CAUSE_QUOTE_MAX 256
/* A buffer that always holds a folded line and its NUL. */
#define CAUSE_MAX 512

/* Fold the first line of s[0..len) (up to its first '\n', at most
 * CAUSE_LINE_MAX bytes) into out (cap bytes, NUL-terminated; cap 0: none
 * written). A token that does not fit ends it there. Returns its length.
 * Time linear in CAUSE_LINE_MAX at most, whatever s holds. */
size_t cause_fold(const char *s, size_t len, char *out, size_t cap);

/* A short name for a folded cause: FNV-1a of its bytes, the same on
 * every host and in every run, printed as 8 lowercase hex digits. */
uint32_t cause_id(const char *folded, size_t len);
/* buf: "%08x" of id. */
void cause_id_text(uint32_t id, char buf[9]);
/* s is exactly 8 hex digits: 0 and *ret; else -EINVAL. */
KYU_MUSTCHECK int cause_id_parse(const char *s, uint32_t *ret);

/* A LIKE pattern (backslash escapes, not quoted) into out (cap bytes)
 * that every line folding to folded matches: each placeholder, space and
 * U+FFFD a %, literal % _ \ escaped, % at both ends. A superset, cheap to
 * ask the server for, that the fold then narrows. 0, or -ENOSPC. */
int cause_like(const char *folded, char *out, size_t cap);

#endif
