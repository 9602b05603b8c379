#include "orphans.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int orphans_attempt_of(pid_t pid, char *id, size_t idlen, unsigned long *attempt)
{
	char path[64], env[65536];
	size_t got = 0;
	ssize_t n;
	int fd, found = 0;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while (got < sizeof(env) - 1 && (n = read(fd, env + got, sizeof(env) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	env[got] = '\0';
	for (size_t off = 0; off < got; off += strlen(env + off) + 1) {
		const char *v = env + off;
		if (strncmp(v, "KYU_JOB_ID=", 11) == 0) {
			snprintf(id, idlen, "%s", v + 11);
			found |= 1;
		} else if (strncmp(v, "KYU_ATTEMPT=", 12) == 0) {
			*attempt = strtoul(v + 12, NULL, 10);
			found |= 2;
		}
	}
	return found == 3 ? 0 : -1;
}
