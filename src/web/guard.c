#include "guard.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>

#include <nettle/sha2.h>

#include "common/util.h"

bool guard_equal(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned char d = la != lb;

	/* Walk all of b whatever a is, reading a only within its bounds. */
	for (size_t i = 0; i < lb; i++)
		d |= (unsigned char)(b[i] ^ (i < la ? a[i] : 0));
	return d == 0;
}

/* host without its port: "[::1]:80" -> "::1", "a:80" -> "a". */
static int host_part(const char *host, char *buf, size_t len)
{
	const char *end;

	if (host[0] == '[') {
		end = strchr(host, ']');
		if (!end || (end[1] && end[1] != ':'))
			return -EINVAL;
		host++;
	} else {
		end = strchr(host, ':');
		if (!end)
			end = host + strlen(host);
	}
	if ((size_t)(end - host) >= len || end == host)
		return -EINVAL;
	memcpy(buf, host, (size_t)(end - host));
	buf[end - host] = '\0';
	return 0;
}

bool guard_host_is_local(const char *host)
{
	char h[256];

	if (!host || host_part(host, h, sizeof(h)) < 0)
		return false;
	if (strcasecmp(h, "localhost") == 0)
		return true;
	/* Loopback only: a browser that names another address reached the
	 * dashboard through something that forwards it beyond this host. */
	return guard_addr_is_loopback(h);
}

