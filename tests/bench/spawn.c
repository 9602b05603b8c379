/* spawn: what starting one job costs, by method and by the size of the
 * process that starts it.
 *
 *   spawn [-n COUNT] [-m MIB]...
 *
 * For each parent size (MiB of touched heap, default 0 and 256) and each
 * method (fork+exec, vfork+exec, posix_spawn) it starts /bin/true COUNT
 * times, one at a time, waits for each, and prints spawns per second,
 * microseconds per spawn, and self_us: the starting process's own CPU
 * (user + system, not its children's) per spawn, which is what a worker
 * pays whatever the machine's cores do meanwhile. fork copies the page tables of the parent, so its
 * cost grows with the parent; vfork and posix_spawn (CLONE_VFORK in glibc)
 * do not. This is why kyud's workers share their memory with the child
 * as those do (src/worker/proc.c).
 *
 * Two more methods time kyud's own start of a job (everything job_start
 * does before the process runs, without the database): "kyu-plain", a
 * queue without a section (kyud's user, the clean environment, the PATH
 * lookup, proc_spawn); "kyu-domain", a queue whose section sets a user
 * (nobody when run as root, else our own), 6 resource limits, umask, nice
 * and a variable: the user and groups looked up for each start, then set
 * by the child. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/config.h"
#include "common/domain.h"
#include "worker/jobspec.h"
#include "worker/proc.h"

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

/* The queue section kyu-domain starts its jobs under, and kyud's own user. */
static struct kyu_config domain_cfg;
static struct domain_ids self_ids;

static pid_t by_kyu(const struct domain *d)
{
	struct jobspec_input in = { .shell = "/bin/sh", .argv_json = "[\"true\"]", .job_id = "b",
				    .queue = "q", .attempt = 1 };
	struct domain_ids own = { 0 }, *ids = &self_ids;
	struct jobspec spec;
	struct proc_creds cr;
	char err[512], **base, *path;
	int out = -1, status_fd = -1, exec_errno;
	pid_t pid = -1;

	if (d && d->user) {
		if (domain_resolve(d, &own, err, sizeof(err)) < 0) {
			fprintf(stderr, "spawn: %s\n", err);
			return -1;
		}
		ids = &own;
	}
	base = domain_base_env(d, ids, environ);
	in.base_env = base;
	if (jobspec_build(&in, &spec, err, sizeof(err)) < 0) {
		fprintf(stderr, "spawn: %s\n", err);
		goto out;
	}
	path = domain_env_find_program(spec.argv[0], spec.envp);
	cr = (struct proc_creds){ .ids = ids, .umask = d ? d->umask : -1,
				  .set_nice = d && d->key_line[DK_NICE], .nice = d ? d->nice : 0,
				  .limit = d ? d->limit : NULL, .limit_set = d ? d->limit_set : NULL };
	if (path && proc_spawn(&spec, path, d ? "/" : NULL, &cr, &pid, &out, &status_fd, &exec_errno, err,
			       sizeof(err)) < 0) {
		fprintf(stderr, "spawn: %s\n", err);
		pid = -1;
	}
	if (out >= 0)
		close(out);
	if (status_fd >= 0)
		close(status_fd);
	free(path);
	jobspec_free(&spec);
out:
	domain_env_free(base);
	domain_ids_free(&own);
	return pid;
}

static pid_t by_kyu_plain(void)
{
	return by_kyu(NULL);
}

static pid_t by_kyu_domain(void)
{
	return by_kyu(&domain_cfg.domains[0]);
}

static int setup_kyu(void)
{
	char ini[512], err[512];

	if (domain_resolve(NULL, &self_ids, err, sizeof(err)) < 0)
		goto fail;
	/* Only root may switch users: otherwise our own, by name. */
	snprintf(ini, sizeof(ini),
		 "[queue.q]\nuser = %s\nlimit_cpu = 60\nlimit_as = 4G\nlimit_nofile = 256\n"
		 "limit_nproc = 1000\nlimit_fsize = 1G\nlimit_core = 0\numask = 027\nnice = 1\n"
		 "env = BENCH=1\n",
		 geteuid() == 0 ? "nobody" : self_ids.name);
	if (config_parse("bench", ini, strlen(ini), &domain_cfg, err, sizeof(err)) < 0)
		goto fail;
	return 0;
fail:
	fprintf(stderr, "spawn: %s\n", err);
	return -1;
}

static const struct method {
	const char *name;
	pid_t (*start)(void);
} methods[] = {
	{ "fork+exec", by_fork },
	{ "vfork+exec", by_vfork },
	{ "posix_spawn", by_posix_spawn },
	{ "kyu-plain", by_kyu_plain },
	{ "kyu-domain", by_kyu_domain },
};

static double self_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

/* secs: wall time; cpu: our own CPU (not the children's), which is what a
 * worker pays per start whatever the machine's core count. */
static int run(const struct method *m, int count, double *secs, double *cpu)
{
	double t0 = now(), c0 = self_cpu();
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
	*cpu = self_cpu() - c0;
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
	if (setup_kyu() < 0)
		return 1;
	if (nsizes == 0) {
		sizes[nsizes++] = 0;
		sizes[nsizes++] = 256;
	}
	printf("%-12s %8s %8s %10s %10s %10s\n", "method", "rss_MiB", "count", "spawns/s", "us/spawn",
	       "self_us");
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
			double secs, cpu;
			if (run(&methods[i], count, &secs, &cpu) < 0)
				return 1;
			printf("%-12s %8ld %8d %10.0f %10.1f %10.1f\n", methods[i].name, sizes[s], count,
			       count / secs, secs / count * 1e6, cpu / count * 1e6);
		}
		free(ballast);
	}
	return 0;
}
