/*
 * kyu_notify: a MariaDB user-defined function that sends kyu's wake-up
 * datagram, so that a trigger on kyu_jobs can tell kyud at once that a job
 * became due.
 *
 *   kyu_notify(queue)                        -> 1 sent, 0 not sent,
 *   kyu_notify(queue, 'host:port')              -1 target not allowed
 *   kyu_notify(queue, 'host:port', stamp)    -> also 1 when coalesced
 *
 * The datagram is "kyu:" followed by the queue name (0-256 bytes; empty means
 * "any queue"). The target is a numeric address: "a.b.c.d:port" or
 * "[v6addr]:port"; without one it is 127.0.0.1:7711, kyud's default listen
 * address.
 *
 * A wake-up is only a hint (kyud also polls), so this function never waits
 * and never raises an error for a failed send: a trigger that calls it must
 * not make an INSERT fail or stall because kyud is down, the network is
 * unreachable, the socket buffer is full or memory is short. Only a call
 * that can never work (wrong argument count, a target that is not an
 * address) is an error, reported by kyu_notify_init; sql/notify.sql checks
 * its target that way before it creates the triggers.
 *
 * It runs inside mariadbd, on any connection thread at once, and in a
 * trigger the server calls init and deinit for every row, not once per
 * statement. So the per-row path does no DNS, and the sockets are shared by
 * the whole server process (see shared_socket) rather than opened and
 * closed per call: socket() plus close() measured about 8% of the server's
 * CPU time for a single-row INSERT with the trigger.
 *
 * Coalescing. With a third argument, a stamp that names the statement
 * (sql/notify.sql passes CONNECTION_ID() and NOW(6), the start of the
 * statement that fired the trigger), a call whose target and queue were
 * already sent to under the same stamp, less than KYU_NOTIFY_COALESCE_NS
 * ago, sends nothing: an INSERT of 1,000 rows into one queue wakes each
 * daemon once, not 1,000 times. What was sent is remembered per server
 * thread (one statement runs on one thread), KYU_NOTIFY_SENT_MAX pairs of
 * (target, queue) per stamp; further pairs are sent uncoalesced. The time
 * bound keeps a stamp that repeats (a replica applying statements with the
 * primary's timestamps) from silencing later statements for good, and a
 * long INSERT ... SELECT re-sends twice a second at most.
 *
 * Who may be sent to. Any account that may call the function (every
 * account, once it is created) chooses the target and the queue bytes, so
 * the function must not be a way to reach what the account could not:
 * a datagram goes only to a loopback address (127.0.0.0/8, ::1: the
 * daemons of this host) or to a target listed in the file
 * kyu_notify.allow beside kyu_notify.so in the server's plugin directory,
 * one "a.b.c.d:port" or "[v6]:port" a line ('#' starts a comment): the
 * [kyud] advertise addresses of the daemons on other hosts. Whoever may
 * write the plugin directory already decides what code mariadbd runs,
 * so the list is theirs; a table (kyu_daemons, which kyu's own account
 * writes) could not be, and a UDF cannot easily query one. The file is
 * read again when it changes (looked at once a second at most). Another
 * target gets nothing, and the call returns -1.
 *
 * Rate. The server process sends at most KYU_NOTIFY_RATE datagrams a
 * second (a token bucket of as many, shared by all threads); beyond it a
 * call sends nothing and returns 0. A wake-up is a hint: a daemon that
 * misses one finds the job by its poll, and one busy enough to receive
 * thousands a second is awake anyway.
 *
 * Install: see sql/notify.sql.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The UDF types (UDF_INIT, UDF_ARGS, Item_result) are in mariadb_com.h,
 * which mysql.h includes along with the my_bool it needs. */
#include <mysql.h>

#define KYU_EXPORT __attribute__((visibility("default")))

#define KYU_NOTIFY_PREFIX "kyu:"
#define KYU_NOTIFY_PREFIX_LEN (sizeof(KYU_NOTIFY_PREFIX) - 1)
#define KYU_NOTIFY_QUEUE_MAX 256 /* 64 utf8mb4 characters */
#define KYU_NOTIFY_DEFAULT_PORT 7711
/* "[" + the longest IPv6 text with a scope id + "]:65535", rounded up. */
#define KYU_NOTIFY_TARGET_MAX 128

