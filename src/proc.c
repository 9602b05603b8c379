#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The child shares our memory and runs until it calls execve, while we
 * wait (CLONE_VM | CLONE_VFORK): what glibc's posix_spawn does, so the
 * cost does not grow with the worker's memory (tests/bench/spawn), but
 * with the user, groups and limits posix_spawn has no attributes for. The
 * child calls only async-signal-safe functions and raw system calls, and
 * never the name service: users and groups were looked up before. */

/* Where the child was when it failed; it writes this and the errno into
 * the arguments it shares with us, then exits. */
enum stage {
	ST_OK,
	ST_SETSID,
	ST_STDIN,
	ST_OUTPUT,
	ST_GROUPS,
	ST_GID,
	ST_LIMIT, /* + DLIM_* */
	ST_NICE = ST_LIMIT + DLIM_N,
	ST_UID,
	ST_CWD,
	ST_EXEC,
};

struct child_args {
	const char *path;
	char *const *argv, *const *envp;
	const char *cwd;
	const struct proc_creds *cr;
	int out_fd;
	/* written by the child, read once it is gone */
	volatile int stage;
	volatile int err;
};

/* The child's stack: one per process, which runs one child at a time (we
 * are suspended until it has called execve or exited). */
#define CHILD_STACK ((size_t)256 * 1024)
static void *child_stack;

__attribute__((noreturn, no_sanitize("address", "undefined"))) static void
fail_at(struct child_args *a, enum stage st)
{
	a->err = errno;
	a->stage = (int)st;
	_exit(127);
}

/* Not instrumented: it runs on its own stack, in a process that shares
 * the sanitizers' state with its parent. */
__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	const struct proc_creds *cr = a->cr;
	struct sigaction dfl;
	sigset_t none;
	int fd;

	/* Every handler back to the default while all signals are blocked (we
	 * blocked them before the clone): none of ours may run in here. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)sigaction(sig, &dfl, NULL);
	if (setsid() < 0)
		fail_at(a, ST_SETSID);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || (fd != STDIN_FILENO && (dup2(fd, STDIN_FILENO) < 0 || close(fd) < 0)))
		fail_at(a, ST_STDIN);
	if (dup2(a->out_fd, STDOUT_FILENO) < 0 || dup2(a->out_fd, STDERR_FILENO) < 0)
		fail_at(a, ST_OUTPUT);
	/* Everything of ours is O_CLOEXEC already; this also covers descriptors
	 * opened by libraries that forget to. */
	(void)close_range(3, ~0U, 0);
	if (cr) {
		const struct domain_ids *ids = cr->ids;
		/* Raw calls: glibc's wrappers would try to change the ids of
		 * every thread of the process, and ours is shared. */
		if (ids && ids->switch_ids) {
			if (syscall(SYS_setgroups, (size_t)ids->n_groups, ids->groups) < 0)
				fail_at(a, ST_GROUPS);
			if (syscall(SYS_setresgid, ids->gid, ids->gid, ids->gid) < 0)
				fail_at(a, ST_GID);
		}
		/* Limits and nice before giving up the privileges that may be
		 * needed to set them. */
		for (int i = 0; cr->limit_set && i < DLIM_N; i++) {
			struct rlimit rl = { cr->limit[i], cr->limit[i] };
			/* At the soft CPU limit the kernel sends SIGXCPU, at the
			 * hard one SIGKILL: a second apart, so that the job (and
			 * its row) sees which limit it ran into. */
			if (i == DLIM_CPU && rl.rlim_max != RLIM_INFINITY)
				rl.rlim_max++;
			if (cr->limit_set[i] && setrlimit(domain_limit_resource(i), &rl) < 0)
				fail_at(a, (enum stage)(ST_LIMIT + i));
		}
		if (cr->set_nice && setpriority(PRIO_PROCESS, 0, cr->nice) < 0)
			fail_at(a, ST_NICE);
		if (cr->umask >= 0)
			umask((mode_t)cr->umask);
		if (ids && ids->switch_ids && syscall(SYS_setresuid, ids->uid, ids->uid, ids->uid) < 0)
			fail_at(a, ST_UID);
	}
	/* As the job's user: a directory it may not enter is its error. */
	if (a->cwd && *a->cwd && chdir(a->cwd) < 0)
		fail_at(a, ST_CWD);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(a->path, a->argv, a->envp);
	fail_at(a, ST_EXEC);
	return 127;
}

