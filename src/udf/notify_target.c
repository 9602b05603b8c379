/*
 * notify_target: a kyu_notify target parsed and sent to (notify_target.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "notify_target.h"

void notify_default_targets(struct kyu_target *v4, struct kyu_target *v6)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&v4->addr;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&v6->addr;

	memset(v4, 0, sizeof(*v4));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin->sin_port = htons(KYU_NOTIFY_DEFAULT_PORT);
	v4->len = sizeof(*sin);
	memset(v6, 0, sizeof(*v6));
	sin6->sin6_family = AF_INET6;
	sin6->sin6_addr = in6addr_loopback;
	sin6->sin6_port = htons(KYU_NOTIFY_DEFAULT_PORT);
	v6->len = sizeof(*sin6);
}

/* Numeric only: AI_NUMERICHOST keeps getaddrinfo from
 * consulting DNS or /etc/hosts. Returns 0 or -EINVAL. */
int notify_parse_target(const char *text, size_t len, struct kyu_target *ret)
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
int notify_socket(int family)
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

/* Sends one datagram; true if the kernel took it. */
bool notify_send(const struct kyu_target *t, const char *payload, size_t n)
{
	int fd = notify_socket(t->addr.ss_family);
	ssize_t sent;

	if (fd < 0)
		return false;
	do
		sent = sendto(fd, payload, n, MSG_DONTWAIT | MSG_NOSIGNAL,
			      (const struct sockaddr *)&t->addr, t->len);
	while (sent < 0 && errno == EINTR);
	return sent == (ssize_t)n;
}

bool notify_same_target(const struct kyu_target *a, const struct kyu_target *b)
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

void notify_sockets_close(void)
{
	for (size_t i = 0; i < 2; i++) {
		if (shared_fd[i] >= 0)
			close(shared_fd[i]);
		shared_fd[i] = -1;
	}
}
