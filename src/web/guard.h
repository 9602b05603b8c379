/* The dashboard's gatekeeping, without HTTP: which Host a request may
 * name, whether a POST comes from the dashboard's own page, and whether a
 * user name and password match the [web] section. Pure functions and one
 * small state, so that the unit tests reach every rule. */
#ifndef KYU_WEBGUARD_H
#define KYU_WEBGUARD_H

#include <stdbool.h>
#include <stddef.h>

/* Constant time in the length of b (the secret). */
bool guard_equal(const char *a, const char *b);

/* A Host header that a page served without a password may be reached by:
 * localhost, or a loopback address literal (any port): a browser on this
 * host, directly or through an SSH tunnel. A name such as
 * evil.example, which an attacker's DNS may point at 127.0.0.1 after the
 * browser loaded the attacker's page (DNS rebinding), is refused: the
 * browser would take the dashboard for that site and let its script read
 * the pages and the CSRF token. */
bool guard_host_is_local(const char *host);

/* Whether a request carries a header that proxies add (Forwarded,
 * X-Forwarded-For, X-Forwarded-Host, X-Real-IP, Via): lookup(ctx, NAME)
 * returns a header's value or NULL. Without a password such a request is
 * refused: a proxy forwards whatever Host its client sent. */
bool guard_is_proxied(const char *(*lookup)(void *ctx, const char *name), void *ctx);

/* An Origin header (if any) names the site the Host header names, over
 * http or https. Absent: true (a browser sends Origin with every POST
 * made by script; its absence means a tool such as curl). */
bool guard_origin_matches(const char *origin, const char *host);

/* Whether the address (numeric, as [web] listen allows) is on the
 * loopback interface: 127.0.0.0/8 or ::1. */
bool guard_addr_is_loopback(const char *addr);

/* 32 random bytes as 64 hex digits (getrandom), into buf (65 bytes).
 * Returns 0 or -errno. */
int guard_token(char buf[65]);

/* Checks HTTP basic credentials against a user name and a crypt(3) hash,
 * remembering (as a keyed SHA-256 digest, never in clear) the last pair
 * that matched: crypt with a modern method costs tens of milliseconds on
 * purpose, and a page makes a request every few seconds. Not thread-safe:
 * one per thread. */
struct guard_auth;
/* NULL when random bytes for the key cannot be had (errno). */
struct guard_auth *guard_auth_new(const char *user, const char *hash);
void guard_auth_free(struct guard_auth *a);
bool guard_auth_check(struct guard_auth *a, const char *user, const char *password);

/* Whether hash is a crypt(3) hash of a scheme still fit for passwords:
 * yescrypt ($y$), gost-yescrypt ($gy$), scrypt ($7$), bcrypt ($2b$, $2y$)
 * or SHA-512 ($6$), and one this libcrypt computes. MD5 ($1$), SHA-256
 * ($5$), DES and the others are cheap to try by the billion on a stolen
 * hash. If not, the scheme's prefix ("$1$", or the first two characters
 * of a DES hash) goes into prefix (at least 8 bytes). */
bool guard_hash_is_strong(const char *hash, char *prefix, size_t len);

/* Failed logins per client address, so that guessing costs time: after
 * GUARD_FAILS_FREE failures in a row an address must wait, 1 s after the
 * next failure, doubling up to GUARD_WAIT_MAX; a success clears it. The
 * server answers a waiting address 429 without checking its password, so
 * the one server thread spends no crypt on it. A fixed table: when it is
 * full, the entry that waits least is reused. Not thread-safe. */
#define GUARD_FAILS_FREE 5
#define GUARD_WAIT_MAX 60 /* seconds */
#define GUARD_FAIL_SLOTS 256
struct guard_fails;
struct guard_fails *guard_fails_new(void);
void guard_fails_free(struct guard_fails *f);
/* Seconds the address (key bytes, e.g. its in_addr) must still wait at
 * time now (a monotonic second count); 0: it may try. */
long guard_fails_wait(struct guard_fails *f, const void *key, size_t len, long now);
void guard_fails_record(struct guard_fails *f, const void *key, size_t len, long now, bool ok);

/* A crypt(3) hash of password with the library's preferred method and a
 * fresh salt (kyu web --hash-password); NULL and errno on failure. The
 * caller frees it. */
char *guard_hash_password(const char *password);

#endif
