/* Processes a job left behind after double-forking into a new session are
 * re-parented to the worker (a child subreaper). See orphans.h. */
#include "orphans.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int orphans_kill(bool (*keep)(void *arg, pid_t pid), void *arg)
{
	char path[64], buf[8192];
	ssize_t n;
	int fd, killed = 0;
	char *p, *end;

	/* The worker is single-threaded: its main thread's children are all
	 * of its children. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	for (p = buf;; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 1 && !keep(arg, (pid_t)pid)) {
			/* A process that is still in a running job's process group
			 * belongs to that attempt: keep() says so. Everything else
			 * outlived its attempt. */
			pid_t pg = getpgid((pid_t)pid);
			/* Its whole process group too: a job's shell and what it
			 * started die at once instead of one generation per sweep.
			 * Never our own group, which holds us and our caller. */
			if (pg > 1 && pg != getpgrp())
				(void)kill(-pg, SIGKILL);
			if (kill((pid_t)pid, SIGKILL) == 0)
				killed++;
		}
	}
	return killed;
}

int orphans_start_ticks(pid_t pid, unsigned long long *ticks)
{
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = '\0';
	/* The name (field 2) may hold anything, ')' and spaces included:
	 * count from the last ')'. It is followed by field 3. */
	p = strrchr(buf, ')');
	if (!p)
		return -EINVAL;
	for (field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -EINVAL;
	}
	errno = 0;
	*ticks = strtoull(p + 1, NULL, 10);
	return errno ? -errno : 0;
}

unsigned long long orphans_now_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK); /* from the auxiliary vector: no system call */

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}
