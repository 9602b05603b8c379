/* Small checked helpers, used by every program (kyud, kyud-metrics,
 * kyu web, kyu), most modules and the tests: number and address parsing
 * (parse_*, hostport_is_wildcard), growable strings (struct strbuf,
 * sb_*), allocation that aborts (x*alloc, xstrdup), string vectors
 * (strv_*), a monotonic clock and random tokens (mono_now, random_token),
 * and wait statuses in words (describe_wait_status).
 *
 * One module, although its names do not start with its name: each
 * helper is a few lines of libc with no state and no dependency, and no
 * family is big enough to be a module (sb_*, the largest, is 70 lines).
 * Split, util would be six files of 20 to 70 lines whose names would
 * still not be their prefixes (sb_, x, parse_, mono_) unless some 750
 * calls in every folder were renamed. It stays the one exception to the
 * rule, and only for helpers of this kind: whatever has state or a
 * dependency of its own is a module. */
#ifndef KYU_UTIL_H
#define KYU_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attr.h"

/* Parse a whole decimal number in [min, max]; -EINVAL / -ERANGE otherwise. */
KYU_MUSTCHECK int parse_i64(const char *s, int64_t min, int64_t max, int64_t *ret);
/* yes/no/true/false/on/off/1/0 */
KYU_MUSTCHECK int parse_bool(const char *s, bool *ret);
/* "ADDR:PORT" or "[V6]:PORT" into host (NUL-terminated) and port. */
KYU_MUSTCHECK int parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port);
/* True when s is ADDRESS:PORT with a wildcard address (0.0.0.0, ::). */
bool hostport_is_wildcard(const char *s);

/* A growable NUL-terminated byte string. Allocation failure aborts: the
 * process cannot do anything useful without memory. */
struct strbuf {
	char *buf;
	size_t len, cap;
};
void sb_reserve(struct strbuf *sb, size_t extra);
void sb_add(struct strbuf *sb, const char *s, size_t n);
void sb_adds(struct strbuf *sb, const char *s);
void sb_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A number in decimal: what "%" PRIu64 and "%" PRId64 print, without
 * the printf machinery, for the statements built per job. */
void sb_addu64(struct strbuf *sb, uint64_t v);
void sb_addi64(struct strbuf *sb, int64_t v);
void sb_reset(struct strbuf *sb);
void sb_free(struct strbuf *sb);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* NULL-terminated vectors of malloc'd strings (NULL: empty). The length;
 * append s (taken over); free each string and the vector. */
size_t strv_len(char *const *v);
void strv_push(char ***v, char *s);
void strv_free(char **v);

/* Monotonic seconds, for local timers only (never for job times). */
double mono_now(void);
/* A random nonzero token below 2^63 (so it fits signed 64-bit client code
 * too): claim tokens, lock holders. */
uint64_t random_token(void);

/* How a child ended, from a wait status, for log lines and error texts:
 * "exited with status 3", "killed by signal 9 (SIGKILL)", "killed by
 * signal 11 (SIGSEGV) (core dumped)". Always NUL-terminates buf. */
void describe_wait_status(int wstatus, char *buf, size_t len);

#endif
