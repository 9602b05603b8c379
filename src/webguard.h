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
 * localhost, or an IP address literal (any port). A name such as
 * evil.example, which an attacker's DNS may point at 127.0.0.1 after the
 * browser loaded the attacker's page (DNS rebinding), is refused: the
 * browser would take the dashboard for that site and let its script read
 * the pages and the CSRF token. */
bool guard_host_is_local(const char *host);

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

/* A crypt(3) hash of password with the library's preferred method and a
 * fresh salt (kyu web --hash-password); NULL and errno on failure. The
 * caller frees it. */
char *guard_hash_password(const char *password);

#endif