static const char *const limit_key[DLIM_N] = {
	"limit_cpu", "limit_as", "limit_nofile", "limit_nproc", "limit_fsize", "limit_core",
};

static void describe(const struct child_args *a, const char *what, char *err, size_t errlen)
{
	const struct proc_creds *cr = a->cr;
	const struct domain_ids *ids = cr ? cr->ids : NULL;
	const char *user = ids && ids->name ? ids->name : "?";
	const char *why = strerror(a->err);

	switch (a->stage) {
	case ST_SETSID:
		snprintf(err, errlen, "cannot start a session: %s", why);
		return;
	case ST_STDIN:
		snprintf(err, errlen, "cannot open /dev/null as stdin: %s", why);
		return;
	case ST_OUTPUT:
		snprintf(err, errlen, "cannot connect the output pipe: %s", why);
		return;
	case ST_GROUPS:
		snprintf(err, errlen, "rule user: cannot set the groups of %s: %s", user, why);
		return;
	case ST_GID:
		snprintf(err, errlen, "rule group: cannot switch to gid %u: %s",
			 ids ? (unsigned)ids->gid : 0U, why);
		return;
	case ST_NICE:
		snprintf(err, errlen, "rule nice: cannot set nice %d: %s", cr ? cr->nice : 0, why);
		return;
	case ST_UID:
		snprintf(err, errlen, "rule user: cannot switch to user %s (uid %u): %s", user,
			 ids ? (unsigned)ids->uid : 0U, why);
		return;
	case ST_CWD:
		snprintf(err, errlen, "cannot change to directory %s: %s", a->cwd,
			 a->err == ENOTDIR ? "not a directory" : why);
		return;
	case ST_EXEC: {
		const char *w = a->err == ENOENT ? "not found" : a->err == EACCES ? "permission denied" : why;
		snprintf(err, errlen, "cannot execute %s: %s", what, w);
		return;
	}
	default:
		if (a->stage >= ST_LIMIT && a->stage < ST_LIMIT + DLIM_N) {
			int i = a->stage - ST_LIMIT;
			snprintf(err, errlen, "rule %s: cannot apply %llu: %s", limit_key[i],
				 cr && cr->limit ? (unsigned long long)cr->limit[i] : 0ULL, why);
			return;
		}
		snprintf(err, errlen, "internal: the child failed at step %d: %s", a->stage, why);
	}
}

int proc_spawn(const struct jobspec *spec, const char *path, const char *cwd,
	       const struct proc_creds *cr, pid_t *ret_pid, int *ret_out, int *exec_errno,
	       char *err, size_t errlen)
{
	struct child_args a = { .path = path, .argv = spec->argv, .envp = spec->envp, .cwd = cwd, .cr = cr };
	sigset_t all, old;
	int pipefd[2] = { -1, -1 };
	pid_t pid;
	int r;

	*exec_errno = 0;
	if (!child_stack) {
		void *s = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
		if (s == MAP_FAILED) {
			r = -errno;
			snprintf(err, errlen, "cannot map a stack for spawning: %s", strerror(errno));
			return r;
		}
		child_stack = s;
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create output pipe: %s", strerror(errno));
		return r;
	}
	/* Only our end is non-blocking: the job sees an ordinary pipe. */
	if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set output pipe non-blocking: %s", strerror(errno));
		goto fail;
	}
	a.out_fd = pipefd[1];
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(child_main, (char *)child_stack + CHILD_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
	r = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(pipefd[1]);
	pipefd[1] = -1;
	if (pid < 0) {
		snprintf(err, errlen, "cannot start a process: %s", strerror(r));
		r = -r;
		goto fail;
	}
	if (a.stage != ST_OK) {
		/* It has exited (or is about to): reap it here, so that no one
		 * else takes it for a job. */
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		describe(&a, spec->argv[0], err, errlen);
		if (a.stage == ST_EXEC)
			*exec_errno = a.err;
		r = -(a.err ? a.err : EIO);
		goto fail;
	}
	*ret_pid = pid;
	*ret_out = pipefd[0];
	return 0;

fail:
	close(pipefd[0]);
	if (pipefd[1] >= 0)
		close(pipefd[1]);
	return r;
}

void proc_kill_group(pid_t pgid, int sig)
{
	if (pgid > 1)
		(void)kill(-pgid, sig);
}
