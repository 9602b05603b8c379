/* Wake-up hints: UDP datagrams "kyu:QUEUE" that tell the supervisor a job
 * may be due. See wake.h. */
#include "wake.h"

#include <errno.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net.h"
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
	struct addrinfo *ai = NULL;
	int fd, r;

	fd = net_socket("wake-up", hostport, SOCK_DGRAM, listening ? SOCK_NONBLOCK : 0, listening,
			&ai, err, errlen);
	if (fd < 0)
		return fd;
	if (listening)
		r = bind(fd, ai->ai_addr, ai->ai_addrlen);
	else
		r = connect(fd, ai->ai_addr, ai->ai_addrlen);
	if (r < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot %s udp %s: %s", listening ? "listen on" : "send to",
			 hostport, strerror(errno));
		close(fd);
		fd = r;
	}
	freeaddrinfo(ai);
	return fd;
}
