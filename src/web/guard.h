/* The dashboard's gatekeeping, without HTTP: which Host a request may
 * name, whether a POST comes from the dashboard's own page, and whether a
 * user name and password match the [web] section. Pure functions and one
 * small state, so that the unit tests reach every rule. */
#ifndef KYU_WEBGUARD_H
#define KYU_WEBGUARD_H

#include <stdbool.h>
#include <stddef.h>
#include "common/attr.h"

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
KYU_MUSTCHECK int guard_token(char buf[65]);

/* Checks HTTP basic credentials against a user name and a crypt(3) hash,
 * remembering (as a keyed SHA-256 digest, never in clear) the last pair
 * that matched: crypt with a modern method costs tens of milliseconds on
 * purpose, and a page makes a request every few seconds. Thread-safe: the
 * server's threads share one, so that a login on one is known to all. */
struct guard_auth;
/* NULL when random bytes for the key cannot be had (errno). */
struct guard_auth *guard_auth_new(const char *user, const char *hash);
void guard_auth_free(struct guard_auth *a);
/* Whether the pair is the last one that matched: one keyed digest and a
 * constant-time comparison, no crypt. What the server checks first, so
 * that a login already made is never slowed by the failure throttle. */
bool guard_auth_cached(struct guard_auth *a, const char *user, const char *password);
/* guard_auth_cached, else crypt. */
bool guard_auth_check(struct guard_auth *a, const char *user, const char *password);

/* Whether hash is a crypt(3) hash of a scheme still fit for passwords:
 * yescrypt ($y$), gost-yescrypt ($gy$), scrypt ($7$), bcrypt ($2b$, $2y$)
 * or SHA-512 ($6$), and one this libcrypt computes. MD5 ($1$), SHA-256
 * ($5$), DES and the others are cheap to try by the billion on a stolen
 * hash. If not, the scheme's prefix ("$1$", or the first two characters
 * of a DES hash) goes into prefix (at least 8 bytes). */
bool guard_hash_is_strong(const char *hash, char *prefix, size_t len);

/* Failed logins, so that guessing costs time, counted two ways:
 *
 * - Per key: who is trying (guard_peer_key: a local client's user id,
 *   which it cannot change, else its address). After GUARD_FAILS_FREE
 *   failures in a row a key must wait, 1 s after the next failure,
 *   doubling up to GUARD_WAIT_MAX; a success clears it. A fixed table:
 *   when it is full, the entry that waits least is reused.
 * - For all keys together, a budget of GUARD_STORM_BURST failures that
 *   comes back at one per GUARD_STORM_EVERY seconds: whoever holds many
 *   keys (addresses, accounts) guesses no faster than that. While it is
 *   spent, a key with a failure on record waits for it; a key without one
 *   does not: a storm of wrong passwords from others never locks out
 *   someone who has not failed (the owner), and each key gets one free
 *   guess at most.
 *
 * The server answers a waiting key 429 without checking its password,
 * so that guessing costs no crypt. Thread-safe. */
#define GUARD_FAILS_FREE 5
#define GUARD_WAIT_MAX 60 /* seconds */
#define GUARD_FAIL_SLOTS 256
#define GUARD_STORM_BURST 10
#define GUARD_STORM_EVERY 5 /* seconds */
struct guard_fails;
struct guard_fails *guard_fails_new(void);
void guard_fails_free(struct guard_fails *f);
/* Seconds the key (bytes, e.g. guard_peer_key's) must still wait at time
 * now (a monotonic second count) by its own count; 0: it may try. */
long guard_fails_wait(struct guard_fails *f, const void *key, size_t len, long now);
/* Seconds the key must wait for the budget of all keys: 0 when some is
 * left or the key has no failure on record. */
long guard_fails_storm_wait(struct guard_fails *f, const void *key, size_t len, long now);
void guard_fails_record(struct guard_fails *f, const void *key, size_t len, long now, bool ok);

/* Who a client is, as a key for guard_fails (up to GUARD_KEY_MAX bytes,
 * returns its length): fd is the connection, peer its address. A client
 * on this host is its user id, which it cannot change: SO_PEERCRED on a
 * Unix socket, the kernel's socket table (sock_diag) for a loopback TCP
 * connection; any address of 127.0.0.0/8 is every local user's, so the
 * address alone would let one user lock out another (by failing from
 * 127.0.0.1) and guess faster (from each address in turn). A loopback
 * client whose owner cannot be found (it closed meanwhile) shares one
 * key with all such. Other clients: their address, an IPv6 one by its
 * /64 (one host has them all). */
#define GUARD_KEY_MAX 16
struct sockaddr;
size_t guard_peer_key(int fd, const struct sockaddr *peer, unsigned char key[GUARD_KEY_MAX]);

/* The connections of the server that have not yet carried a request with
 * the right credentials (or, without a password, one that passed the
 * rules above): a silent or slow client holds one. Each such connection
 * is cheap (a socket, no thread) but the server's connection limit is
 * not, so they are at most max at once: the oldest one beyond that is
 * shut down (its socket, which the server then closes), never one in the
 * middle of a request. A client that cannot prove itself cannot hold more
 * than max of the server's slots; the owner's connection sends its
 * request within milliseconds, faster than others can push it out.
 * Thread-safe: the server's threads share one. */
struct guard_conns;
struct guard_conn;
struct guard_conns *guard_conns_new(unsigned max);
void guard_conns_free(struct guard_conns *c);
/* A new connection on socket fd; evicts as above. NULL: out of memory
 * (the connection is then not tracked). */
struct guard_conn *guard_conns_open(struct guard_conns *c, int fd);
/* In a request (not evicted) or not. */
void guard_conns_busy(struct guard_conns *c, struct guard_conn *e, bool busy);
/* It carried a request that passed: no longer counted nor evicted.
 * Returns whether it was not already. */
bool guard_conns_prove(struct guard_conns *c, struct guard_conn *e);
void guard_conns_close(struct guard_conns *c, struct guard_conn *e);
/* How many connections wait to prove themselves, and how many were shut
 * down for it since the start. */
void guard_conns_counts(struct guard_conns *c, unsigned *unproven, unsigned long *evicted);

/* A crypt(3) hash of password with the library's preferred method and a
 * fresh salt (kyu web --hash-password); NULL and errno on failure. The
 * caller frees it. */
char *guard_hash_password(const char *password);

#endif
