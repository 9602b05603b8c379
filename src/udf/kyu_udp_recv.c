/*
 * kyu_udp_recv: a test helper that prints the UDP datagrams it receives.
 *
 *   kyu_udp_recv [-b ADDR] [-p PORT] [-n COUNT] [-t SECONDS]
 *
 * Binds ADDR (numeric, default 127.0.0.1) and PORT (default 0: any free
 * port), prints "port N" as its first line, then one line per datagram
 * (bytes outside printable ASCII, and the backslash, as \xNN). Exits 0 after
 * COUNT datagrams (default: no limit) or when SECONDS have passed (default
 * 60), so that a test that dies cannot leave it behind for long.
 * Exits 2 on a usage error, 1 on a socket error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long number(const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > max) {
		fprintf(stderr, "kyu_udp_recv: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	const char *addr = "127.0.0.1", *port = "0";
	long count = -1, seconds = 60, got = 0;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE };
	struct addrinfo *ai;
	struct sockaddr_storage ss;
	socklen_t sslen = sizeof(ss);
	char host[NI_MAXHOST], serv[NI_MAXSERV];
	unsigned char buf[65536];
	long long deadline;
	int c, fd, rc;

	while ((c = getopt(argc, argv, "b:p:n:t:")) != -1) {
		switch (c) {
		case 'b':
			addr = optarg;
			break;
		case 'p':
			port = optarg;
			number(optarg, 65535);
			break;
		case 'n':
			count = number(optarg, 1000000000);
			break;
		case 't':
			seconds = number(optarg, 86400);
			break;
		default:
			fprintf(stderr,
				"usage: kyu_udp_recv [-b ADDR] [-p PORT] [-n COUNT] [-t SECONDS]\n");
			return 2;
		}
	}
	rc = getaddrinfo(addr, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "kyu_udp_recv: %s: %s\n", addr, gai_strerror(rc));
		return 2;
	}
	fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 ||
	    getsockname(fd, (struct sockaddr *)&ss, &sslen) < 0 ||
	    getnameinfo((struct sockaddr *)&ss, sslen, host, sizeof(host), serv, sizeof(serv),
			NI_NUMERICHOST | NI_NUMERICSERV)) {
		fprintf(stderr, "kyu_udp_recv: %s port %s: %s\n", addr, port, strerror(errno));
		return 1;
	}
	freeaddrinfo(ai);
	printf("port %s\n", serv);
	fflush(stdout);

	deadline = now_ms() + seconds * 1000;
	while (count < 0 || got < count) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		long long left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			break;
		rc = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
		if (rc < 0 && errno != EINTR) {
			perror("kyu_udp_recv: poll");
			return 1;
		}
		if (rc <= 0)
			continue;
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("kyu_udp_recv: recv");
			return 1;
		}
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] >= 0x20 && buf[i] < 0x7f && buf[i] != '\\')
				putchar(buf[i]);
			else
				printf("\\x%02x", buf[i]);
		}
		putchar('\n');
		fflush(stdout);
		got++;
	}
	close(fd);
	return 0;
}
