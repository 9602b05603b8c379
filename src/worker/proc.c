#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
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
#include <time.h>
#include <unistd.h>

/* The child shares our memory and runs until it calls execve, while we
 * wait (CLONE_VM, as glibc's posix_spawn does), so the cost does not grow
 * with the worker's memory (tests/bench/spawn); but it also sets the user,
 * groups and limits posix_spawn has no attributes for. The child makes
 * only raw system calls and calls into no library state (the sanitizers
 * intercept sigaction and sigprocmask), and never the name service: users
 * and groups were looked up before.
 *
 * Not CLONE_VFORK: once the child has switched to the job's user, any
 * process of that user may SIGSTOP it before it reaches exec, and a vfork
 * parent would then wait for ever, its leases and fences with it. We wait
 * instead, at most SPAWN_TIMEOUT_MS, and kill a child that takes longer
 * (stopped, or stuck on a hung file system). The wait is the kernel's
 * CLONE_CHILD_CLEARTID: when a process that shares its memory with another
 * leaves that memory, by execve or by exit, the kernel zeroes the word it
 * was given and wakes a futex on it. That is the moment a close-on-exec
 * pipe would tell, without the pipe: five system calls fewer per start
 * (pipe2, two closes, poll, read; tests/bench/spawn, notes/DESIGN.md). */
#define SPAWN_TIMEOUT_MS 3000

/* Where the child was when it failed; it writes this and the errno into
 * the arguments it shares with us, then exits. */
enum stage {
	ST_OK,
	ST_SETSID,
	ST_STDIN,
	ST_OUTPUT,
	ST_STATUS,
	ST_GROUPS,
	ST_GID,
	ST_LIMIT, /* + DLIM_* */
	ST_NICE = ST_LIMIT + DLIM_N,
	ST_UID,
	ST_CWD,
	ST_EXEC,
	ST_TIMEOUT, /* set by us: it did not reach exec in time */
};

struct child_args {
	const char *path;
	char *const *argv, *const *envp;
	const char *cwd;
	const struct proc_creds *cr;
	int out_fd;
	int status_fd; /* becomes JOB_STATUS_FD, the one descriptor left open for exec */
	/* written by the child, read once it is gone */
	volatile int stage;
	volatile int err;
};

