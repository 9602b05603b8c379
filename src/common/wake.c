#include "wake.h"

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

bool wake_is_cancel(const char *buf, size_t n)
{
	static const char hint[] = WAKE_PREFIX WAKE_CANCEL;
	size_t len = sizeof(hint) - 1;

	if (n == len + 1 && buf[len] == '\n')
		n--;
	return n == len && memcmp(buf, hint, len) == 0;
}

int wake_parse(const char *buf, size_t n, char *queue, size_t queue_len)
{
	size_t plen = sizeof(WAKE_PREFIX) - 1, qlen;

	if (n < plen || memcmp(buf, WAKE_PREFIX, plen) != 0)
		return -1;
	qlen = n - plen;
	/* A trailing newline is tolerated for hand-made hints (echo | nc -u). */
	if (qlen && buf[n - 1] == '\n')
		qlen--;
	if (qlen > WAKE_QUEUE_MAX || qlen >= queue_len)
		return -1;
	for (size_t i = 0; i < qlen; i++) {
		unsigned char c = (unsigned char)buf[plen + i];
		if (c < 0x20 || c == 0x7f)
			return -1;
	}
	memcpy(queue, buf + plen, qlen);
	queue[qlen] = '\0';
	return 0;
}

int wake_socket(const char *hostport, bool listening, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	char host[256], port_s[8];
	uint16_t port;
	int fd = -1, r;

	if (parse_hostport(hostport, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "wake-up address '%s' is not ADDRESS:PORT", hostport);
		return -EINVAL;
	}
	/* Numeric only: the supervisor binds before anything could resolve a
	 * name, and a sender must reach the very address it binds. */
	if (listening)
		hints.ai_flags |= AI_PASSIVE;
	snprintf(port_s, sizeof(port_s), "%u", port);
	r = getaddrinfo(host, port_s, &hints, &ai);
	if (r != 0) {
		snprintf(err, errlen, "wake-up address '%s': %s (a numeric address is required)",
			 hostport, gai_strerror(r));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC | (listening ? SOCK_NONBLOCK : 0), 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "UDP socket for %s: %s", hostport, strerror(errno));
		goto out;
	}
	if (listening)
		r = bind(fd, ai->ai_addr, ai->ai_addrlen);
	else
		r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (r < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot %s udp %s: %s", listening ? "listen on" : "send to",
			 hostport, strerror(errno));
		close(fd);
		goto out;
	}
	r = fd;
out:
	freeaddrinfo(ai);
	return r;
}
