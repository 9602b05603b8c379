/* The dashboard's gatekeeping, without HTTP. See guard.h. */
#include "guard.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

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
	pthread_mutex_t lock; /* over seen and have_seen */
	unsigned char seen[SHA256_DIGEST_SIZE];
	bool have_seen;
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
	pthread_mutex_init(&a->lock, NULL);
	a->user = xstrdup(user);
	a->hash = xstrdup(hash);
	return a;
}

void guard_auth_free(struct guard_auth *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
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

static bool seen_matches(struct guard_auth *a, const unsigned char d[SHA256_DIGEST_SIZE])
{
	unsigned char diff = 0;
	bool have;

	pthread_mutex_lock(&a->lock);
	for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
		diff |= d[i] ^ a->seen[i];
	have = a->have_seen;
	pthread_mutex_unlock(&a->lock);
	return have && diff == 0;
}

bool guard_auth_cached(struct guard_auth *a, const char *user, const char *password)
{
	unsigned char d[SHA256_DIGEST_SIZE];

	if (!user || !password)
		return false;
	digest(a, user, password, d);
	return seen_matches(a, d);
}

bool guard_auth_check(struct guard_auth *a, const char *user, const char *password)
{
	unsigned char d[SHA256_DIGEST_SIZE];
	struct crypt_data *cd;
	const char *h;
	bool ok;

	if (!user || !password)
		return false;
	digest(a, user, password, d);
	if (seen_matches(a, d))
		return true;
	/* About 32 KiB: not on a server thread's stack; one per check, as
	 * the threads check at once. */
	cd = xcalloc(1, sizeof(*cd));
	h = crypt_r(password, a->hash, cd);
	/* A failed crypt returns NULL or a string starting with '*'. */
	ok = h && h[0] != '*' && guard_equal(h, a->hash);
	ok &= guard_equal(user, a->user);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok) {
		pthread_mutex_lock(&a->lock);
		memcpy(a->seen, d, sizeof(d));
		a->have_seen = true;
		pthread_mutex_unlock(&a->lock);
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

/* A key that failed this recently waits for the budget of all keys while
 * it is spent: an owner who mistyped once is not held back for ever by a
 * storm of others' guesses. */
#define STORM_MEMORY 300 /* seconds */

struct guard_fail {
	unsigned char key[GUARD_KEY_MAX];
	size_t len;
	unsigned fails;
	long until; /* may not try before */
	long last;  /* the last failure */
};

struct guard_fails {
	pthread_mutex_t lock;
	/* The budget of all keys as the time at which it is whole again
	 * (a "theoretical arrival time"): each failure moves it
	 * GUARD_STORM_EVERY seconds on from now or from where it was. */
	long storm_full;
	struct guard_fail e[GUARD_FAIL_SLOTS];
};

struct guard_fails *guard_fails_new(void)
{
	struct guard_fails *f = xcalloc(1, sizeof(struct guard_fails));

	pthread_mutex_init(&f->lock, NULL);
	return f;
}

void guard_fails_free(struct guard_fails *f)
{
	if (!f)
		return;
	pthread_mutex_destroy(&f->lock);
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
	struct guard_fail *e;
	long wait;

	pthread_mutex_lock(&f->lock);
	e = fail_find(f, key, len);
	wait = e && e->until > now ? e->until - now : 0;
	pthread_mutex_unlock(&f->lock);
	return wait;
}

long guard_fails_storm_wait(struct guard_fails *f, const void *key, size_t len, long now)
{
	/* Spent: more than BURST - 1 failures' worth ahead of now. */
	const long room = (GUARD_STORM_BURST - 1) * (long)GUARD_STORM_EVERY;
	struct guard_fail *e;
	long wait = 0;

	pthread_mutex_lock(&f->lock);
	e = fail_find(f, key, len);
	if (e && now - e->last < STORM_MEMORY && f->storm_full - now > room)
		wait = f->storm_full - now - room;
	pthread_mutex_unlock(&f->lock);
	return wait;
}

void guard_fails_record(struct guard_fails *f, const void *key, size_t len, long now, bool ok)
{
	struct guard_fail *e;
	unsigned over;
	long wait;

	if (len > sizeof(e->key))
		len = sizeof(e->key);
	pthread_mutex_lock(&f->lock);
	e = fail_find(f, key, len);
	if (ok) {
		if (e)
			memset(e, 0, sizeof(*e));
		goto out;
	}
	f->storm_full = (f->storm_full > now ? f->storm_full : now) + GUARD_STORM_EVERY;
	if (!e) {
		/* A free slot, else the one whose wait ends first: a key
		 * that fails much keeps its place. */
		e = &f->e[0];
		for (size_t i = 0; i < GUARD_FAIL_SLOTS && e->fails; i++)
			if (!f->e[i].fails || f->e[i].until < e->until)
				e = &f->e[i];
		memset(e, 0, sizeof(*e));
		memcpy(e->key, key, len);
		e->len = len;
	}
	e->fails++;
	e->last = now;
	if (e->fails < GUARD_FAILS_FREE)
		goto out;
	over = e->fails - GUARD_FAILS_FREE;
	wait = over < 6 ? 1L << over : GUARD_WAIT_MAX;
	e->until = now + (wait < GUARD_WAIT_MAX ? wait : GUARD_WAIT_MAX);
out:
	pthread_mutex_unlock(&f->lock);
}

/* ---- who the client is */

static bool is_loopback_sa(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr) >>
			24) == 127;
	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *a =
			&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr;
		return IN6_IS_ADDR_LOOPBACK(a) ||
		       (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
	}
	return false;
}