/* The child's stack: one per process, which runs one child at a time (we
 * wait until it has called execve or exited). Replaced, and the old one
 * left mapped, when a child we gave up on might still be on it. Its lowest
 * word (the stack grows down, far from it) is the child's CLONE_CHILD_CLEARTID
 * word: the kernel writes it when the child finally goes, so it must live
 * in memory that outlives a child we gave up on, which our own stack does not. */
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
/* SIG_DFL for sig, as the kernel takes it (the layout of x86-64 and
 * arm64; no restorer is needed without a handler). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	const struct proc_creds *cr = a->cr;
	struct kernel_sigaction dfl = { SIG_DFL, 0, NULL, 0 };
	unsigned long none = 0;
	int fd;

	/* Every handler back to the default while all signals are blocked (we
	 * blocked them before the clone): none of ours may run in here. */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			(void)syscall(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	if (setsid() < 0)
		fail_at(a, ST_SETSID);
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || (fd != STDIN_FILENO && (dup2(fd, STDIN_FILENO) < 0 || close(fd) < 0)))
		fail_at(a, ST_STDIN);
	if (dup2(a->out_fd, STDOUT_FILENO) < 0 || dup2(a->out_fd, STDERR_FILENO) < 0)
		fail_at(a, ST_OUTPUT);
	/* The status channel (kyu_jobs(7)): dup2 leaves the copy open across
	 * exec; a pipe end that already has the number keeps its
	 * close-on-exec flag, which is cleared instead. */
	if (a->status_fd == JOB_STATUS_FD
		    ? syscall(SYS_fcntl, JOB_STATUS_FD, F_SETFD, 0) < 0
		    : syscall(SYS_dup2, a->status_fd, JOB_STATUS_FD) < 0)
		fail_at(a, ST_STATUS);
	/* Everything of ours is close-on-exec already; this also covers
	 * descriptors opened by libraries that forget to. All above
	 * JOB_STATUS_FD. close_range fails with ENOSYS before Linux 5.9 and
	 * with EPERM under some seccomp profiles: then one close per possible
	 * descriptor, up to the limit no descriptor of ours can reach (raw
	 * calls, as everywhere in here). */
	if (syscall(SYS_close_range, JOB_STATUS_FD + 1U, ~0U, 0U) < 0) {
		struct rlimit nofile;
		unsigned long top = syscall(SYS_getrlimit, RLIMIT_NOFILE, &nofile) == 0 &&
					    nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < (1UL << 30)
				    ? (unsigned long)nofile.rlim_cur
				    : 1UL << 20;
		for (unsigned long f = JOB_STATUS_FD + 1; f < top; f++)
			(void)syscall(SYS_close, (int)f);
	}
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
			struct rlimit rl = { cr->limit[i], cr->limit[i] }, cur;
			if (!cr->limit_set[i])
				continue;
			/* At the soft CPU limit the kernel sends SIGXCPU, at the
			 * hard one SIGKILL: a second apart, so that the job (and
			 * its row) sees which limit it ran into; not above the
			 * hard limit we have, though. */
			if (i == DLIM_CPU && rl.rlim_max != RLIM_INFINITY &&
			    (syscall(SYS_getrlimit, RLIMIT_CPU, &cur) < 0 || rl.rlim_max < cur.rlim_max))
				rl.rlim_max++;
			if (syscall(SYS_setrlimit, domain_limit_resource(i), &rl) < 0)
				fail_at(a, (enum stage)(ST_LIMIT + i));
		}
		if (cr->set_nice && syscall(SYS_setpriority, PRIO_PROCESS, 0, cr->nice) < 0)
			fail_at(a, ST_NICE);
		if (cr->umask >= 0)
			(void)syscall(SYS_umask, (mode_t)cr->umask);
		if (ids && ids->switch_ids && syscall(SYS_setresuid, ids->uid, ids->uid, ids->uid) < 0)
			fail_at(a, ST_UID);
	}
	/* As the job's user: a directory it may not enter is its error. */
	if (a->cwd && *a->cwd && chdir(a->cwd) < 0)
		fail_at(a, ST_CWD);
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
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
	case ST_STATUS:
		snprintf(err, errlen, "cannot connect the status pipe as descriptor %d: %s", JOB_STATUS_FD, why);
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
	case ST_TIMEOUT:
		snprintf(err, errlen, "the new process did not reach exec within %d ms (stopped, or "
			 "a file system not answering): killed", SPAWN_TIMEOUT_MS);
		return;
	case ST_CWD:
		snprintf(err, errlen, "cannot change to directory %s: %s", a->cwd,
			 a->err == ENOTDIR ? "not a directory" : why);
		return;
	case ST_EXEC: {
		const char *w = a->err == ENOENT ? "not found" : a->err == EACCES ? "permission denied" : why;
		/* execve fails with EAGAIN when the new user is over its
		 * RLIMIT_NPROC (setresuid only marks the process). */
		if (a->err == EAGAIN && cr && cr->limit_set && cr->limit_set[DLIM_NPROC]) {
			snprintf(err, errlen, "rule limit_nproc: user %s has more processes than its limit (%llu)", user,
				 (unsigned long long)cr->limit[DLIM_NPROC]);
			return;
		}
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

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until the child has executed or exited (the kernel zeroes *tid
 * and wakes the futex on it), at most SPAWN_TIMEOUT_MS. Returns false on
 * a timeout. Not FUTEX_PRIVATE_FLAG: the kernel's wake is a shared one.
 * Every signal is blocked meanwhile, so no EINTR; EAGAIN means *tid was
 * no longer 1 when the kernel looked. */
static bool wait_exec(int *tid)
{
	int64_t deadline = now_ms() + SPAWN_TIMEOUT_MS;

	while (__atomic_load_n(tid, __ATOMIC_ACQUIRE) != 0) {
		int64_t left = deadline - now_ms();
		struct timespec ts;
		if (left <= 0)
			return false;
		ts.tv_sec = (time_t)(left / 1000);
		ts.tv_nsec = (long)(left % 1000) * 1000000L;
		(void)syscall(SYS_futex, tid, FUTEX_WAIT, 1, &ts, NULL, 0);
	}
	return true;
}

/* Reap a child that failed or that we killed, so that no one else takes
 * it for a job; false if it is not gone within 100 ms (a kill cannot end
 * a process stuck in the kernel), when the SIGCHLD loop will reap it. */
static bool reap(pid_t pid)
{
	for (int i = 0; i < 100; i++) {
		pid_t r = waitpid(pid, NULL, WNOHANG);
		if (r == pid || (r < 0 && errno != EINTR))
			return true;
		(void)nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
	return false;
}

int proc_spawn(const struct jobspec *spec, const char *path, const char *cwd,
	       const struct proc_creds *cr, pid_t *ret_pid, int *ret_out, int *ret_status,
	       int *exec_errno, char *err, size_t errlen)
{
	struct child_args a = { .path = path, .argv = spec->argv, .envp = spec->envp, .cwd = cwd, .cr = cr };
	sigset_t all, old;
	int pipefd[2] = { -1, -1 }, statusfd[2] = { -1, -1 };
	int *tid;
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
	if (pipe2(pipefd, O_CLOEXEC) < 0 || pipe2(statusfd, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
		goto fail;
	}
	/* Only our ends are non-blocking: the job sees ordinary pipes. */
	if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0 || fcntl(statusfd[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set output pipe non-blocking: %s", strerror(errno));
		goto fail;
	}
	a.out_fd = pipefd[1];
	a.status_fd = statusfd[1];
	tid = child_stack;
	*tid = 1;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = clone(child_main, (char *)child_stack + CHILD_STACK, CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, &a,
		    NULL, NULL, tid);
	r = errno;
	/* The child has copies of these: ours must go for the EOF to come. */
	close(pipefd[1]);
	close(statusfd[1]);
	pipefd[1] = statusfd[1] = -1;
	if (pid >= 0 && !wait_exec(tid)) {
		(void)kill(pid, SIGKILL);
		a.stage = ST_TIMEOUT;
		a.err = ETIMEDOUT;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0) {
		snprintf(err, errlen, "cannot start a process: %s", strerror(r));
		r = -r;
		goto fail;
	}
	if (a.stage != ST_OK) {
		/* A child we could not reap may still be on the stack. */
		if (!reap(pid))
			child_stack = NULL;
		describe(&a, spec->argv[0], err, errlen);
		/* A rule that failed is not the program's failure: no shell
		 * fallback for it (see jobspec.h). */
		if (a.stage == ST_EXEC && strncmp(err, "rule ", 5) != 0)
			*exec_errno = a.err;
		r = -(a.err ? a.err : EIO);
		goto fail;
	}
	*ret_pid = pid;
	*ret_out = pipefd[0];
	*ret_status = statusfd[0];
	return 0;

fail:
	for (int i = 0; i < 2; i++) {
		if (pipefd[i] >= 0)
			close(pipefd[i]);
		if (statusfd[i] >= 0)
			close(statusfd[i]);
	}
	return r;
}

bool proc_temporary(int err)
{
	switch (err) {
	case EAGAIN:    /* clone, a user over RLIMIT_NPROC at execve */
	case ENOMEM:    /* clone, mmap, execve */
	case EMFILE:    /* pipe2, open */
	case ENFILE:
	case ENOBUFS:
	case ETIMEDOUT: /* the spawn timeout; a name service that did not answer */
	case EINTR:
	case ETXTBSY:   /* the program is being written right now */
	case EIO:       /* a name service or file system in trouble */
		return true;
	default:
		return false;
	}
}

void proc_kill_group(pid_t pgid, int sig)
{
	if (pgid > 1)
		(void)kill(-pgid, sig);
}
