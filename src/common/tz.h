/* Time zones by IANA name, for schedules written in local time
 * ("30 2 * * *" in Europe/Berlin). The rules come from the system's tzdata
 * through glibc, the best-kept copy of them on the machine; this module only
 * validates the name and asks glibc for the UTC offset at an instant.
 *
 * Process-wide state: glibc takes the zone from the TZ environment variable,
 * so tz_offset sets TZ, calls tzset() and localtime_r(), and restores TZ
 * (or unsets it) before it returns. Between calls the environment is as the
 * caller left it, so the jobs forked from this process never inherit a
 * changed TZ. This is safe because its users, kyud's worker (src/worker:
 * the schedules) and kyu (src/cli: kyu schedule shows a first run, through
 * cron.c), are single-threaded: no other thread can read the environment
 * or the time zone meanwhile. What stays changed is glibc's own loaded zone, which
 * nothing in kyu relies on (kyu logs and stores UTC); glibc re-reads a
 * zone file only when TZ names another zone than the one it last loaded,
 * so repeated offsets for one zone cost a string compare, not a file read.
 *
 * "UTC" and "Etc/UTC" are built in: they need no tzdata and never touch TZ.
 * "Z", "GMT" and POSIX strings such as "EST5EDT,M3.2.0,M11.1.0" are not
 * names here ("GMT" and "EST5EDT" work as tzdata files when installed). */
#ifndef KYU_TZ_H
#define KYU_TZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "attr.h"

/* Longest zone name accepted; the longest in tzdata 2024 has 32 bytes. */
#define TZ_NAME_MAX 64

struct tz; /* opaque */

/* Look up an IANA zone name ("UTC", "Europe/Berlin"): 0 and *out (free with
 * tz_free), or -1 with a message naming the zone in err. The name must be
 * made of [A-Za-z0-9_+./-], relative, without empty, "." or ".." parts, at
 * most TZ_NAME_MAX bytes, and $TZDIR/NAME (TZDIR defaulting to
 * /usr/share/zoneinfo) must be a regular file in TZif format: glibc would
 * quietly use UTC for a zone it cannot find. */
KYU_MUSTCHECK int tz_open(struct tz **out, const char *name, char *err, size_t errlen);
/* Accepts NULL. */
void tz_free(struct tz *z);
/* The zone's name as given to tz_open. */
const char *tz_name(const struct tz *z);
/* True for the built-in UTC, whose offset is always 0 (cron_next's fast path). */
bool tz_is_utc(const struct tz *z);
/* UTC offset in seconds (east positive) in effect at instant t (seconds
 * since the epoch); 0 when glibc cannot represent t. */
int tz_offset(const struct tz *z, int64_t t);

#endif
