/* Minimal assertions for the unit tests: report and count, never abort,
 * so one run shows every failure. main() returns check_done(). */
#ifndef KYU_CHECK_H
#define KYU_CHECK_H

#include <stdio.h>
#include <string.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                              \
	do {                                                                                     \
		check_count++;                                                                   \
		if (!(cond)) {                                                                   \
			check_failures++;                                                        \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                                \
	} while (0)

#define CHECK_STR(a, b)                                                                           \
	do {                                                                                      \
		const char *a_ = (a), *b_ = (b);                                                  \
		check_count++;                                                                    \
		if (!a_ || !b_ || strcmp(a_, b_) != 0) {                                          \
			check_failures++;                                                         \
			fprintf(stderr, "%s:%d: expected \"%s\", got \"%s\"\n", __FILE__, __LINE__, \
				b_ ? b_ : "(null)", a_ ? a_ : "(null)");                          \
		}                                                                                 \
	} while (0)

/* hay contains (or lacks) needle: for statements checked on their text. */
#define CONTAINS(hay, needle)                                                                  \
	do {                                                                                   \
		const char *h_ = (hay), *n_ = (needle);                                        \
		check_count++;                                                                 \
		if (!h_ || !strstr(h_, n_)) {                                                  \
			check_failures++;                                                      \
			fprintf(stderr, "%s:%d: \"%s\" not found in \"%s\"\n", __FILE__, __LINE__, \
				n_, h_ ? h_ : "(null)");                                       \
		}                                                                              \
	} while (0)

#define LACKS(hay, needle)                                                                 \
	do {                                                                               \
		const char *h_ = (hay), *n_ = (needle);                                    \
		check_count++;                                                             \
		if (!h_ || strstr(h_, n_)) {                                               \
			check_failures++;                                                  \
			fprintf(stderr, "%s:%d: \"%s\" unexpected in \"%s\"\n", __FILE__, \
				__LINE__, n_, h_ ? h_ : "(null)");                         \
		}                                                                          \
	} while (0)

static inline int check_done(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