#define KYU_NOTIFY_SENT_MAX 256
#define KYU_NOTIFY_STAMP_MAX 64
#define KYU_NOTIFY_COALESCE_NS 500000000LL

#define KYU_NOTIFY_RATE 2000 /* datagrams a second, and the bucket's size */
#define KYU_NOTIFY_ALLOW_NAME "kyu_notify.allow"
#define KYU_NOTIFY_ALLOW_MAX 256 /* entries; the rest of a longer file is ignored */

/* The server hands init a message buffer of MYSQL_ERRMSG_SIZE bytes. */
#define KYU_NOTIFY_MSG_MAX MYSQL_ERRMSG_SIZE

struct kyu_target {
	struct sockaddr_storage addr;
	socklen_t len;
};

struct kyu_notify_state {
	/* The target when it is known for the whole statement: the default,
	 * or a constant second argument (the trigger's case). */
	bool fixed;
	struct kyu_target target;
	bool target_allowed;
	/* A target that varies per row is parsed again only when its text
	 * changes. last_ok < 0: nothing cached yet. */
	int last_ok;
	size_t last_len;
	char last[KYU_NOTIFY_TARGET_MAX];
	struct kyu_target last_target;
	bool last_allowed;
	char payload[KYU_NOTIFY_PREFIX_LEN + KYU_NOTIFY_QUEUE_MAX];
};

/* What this server thread sent under its current stamp: the key of each
 * (target text, queue) pair (checked before the target is parsed, so that
 * a coalesced call costs a hash) (a 64-bit hash: two pairs of one statement that
 * collide, odds about n^2 / 2^65, cost one datagram) and when. */
struct kyu_sent {
	char stamp[KYU_NOTIFY_STAMP_MAX];
	size_t stamp_len;
	int n;
	struct {
		uint64_t key;
		long long at_ns;
	} e[KYU_NOTIFY_SENT_MAX];
};

static __thread struct kyu_sent thread_sent;

KYU_EXPORT my_bool kyu_notify_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
KYU_EXPORT long long kyu_notify(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error);
KYU_EXPORT void kyu_notify_deinit(UDF_INIT *initid);

static void default_target(struct kyu_target *ret)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&ret->addr;

	memset(ret, 0, sizeof(*ret));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(KYU_NOTIFY_DEFAULT_PORT);
	ret->len = sizeof(*sin);
}

/* Parses "a.b.c.d:port" or "[v6]:port" (text of length len, not
 * NUL-terminated). Numeric only: AI_NUMERICHOST keeps getaddrinfo from
 * consulting DNS or /etc/hosts. Returns 0 or -EINVAL. */
