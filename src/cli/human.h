/* Readings of values for eyes rather than for programs: sizes, durations
 * and times with units, and the width of text on a terminal. Used by kyu's
 * table form (src/cli/table.c) on a terminal; what kyu prints into a pipe
 * stays the values as stored. In common/ so that its unit test
 * (tests/unit/test_human.c) links it.
 *
 * Pure and allocation-free: each writer fills buf (size n, always
 * NUL-terminated when n > 0) and returns the length it wrote. */
#ifndef KYU_HUMAN_H
#define KYU_HUMAN_H

#include <stdbool.h>
#include <stddef.h>

/* Bytes with a binary unit, one decimal under 10 of it: "512 B",
 * "7.7 MiB", "12 GiB". */
size_t human_size(char *buf, size_t n, double bytes);
/* Seconds with a unit, at most two of them: "850 us", "4.7 ms", "3.2 s",
 * "2 min 3 s", "5 h 10 min", "3 d 4 h". Negative: "-" then the reading. */
size_t human_duration(char *buf, size_t n, double seconds);
/* A time as the server prints a DATETIME, "YYYY-MM-DD hh:mm:ss" with or
 * without a fraction, as seconds since 1970-01-01 00:00:00 of the same
 * clock: no zone is applied, so that two times read in one session's zone
 * compare right whatever the host's zone. end (NULL: not wanted) gets
 * what follows the time (" UTC"). false when s does not start with one. */
bool human_time_parse(const char *s, long long *ret_secs, const char **end);
/* How long ago a time was, given now - then in seconds: "now" under a
 * second, "12 s ago", "3 min ago", "5 h ago", "2 d ago"; a later time
 * "in 2 h". Whole units, rounded down. */
size_t human_ago(char *buf, size_t n, long long delta);
/* The columns s[0..len) takes on a terminal: one per character (a byte
 * that is not UTF-8 counts as one). */
size_t human_width(const char *s, size_t len);
/* The bytes of the longest prefix of s[0..len) that takes at most cols
 * columns and does not end inside a character. */
size_t human_cut(const char *s, size_t len, size_t cols);

#endif