bool guard_is_proxied(const char *(*lookup)(void *ctx, const char *name), void *ctx)
{
	static const char *const names[] = { "Forwarded", "X-Forwarded-For", "X-Forwarded-Host",
					     "X-Real-IP", "Via" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (lookup(ctx, names[i]))
			return true;
	return false;
}

bool guard_origin_matches(const char *origin, const char *host)
{
	const char *rest;

	if (!origin)
		return true;
	if (!host)
		return false;
	if (strncmp(origin, "http://", 7) == 0)
		rest = origin + 7;
	else if (strncmp(origin, "https://", 8) == 0)
		rest = origin + 8;
	else
		return false; /* "null" (a sandboxed frame, a file: page) and others */
	return strcasecmp(rest, host) == 0;
}

bool guard_addr_is_loopback(const char *addr)
{
	struct in_addr v4;
	struct in6_addr v6;

	if (inet_pton(AF_INET, addr, &v4) == 1)
		return (ntohl(v4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &v6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&v6);
	return false;
}

static int random_bytes(unsigned char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(buf + got, len - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		got += (size_t)n;
	}
	return 0;
}

int guard_token(char buf[65])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[32];
	int r = random_bytes(raw, sizeof(raw));

	if (r < 0)
		return r;
	for (size_t i = 0; i < sizeof(raw); i++) {
		buf[2 * i] = hex[raw[i] >> 4];
		buf[2 * i + 1] = hex[raw[i] & 15];
	}
	buf[64] = '\0';
	return 0;
}

struct guard_auth {
	char *user, *hash;
	unsigned char key[32];
	unsigned char seen[SHA256_DIGEST_SIZE];
	bool have_seen;
	struct crypt_data cd; /* about 32 KiB: not on a thread's stack */
};

struct guard_auth *guard_auth_new(const char *user, const char *hash)
{
	struct guard_auth *a = xcalloc(1, sizeof(*a));
	int r = random_bytes(a->key, sizeof(a->key));

	if (r < 0) {
		free(a);
		errno = -r;
		return NULL;
	}
	a->user = xstrdup(user);
	a->hash = xstrdup(hash);
	return a;
}

void guard_auth_free(struct guard_auth *a)
{
	if (!a)
		return;
	free(a->user);
	free(a->hash);
	free(a);
}

static void digest(const struct guard_auth *a, const char *user, const char *password,
		   unsigned char out[SHA256_DIGEST_SIZE])
{
	struct sha256_ctx c;

	sha256_init(&c);
	sha256_update(&c, sizeof(a->key), a->key);
	sha256_update(&c, strlen(user) + 1, (const uint8_t *)user);
	sha256_update(&c, strlen(password), (const uint8_t *)password);
	sha256_digest(&c, SHA256_DIGEST_SIZE, out);
}

bool guard_auth_check(struct guard_auth *a, const char *user, const char *password)
{
	unsigned char d[SHA256_DIGEST_SIZE], diff = 0;
	const char *h;
	bool ok;

	if (!user || !password)
		return false;
	digest(a, user, password, d);
	if (a->have_seen) {
		for (size_t i = 0; i < sizeof(d); i++)
			diff |= d[i] ^ a->seen[i];
		if (diff == 0)
			return true;
	}
	memset(&a->cd, 0, sizeof(a->cd));
	h = crypt_r(password, a->hash, &a->cd);
	/* A failed crypt returns NULL or a string starting with '*'. */
	ok = h && h[0] != '*' && guard_equal(h, a->hash);
	ok &= guard_equal(user, a->user);
	if (ok) {
		memcpy(a->seen, d, sizeof(d));
		a->have_seen = true;
	}
	return ok;
}

char *guard_hash_password(const char *password)
{
	char *salt = crypt_gensalt_ra(NULL, 0, NULL, 0);
	struct crypt_data *cd;
	char *out = NULL;
	const char *h;

	if (!salt)
		return NULL;
	cd = xcalloc(1, sizeof(*cd));
	h = crypt_r(password, salt, cd);
	if (h && h[0] != '*')
		out = xstrdup(h);
	else
		errno = EINVAL;
	free(cd);
	free(salt);
	return out;
}

bool guard_hash_is_strong(const char *hash, char *prefix, size_t len)
{
	static const char *const strong[] = { "$y$", "$gy$", "$7$", "$2b$", "$2y$", "$6$" };
	const char *end;

	for (size_t i = 0; i < sizeof(strong) / sizeof(strong[0]); i++)
		if (strncmp(hash, strong[i], strlen(strong[i])) == 0)
			/* Also what this libcrypt can compute: a hash it
			 * cannot would refuse every password. */
			return crypt_checksalt(hash) == CRYPT_SALT_OK;
	end = hash[0] == '$' ? strchr(hash + 1, '$') : NULL;
	snprintf(prefix, len, "%.*s", end ? (int)(end - hash + 1) : 2, hash);
	return false;
}

struct guard_fail {
	unsigned char key[16];
	size_t len;
	unsigned fails;
	long until; /* may not try before */
};

struct guard_fails {
	struct guard_fail e[GUARD_FAIL_SLOTS];
};

struct guard_fails *guard_fails_new(void)
{
	return xcalloc(1, sizeof(struct guard_fails));
}

void guard_fails_free(struct guard_fails *f)
{
	free(f);
}

static struct guard_fail *fail_find(struct guard_fails *f, const void *key, size_t len)
{
	if (len > sizeof(f->e[0].key))
		len = sizeof(f->e[0].key);
	for (size_t i = 0; i < GUARD_FAIL_SLOTS; i++)
		if (f->e[i].fails && f->e[i].len == len && memcmp(f->e[i].key, key, len) == 0)
			return &f->e[i];
	return NULL;
}

long guard_fails_wait(struct guard_fails *f, const void *key, size_t len, long now)
{
	struct guard_fail *e = fail_find(f, key, len);

	return e && e->until > now ? e->until - now : 0;
}

void guard_fails_record(struct guard_fails *f, const void *key, size_t len, long now, bool ok)
{
	struct guard_fail *e = fail_find(f, key, len);
	unsigned over;
	long wait;

	if (len > sizeof(e->key))
		len = sizeof(e->key);
	if (ok) {
		if (e)
			memset(e, 0, sizeof(*e));
		return;
	}
	if (!e) {
		/* A free slot, else the one whose wait ends first: an
		 * address that fails much keeps its place. */
		e = &f->e[0];
		for (size_t i = 0; i < GUARD_FAIL_SLOTS && e->fails; i++)
			if (!f->e[i].fails || f->e[i].until < e->until)
				e = &f->e[i];
		memset(e, 0, sizeof(*e));
		memcpy(e->key, key, len);
		e->len = len;
	}
	e->fails++;
	if (e->fails < GUARD_FAILS_FREE)
		return;
	over = e->fails - GUARD_FAILS_FREE;
	wait = over < 6 ? 1L << over : GUARD_WAIT_MAX;
	e->until = now + (wait < GUARD_WAIT_MAX ? wait : GUARD_WAIT_MAX);
}
