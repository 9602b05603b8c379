/*
 * stamp: the job command of the latency benchmark (tests/bench/latency.c).
 *
 *   stamp SOCKET TAG
 *
 * Reads CLOCK_MONOTONIC first thing and sends "TAG NANOSECONDS" as one
 * datagram to the UNIX datagram socket SOCKET, where latency is listening.
 * CLOCK_MONOTONIC is one clock for every process on the host, and unlike
 * CLOCK_REALTIME it is never stepped.  The time includes kyud's spawn and
 * this program's exec and dynamic linking: the start of the command as the
 * job sees it.  No libmariadb, nothing but libc.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	struct sockaddr_un sun;
	char buf[128];
	int fd, n;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (argc != 3 || strlen(argv[1]) >= sizeof sun.sun_path) {
		fprintf(stderr, "usage: stamp SOCKET TAG\n");
		return 2;
	}
	n = snprintf(buf, sizeof buf, "%s %lld", argv[2],
		     (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
	if (n < 0 || (size_t)n >= sizeof buf)
		return 2;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, argv[1], strlen(argv[1]) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	if (fd < 0 || sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&sun, sizeof sun) != n) {
		perror("stamp");
		return 1;
	}
	close(fd);
	return 0;
}