static int parse_target(const char *text, size_t len, struct kyu_target *ret)
{
	char buf[KYU_NOTIFY_TARGET_MAX];
	char *host, *port, *end;
	struct addrinfo hints, *res = NULL;
	unsigned long p;

	if (len == 0 || len >= sizeof(buf) || memchr(text, '\0', len))
		return -EINVAL;
	memcpy(buf, text, len);
	buf[len] = '\0';

	if (buf[0] == '[') {
		host = buf + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		*end = '\0';
		port = end + 2;
	} else {
		end = strrchr(buf, ':');
		/* An IPv6 address needs brackets: "::1:7711" is ambiguous. */
		if (!end || memchr(buf, ':', (size_t)(end - buf)))
			return -EINVAL;
		*end = '\0';
		host = buf;
		port = end + 1;
	}
	if (*host == '\0' || *port < '0' || *port > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (*end != '\0' || errno || p == 0 || p > 65535)
		return -EINVAL;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_DGRAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if (getaddrinfo(host, port, &hints, &res) != 0 || !res)
		return -EINVAL;
	if ((res->ai_family != AF_INET && res->ai_family != AF_INET6) ||
	    res->ai_addrlen > sizeof(ret->addr)) {
		freeaddrinfo(res);
		return -EINVAL;
	}
	memset(ret, 0, sizeof(*ret));
	memcpy(&ret->addr, res->ai_addr, res->ai_addrlen);
	ret->len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* One unconnected, non-blocking UDP socket per address family for the
 * whole server process, made on first use and closed when the server
 * unloads the library (DROP FUNCTION, shutdown), which it does only once no
 * call is running. Concurrent sendto() calls on one UDP socket are safe, and
 * a loopback datagram leaves the sender's buffer as soon as it is queued at
 * the receiver, so the threads do not hold each other up. */
static int shared_fd[2] = { -1, -1 };

/* The socket for the family; -1 if it cannot be had (no IPv6 on this host,
 * out of descriptors): the caller just does not send. */
static int shared_socket(int family)
{
	int *slot = &shared_fd[family == AF_INET6];
	int fd = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
	int expected = -1;

	if (fd >= 0)
		return fd;
	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* Two threads may race here; the loser keeps the winner's socket. */
	if (!__atomic_compare_exchange_n(slot, &expected, fd, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		close(fd);
		return expected;
	}
	return fd;
}

__attribute__((destructor)) static void kyu_notify_unload(void)
{
	for (size_t i = 0; i < 2; i++) {
		if (shared_fd[i] >= 0)
			close(shared_fd[i]);
		shared_fd[i] = -1;
	}
}

static bool is_loopback(const struct kyu_target *t)
{
	if (t->addr.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&t->addr;
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (t->addr.ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&t->addr;
		if (IN6_IS_ADDR_LOOPBACK(&a->sin6_addr))
			return true;
		return IN6_IS_ADDR_V4MAPPED(&a->sin6_addr) && a->sin6_addr.s6_addr[12] == 127;
	}
	return false;
}

static bool same_target(const struct kyu_target *a, const struct kyu_target *b)
{
	if (a->addr.ss_family != b->addr.ss_family)
		return false;
	if (a->addr.ss_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)&a->addr;
		const struct sockaddr_in *y = (const struct sockaddr_in *)&b->addr;
		return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	} else {
		const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a->addr;
		const struct sockaddr_in6 *y = (const struct sockaddr_in6 *)&b->addr;
		return x->sin6_port == y->sin6_port && x->sin6_scope_id == y->sin6_scope_id &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
	}
}

/* The allow list and the token bucket: process-wide, under one lock
 * (held for a few comparisons; loopback targets skip the list). */
static pthread_mutex_t allow_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	bool have_path;
	char path[4096];
	long long checked_ns; /* when the file was last looked at */
	struct stat seen;     /* as it was then (st_ino 0: absent) */
	int n;
	struct kyu_target e[KYU_NOTIFY_ALLOW_MAX];
	/* The bucket: tokens as of refilled_ns. */
	double tokens;
	long long refilled_ns;
} g;

static long long now_ns(void);

/* Reads the allow file again into g (the lock held). */
static void allow_load(void)
{
	char line[KYU_NOTIFY_TARGET_MAX + 64];
	FILE *f = fopen(g.path, "re");

	g.n = 0;
	if (!f)
		return;
	while (g.n < KYU_NOTIFY_ALLOW_MAX && fgets(line, sizeof(line), f)) {
		char *p = line, *end;
		line[strcspn(line, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		/* A bad line allows nothing; the others still count. */
		if (end > p && parse_target(p, (size_t)(end - p), &g.e[g.n]) == 0)
			g.n++;
	}
	fclose(f);
}

/* The lock held: the list as the file is now, looked at once a second. */
static void allow_refresh(void)
{
	long long now = now_ns();
	struct stat st;

	if (!g.have_path) {
		Dl_info info;
		const char *slash;
		g.have_path = true;
		g.path[0] = '\0';
		if (dladdr((void *)&is_loopback, &info) && info.dli_fname &&
		    (slash = strrchr(info.dli_fname, '/')) &&
		    (size_t)(slash - info.dli_fname) + sizeof("/" KYU_NOTIFY_ALLOW_NAME) <=
			    sizeof(g.path))
			snprintf(g.path, sizeof(g.path), "%.*s/%s", (int)(slash - info.dli_fname),
				 info.dli_fname, KYU_NOTIFY_ALLOW_NAME);
		g.checked_ns = now - 2000000000LL;
	}
	if (!g.path[0] || now - g.checked_ns < 1000000000LL)
		return;
	g.checked_ns = now;
	if (stat(g.path, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == g.seen.st_ino && st.st_dev == g.seen.st_dev &&
	    st.st_size == g.seen.st_size && st.st_mtim.tv_sec == g.seen.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == g.seen.st_mtim.tv_nsec)
		return;
	g.seen = st;
	allow_load();
}

static bool allowed(const struct kyu_target *t)
{
	bool ok = false;

	if (is_loopback(t))
		return true;
	pthread_mutex_lock(&allow_lock);
	allow_refresh();
	for (int i = 0; i < g.n && !ok; i++)
		ok = same_target(&g.e[i], t);
	pthread_mutex_unlock(&allow_lock);
	return ok;
}

/* Takes a token from the process's bucket; false when there is none. */
static bool take_token(void)
{
	long long now = now_ns();
	bool ok;

	pthread_mutex_lock(&allow_lock);
	if (g.refilled_ns == 0) {
		g.tokens = KYU_NOTIFY_RATE;
	} else if (now > g.refilled_ns) {
		g.tokens += (double)(now - g.refilled_ns) * KYU_NOTIFY_RATE / 1e9;
		if (g.tokens > KYU_NOTIFY_RATE)
			g.tokens = KYU_NOTIFY_RATE;
	}
	g.refilled_ns = now;
	ok = g.tokens >= 1.0;
	if (ok)
		g.tokens -= 1.0;
	pthread_mutex_unlock(&allow_lock);
	return ok;
}

/* The target for this row, or NULL when there is none usable (*denied:
 * because it is not allowed). */
static const struct kyu_target *row_target(struct kyu_notify_state *st, UDF_ARGS *args,
					   bool *denied)
{
	const char *text;
	size_t len;

	*denied = false;
	if (st->fixed) {
		*denied = !st->target_allowed;
		return *denied ? NULL : &st->target;
	}
	text = args->args[1];
	len = args->lengths[1];
	/* A NULL target means the default, like leaving it out. */
	if (!text)
		return &st->target;
	if (st->last_ok < 0 || len != st->last_len || memcmp(text, st->last, len) != 0) {
		if (len >= sizeof(st->last)) {
			st->last_ok = -1;
			return NULL;
		}
		memcpy(st->last, text, len);
		st->last_len = len;
		st->last_ok = parse_target(text, len, &st->last_target) == 0;
		if (st->last_ok)
			st->last_allowed = allowed(&st->last_target);
	}
	if (st->last_ok > 0 && !st->last_allowed) {
		*denied = true;
		return NULL;
	}
	return st->last_ok > 0 ? &st->last_target : NULL;
}

my_bool kyu_notify_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
	struct kyu_notify_state *st;

	if (args->arg_count < 1 || args->arg_count > 3) {
		snprintf(message, KYU_NOTIFY_MSG_MAX,
			 "kyu_notify(queue [, 'host:port' [, stamp]]) takes 1 to 3 arguments");
		return 1;
	}
	/* The queue may be any type (the server converts it); the target
	 * must be text, so that a port number alone is caught here. */
	args->arg_type[0] = STRING_RESULT;
	if (args->arg_count == 3)
		args->arg_type[2] = STRING_RESULT;
	if (args->arg_count >= 2 && args->arg_type[1] != STRING_RESULT) {
		snprintf(message, KYU_NOTIFY_MSG_MAX,
			 "kyu_notify: target must be a string 'host:port'");
		return 1;
	}

	initid->maybe_null = 0;
	initid->const_item = 0;
	initid->ptr = NULL;
	/* Out of memory: not worth failing the INSERT over; the calls
	 * return 0. */
	st = calloc(1, sizeof(*st));
	if (!st)
		return 0;
	st->last_ok = -1;
	memcpy(st->payload, KYU_NOTIFY_PREFIX, KYU_NOTIFY_PREFIX_LEN);
	default_target(&st->target);
	st->fixed = true;

	/* At init time, args->args[i] is set only for constant arguments:
	 * a literal target is checked (and parsed) once, here. */
	if (args->arg_count >= 2) {
		if (args->args[1]) {
			if (parse_target(args->args[1], args->lengths[1], &st->target) < 0) {
				snprintf(message, KYU_NOTIFY_MSG_MAX,
					 "kyu_notify: bad target '%.*s': want a.b.c.d:port or [v6]:port",
					 (int)(args->lengths[1] > 64 ? 64 : args->lengths[1]),
					 args->args[1]);
				free(st);
				return 1;
			}
		} else {
			st->fixed = false;
		}
	}
	/* A target that is not allowed is not an error either: a trigger
	 * must not fail the INSERT when the list changes; the calls return
	 * -1, which sql/notify.sql checks when it installs. Failure to get
	 * a socket: the calls return 0. */
	if (st->fixed) {
		st->target_allowed = allowed(&st->target);
		shared_socket(st->target.addr.ss_family);
	}

	initid->ptr = (char *)st;
	return 0;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Whether this row's (target, queue) was sent under its stamp lately;
 * if not, it is recorded as sent now (the caller sends). Without a usable
 * stamp, nothing is coalesced. */
static bool already_sent(UDF_ARGS *args, const char *queue, size_t qlen)
{
	struct kyu_sent *s = &thread_sent;
	const char *stamp;
	size_t slen;
	uint64_t key;
	long long now;

	if (args->arg_count < 3 || !(stamp = args->args[2]))
		return false;
	slen = args->lengths[2];
	if (slen == 0 || slen > sizeof(s->stamp))
		return false;
	if (slen != s->stamp_len || memcmp(stamp, s->stamp, slen) != 0) {
		memcpy(s->stamp, stamp, slen);
		s->stamp_len = slen;
		s->n = 0;
	}
	/* The length keeps ("ab", "c") and ("a", "bc") apart. */
	key = fnv1a(0xcbf29ce484222325ULL, &qlen, sizeof(qlen));
	key = fnv1a(key, queue ? queue : "", qlen);
	if (args->args[1])
		key = fnv1a(key, args->args[1], args->lengths[1]);
	now = now_ns();
	for (int i = 0; i < s->n; i++) {
		if (s->e[i].key != key)
			continue;
		if (now - s->e[i].at_ns < KYU_NOTIFY_COALESCE_NS)
			return true;
		s->e[i].at_ns = now;
		return false;
	}
	if (s->n < KYU_NOTIFY_SENT_MAX) {
		s->e[s->n].key = key;
		s->e[s->n].at_ns = now;
		s->n++;
	}
	return false;
}

/* Sends this row's datagram; returns 1 if the kernel took it (or it was
 * sent for this statement already), else 0. */
static long long notify_row(struct kyu_notify_state *st, UDF_ARGS *args)
{
	const struct kyu_target *t;
	const char *queue = args->args[0];
	size_t qlen = queue ? args->lengths[0] : 0;
	size_t n;
	ssize_t sent;
	bool denied;
	int fd;

	/* kyud knows queues of up to 256 bytes (64 characters) without NUL.
	 * A longer name cannot be in the column; a truncated one would name
	 * another queue: ask for "any queue" instead, which still wakes the
	 * right daemon. */
	if (qlen > KYU_NOTIFY_QUEUE_MAX || (qlen && memchr(queue, '\0', qlen)))
		qlen = 0;
	if (already_sent(args, queue, qlen))
		return 1;
	t = row_target(st, args, &denied);
	if (!t)
		return denied ? -1 : 0;
	fd = shared_socket(t->addr.ss_family);
	if (fd < 0 || !take_token())
		return 0;
	if (qlen)
		memcpy(st->payload + KYU_NOTIFY_PREFIX_LEN, queue, qlen);
	n = KYU_NOTIFY_PREFIX_LEN + qlen;

	do
		sent = sendto(fd, st->payload, n, MSG_DONTWAIT | MSG_NOSIGNAL,
			      (const struct sockaddr *)&t->addr, t->len);
	while (sent < 0 && errno == EINTR);
	return sent == (ssize_t)n;
}

long long kyu_notify(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error)
{
	struct kyu_notify_state *st = (struct kyu_notify_state *)initid->ptr;
	int saved_errno = errno;
	long long ret;

	(void)error;
	*is_null = 0;
	if (!st)
		return 0;
	ret = notify_row(st, args);
	/* The server's thread should not see our failures in errno. */
	errno = saved_errno;
	return ret;
}

void kyu_notify_deinit(UDF_INIT *initid)
{
	struct kyu_notify_state *st = (struct kyu_notify_state *)initid->ptr;

	free(st);
	initid->ptr = NULL;
}