/* The user owning the other end of a loopback TCP connection: the
 * kernel's socket table, asked for the one socket whose own address is
 * the peer's and whose peer is ours (sock_diag, exact lookup; no
 * privilege needed). 0 or -1. */
static int loopback_uid(int fd, const struct sockaddr *peer, uid_t *uid)
{
	struct sockaddr_storage local = { 0 };
	socklen_t llen = sizeof(local);
	struct {
		struct nlmsghdr h;
		struct inet_diag_req_v2 r;
	} req;
	union {
		struct nlmsghdr h;
		char buf[1024];
	} ans;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	struct timeval tv = { .tv_sec = 1 };
	struct nlmsghdr *h;
	ssize_t n;
	int nl, rc = -1;

	if (getsockname(fd, (struct sockaddr *)&local, &llen) < 0 ||
	    local.ss_family != peer->sa_family)
		return -1;
	memset(&req, 0, sizeof(req));
	req.h.nlmsg_len = sizeof(req);
	req.h.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	req.h.nlmsg_flags = NLM_F_REQUEST;
	req.r.sdiag_family = (uint8_t)peer->sa_family;
	req.r.sdiag_protocol = IPPROTO_TCP;
	req.r.idiag_states = ~0U;
	req.r.id.idiag_cookie[0] = req.r.id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (peer->sa_family == AF_INET) {
		const struct sockaddr_in *p = (const void *)peer, *l = (const void *)&local;
		req.r.id.idiag_sport = p->sin_port;
		req.r.id.idiag_dport = l->sin_port;
		memcpy(req.r.id.idiag_src, &p->sin_addr, 4);
		memcpy(req.r.id.idiag_dst, &l->sin_addr, 4);
	} else {
		const struct sockaddr_in6 *p = (const void *)peer, *l = (const void *)&local;
		req.r.id.idiag_sport = p->sin6_port;
		req.r.id.idiag_dport = l->sin6_port;
		memcpy(req.r.id.idiag_src, &p->sin6_addr, 16);
		memcpy(req.r.id.idiag_dst, &l->sin6_addr, 16);
	}
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	/* The kernel answers at once; the bound is for a kernel that does
	 * not (the caller then treats the client as unknown). */
	(void)setsockopt(nl, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		goto out;
	do
		n = recv(nl, ans.buf, sizeof(ans.buf), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		goto out;
	h = &ans.h;
	if (NLMSG_OK(h, (size_t)n) && h->nlmsg_type == SOCK_DIAG_BY_FAMILY &&
	    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct inet_diag_msg))) {
		const struct inet_diag_msg *m = NLMSG_DATA(h);
		*uid = (uid_t)m->idiag_uid;
		rc = 0;
	}
out:
	close(nl);
	return rc;
}

static size_t uid_key(uid_t uid, unsigned char key[GUARD_KEY_MAX])
{
	uint32_t u = (uint32_t)uid;

	key[0] = 'u';
	memcpy(key + 1, &u, sizeof(u));
	return 1 + sizeof(u);
}

