/* Sockets on numeric addresses (net.h). */
#include "net.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"

int net_socket(const char *what, const char *hostport, int type, int flags, bool passive,
	       struct addrinfo **ai, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = type,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	char host[256], port_s[8];
	uint16_t port;
	int fd, r;

	*ai = NULL;
	if (parse_hostport(hostport, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "%s address '%s' is not ADDRESS:PORT", what, hostport);
		return -EINVAL;
	}
	if (passive)
		hints.ai_flags |= AI_PASSIVE;
	snprintf(port_s, sizeof(port_s), "%u", port);
	r = getaddrinfo(host, port_s, &hints, ai);
	if (r != 0) {
		*ai = NULL;
		snprintf(err, errlen, "%s address '%s': %s (a numeric address is required)", what,
			 hostport, gai_strerror(r));
		return -EINVAL;
	}
	fd = socket((*ai)->ai_family, type | SOCK_CLOEXEC | flags, 0);
	if (fd < 0) {
		r = -errno;
		snprintf(err, errlen, "%s socket for %s: %s", type == SOCK_STREAM ? "TCP" : "UDP",
			 hostport, strerror(errno));
		freeaddrinfo(*ai);
		*ai = NULL;
		return r;
	}
	return fd;
}
