/* spawn: what starting one job costs, by method and by the size of the
 * process that starts it.
 *
 *   spawn [-n COUNT] [-m MIB]...
 *
 * For each parent size (MiB of touched heap, default 0 and 256) and each
 * method (fork+exec, vfork+exec, posix_spawn) it starts /bin/true COUNT
 * times, one at a time, waits for each, and prints spawns per second and
 * microseconds per spawn. fork copies the page tables of the parent, so its
 * cost grows with the parent; vfork and posix_spawn (CLONE_VFORK in glibc)
 * do not. This is why kyud's workers use posix_spawn (src/proc.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static char *const true_argv[] = { "/bin/true", NULL };

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static pid_t by_fork(void)
{
	pid_t p = fork();
	if (p == 0) {
		execve(true_argv[0], true_argv, environ);
		_exit(127);
	}
	return p;
}

static pid_t by_vfork(void)
{
	pid_t p = vfork();
	if (p == 0) {
		execve(true_argv[0], true_argv, environ);
		_exit(127);
	}
	return p;
}

static pid_t by_posix_spawn(void)
{
	pid_t p;
	int e = posix_spawn(&p, true_argv[0], NULL, NULL, true_argv, environ);
	if (e) {
		errno = e;
		return -1;
	}
	return p;
}

static const struct method {
	const char *name;
	pid_t (*start)(void);
} methods[] = {
	{ "fork+exec", by_fork },
	{ "vfork+exec", by_vfork },
	{ "posix_spawn", by_posix_spawn },
};

static int run(const struct method *m, int count, double *secs)
{
	double t0 = now();
	for (int i = 0; i < count; i++) {
		int st;
		pid_t p = m->start();
		if (p < 0) {
			fprintf(stderr, "spawn: %s: %s\n", m->name, strerror(errno));
			return -1;
		}
		while (waitpid(p, &st, 0) < 0 && errno == EINTR)
			;
	}
	*secs = now() - t0;
	return 0;
}

int main(int argc, char **argv)
{
	int count = 2000, nsizes = 0, c;
	long sizes[8];

	while ((c = getopt(argc, argv, "n:m:h")) != -1) {
		switch (c) {
		case 'n':
			count = atoi(optarg);
			break;
		case 'm':
			if (nsizes < 8)
				sizes[nsizes++] = atol(optarg);
			break;
		default:
			fprintf(stderr, "usage: spawn [-n COUNT] [-m MIB]...\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (count <= 0) {
		fprintf(stderr, "spawn: -n must be positive\n");
		return 2;
	}
	if (nsizes == 0) {
		sizes[nsizes++] = 0;
		sizes[nsizes++] = 256;
	}
	printf("%-12s %8s %8s %10s %10s\n", "method", "rss_MiB", "count", "spawns/s", "us/spawn");
	for (int s = 0; s < nsizes; s++) {
		size_t bytes = (size_t)sizes[s] << 20;
		char *ballast = bytes ? malloc(bytes) : NULL;
		if (bytes && !ballast) {
			fprintf(stderr, "spawn: cannot allocate %ld MiB\n", sizes[s]);
			return 1;
		}
		if (ballast)
			memset(ballast, 1, bytes); /* touched: real pages to copy */
		for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
			double secs;
			if (run(&methods[i], count, &secs) < 0)
				return 1;
			printf("%-12s %8ld %8d %10.0f %10.1f\n", methods[i].name, sizes[s], count,
			       count / secs, secs / count * 1e6);
		}
		free(ballast);
	}
	return 0;
}