size_t guard_peer_key(int fd, const struct sockaddr *peer, unsigned char key[GUARD_KEY_MAX])
{
	struct sockaddr_storage local = { 0 };
	socklen_t llen = sizeof(local);
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	uid_t uid;

	/* The listening socket's family, not the peer's: a Unix socket's
	 * client may have no address at all. */
	if (fd >= 0 && getsockname(fd, (struct sockaddr *)&local, &llen) == 0 &&
	    local.ss_family == AF_UNIX) {
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) == 0)
			return uid_key(cred.uid, key);
		key[0] = 'l';
		return 1;
	}
	if (peer && is_loopback_sa(peer)) {
		if (fd >= 0 && loopback_uid(fd, peer, &uid) == 0)
			return uid_key(uid, key);
		key[0] = 'l'; /* every local client not found: one key */
		return 1;
	}
	if (peer && peer->sa_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)(const void *)peer)->sin_addr, 4);
		return 4;
	}
	if (peer && peer->sa_family == AF_INET6) {
		key[0] = '6';
		memcpy(key + 1, &((const struct sockaddr_in6 *)(const void *)peer)->sin6_addr, 8);
		return 9;
	}
	key[0] = 0;
	return 1;
}

/* ---- connections that have not proved themselves */

struct guard_conn {
	struct guard_conn *prev, *next; /* among the unproven, oldest first */
	int fd;
	bool busy, proven, listed;
};

struct guard_conns {
	pthread_mutex_t lock;
	struct guard_conn *head, *tail;
	unsigned n, max;
	unsigned long evicted;
};

struct guard_conns *guard_conns_new(unsigned max)
{
	struct guard_conns *c = xcalloc(1, sizeof(*c));

	pthread_mutex_init(&c->lock, NULL);
	c->max = max;
	return c;
}

void guard_conns_free(struct guard_conns *c)
{
	if (!c)
		return;
	pthread_mutex_destroy(&c->lock);
	free(c);
}

static void unlist(struct guard_conns *c, struct guard_conn *e)
{
	if (!e->listed)
		return;
	if (e->prev)
		e->prev->next = e->next;
	else
		c->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		c->tail = e->prev;
	e->prev = e->next = NULL;
	e->listed = false;
	c->n--;
}

struct guard_conn *guard_conns_open(struct guard_conns *c, int fd)
{
	struct guard_conn *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->fd = fd;
	pthread_mutex_lock(&c->lock);
	while (c->n >= c->max) {
		struct guard_conn *old = c->head;
		while (old && old->busy)
			old = old->next;
		if (!old)
			break; /* all in a request: they end soon */
		/* The server still owns the socket (it closes it after
		 * guard_conns_close, under this lock's watch): shutting it
		 * down makes it see the end at once, and no other socket can
		 * have taken its number meanwhile. */
		(void)shutdown(old->fd, SHUT_RDWR);
		unlist(c, old);
		c->evicted++;
	}
	e->prev = c->tail;
	if (c->tail)
		c->tail->next = e;
	else
		c->head = e;
	c->tail = e;
	e->listed = true;
	c->n++;
	pthread_mutex_unlock(&c->lock);
	return e;
}

void guard_conns_busy(struct guard_conns *c, struct guard_conn *e, bool busy)
{
	if (!e)
		return;
	pthread_mutex_lock(&c->lock);
	e->busy = busy;
	pthread_mutex_unlock(&c->lock);
}

bool guard_conns_prove(struct guard_conns *c, struct guard_conn *e)
{
	bool first;

	if (!e)
		return false;
	pthread_mutex_lock(&c->lock);
	first = !e->proven;
	e->proven = true;
	unlist(c, e);
	pthread_mutex_unlock(&c->lock);
	return first;
}

void guard_conns_close(struct guard_conns *c, struct guard_conn *e)
{
	if (!e)
		return;
	pthread_mutex_lock(&c->lock);
	unlist(c, e);
	pthread_mutex_unlock(&c->lock);
	free(e);
}

void guard_conns_counts(struct guard_conns *c, unsigned *unproven, unsigned long *evicted)
{
	pthread_mutex_lock(&c->lock);
	*unproven = c->n;
	*evicted = c->evicted;
	pthread_mutex_unlock(&c->lock);
}
