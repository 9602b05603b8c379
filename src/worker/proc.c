/* Start one job process (proc_start, without waiting for its exec; or
 * proc_spawn, which waits). See proc.h. */
#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

/* The child shares our memory and runs until it calls execve (CLONE_VM,
 * as glibc's posix_spawn does), so the cost does not grow with the
 * worker's memory (tests/bench/spawn); but it also sets the user, groups
 * and limits posix_spawn has no attributes for. It makes only raw system
 * calls and calls into no library state (the sanitizers intercept
 * sigaction and sigprocmask), and never the name service: users and
 * groups were looked up before.
 *
 * We do not wait for it (proc_start). posix_spawn's vfork puts the parent
 * to sleep until the child has called execve, and the first versions of
 * this file waited the same way: on a busy worker that sleep and its
 * wake-up were an eighth of the worker's own CPU per job, and the worker
 * stood still meanwhile, however many cores were idle (notes/DESIGN.md,
 * "Where a worker's time goes"). So everything the child reads is copied
 * into an allocation of its own start, the child's system calls leave
 * errno alone (ours is the same word, and we run on meanwhile), and the
 * kernel tells when the child is off our memory: when a process that
 * shares its memory with another leaves it, by execve or by exit, the
 * kernel zeroes the word given as CLONE_CHILD_CLEARTID (and wakes a futex
 * on it). proc_settle reads that word: no system call.
 *
 * Not CLONE_VFORK, and a limit on the wait: once the child has switched
 * to the job's user, any process of that user may SIGSTOP it before it
 * reaches exec. A start that has not reached exec after PROC_EXEC_TIMEOUT
 * is killed (proc_start_kill), whatever stops it (that, or a hung file
 * system). */
#define SPAWN_TIMEOUT_MS ((int)(PROC_EXEC_TIMEOUT * 1000))

/* Raw system calls that return -errno and never write errno: the child
 * runs beside us, and a glibc wrapper's errno would be written into ours
 * at any moment. Where this file has none, proc_start waits for the exec
 * as before (then nothing of ours runs meanwhile). */
#if defined(__x86_64__)
#define PROC_ASYNC 1
__attribute__((no_sanitize("address", "undefined"))) static inline long
sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#elif defined(__aarch64__)
#define PROC_ASYNC 1
__attribute__((no_sanitize("address", "undefined"))) static inline long
sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	register long x5 __asm__("x5") = a6;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory", "cc");
	return x0;
}
#else
#define PROC_ASYNC 0
static long sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = syscall(n, a1, a2, a3, a4, a5, a6);
	return r < 0 ? -errno : r;
}
#endif
#define SYS(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define SYS4(n, a, b, c, d) sys6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* Where the child was when it failed; it writes this and the errno into
 * its start's arguments, then exits. */
enum stage {
	ST_OK,
	ST_SETSID,
	ST_STDIN,
	ST_OUTPUT,
	ST_STATUS,
	ST_LIFE,
	ST_GROUPS,
	ST_GID,
	ST_LIMIT, /* + DLIM_* */
	ST_NICE = ST_LIMIT + DLIM_N,
	ST_UID,
	ST_CWD,
	ST_EXEC,
	ST_TIMEOUT, /* set by us: it did not reach exec in time */
};

/* What the child reads: values, and pointers into its start's blob only,
 * so that nothing we free or replace while it runs (a reload, the user
 * cache) is under it. */
struct child_args {
	const char *path;
	char **argv, **envp;
	char **fallback; /* the shell line tried when path cannot be executed, or NULL */
	const char *cwd;
	bool creds;
	bool switch_ids;
	uid_t uid;
	gid_t gid;
	gid_t *groups;
	int n_groups;
	const char *user; /* for messages */
	int umask;
	bool set_nice;
	int nice;
	bool limit_set[DLIM_N];
	int resource[DLIM_N];
	rlim_t limit[DLIM_N];
	int out_fd;
	int status_fd; /* becomes JOB_STATUS_FD, the one descriptor left open for exec */
	/* written by the child, read once it is off our memory */
	volatile int stage;
	volatile int err;
	volatile int fell_back; /* the error is the fallback shell's */
};

struct proc_start {
	struct child_args a;
	void *stack; /* its lowest word is the CLONE_CHILD_CLEARTID word */
	char *blob;
	pid_t pid;
	double deadline; /* mono_now */
	bool killed;     /* it was past the deadline: killed */
};

/* The children's stacks: one per start until the child is off it. The
 * lowest word (the stack grows down, far from it) is the start's
 * CLONE_CHILD_CLEARTID word, which the kernel writes when the child
 * goes: so a stack goes back to the pool only once that word is 0, and
 * one whose child we gave up on stays mapped. A few are kept for the next
 * starts (a worker has at most its slots' worth under way). */
#define CHILD_STACK ((size_t)256 * 1024)
#define STACK_POOL 16
static void *stack_pool[STACK_POOL];
static int n_pooled;

/* Starts not settled yet, and the descriptors proc_close put off until
 * there are none: a child holds copies of all our descriptors from its
 * clone until its exec closes them, so a pipe we close meanwhile lives
 * on, and so does its registration in the event loop's epoll set, which
 * then reports events for a descriptor number that may already be
 * another's (libev rebuilt its whole epoll set for each: 4 epoll_ctl per
 * job, and an epoll_create1 every eighth job). */
static int n_pending;
static int *grave;
static size_t n_grave, cap_grave;

static void flush_grave(void)
{
	for (size_t i = 0; i < n_grave; i++)
		close(grave[i]);
	n_grave = 0;
}

void proc_close(int fd)
{
	if (fd < 0)
		return;
	if (!n_pending) {
		close(fd);
		return;
	}
	if (n_grave == cap_grave) {
		cap_grave = cap_grave ? 2 * cap_grave : 16;
		grave = xrealloc(grave, cap_grave * sizeof(*grave));
	}
	grave[n_grave++] = fd;
}

/* The life line (proc_life_init). A job must not outlive the worker that
 * renews its lease (issue 44): while one kyud process lives, the
 * supervisor's sweep (kyud/sweep.c) or the orphaned worker's drain ends
 * its jobs; when every one of them is SIGKILLed at once, none is left to
 * do anything, and the jobs ran on beside their next attempts. So the
 * kernel does it. The worker holds the write end of one pipe (and its
 * read end, so that the pipe always has a reader while it lives), and
 * never writes to it. Each child opens a read end of its own through
 * /proc/self/fd (a new open file, which only the job holds from its exec
 * on) and arms signal-driven I/O on it: F_SETSIG SIGKILL, F_SETOWN_EX to
 * its own process group, O_ASYNC. When the last write end closes (the
 * worker's, at its death, whatever killed it), the pipe's release
 * notifies every armed reader: the kernel SIGKILLs each job's whole
 * process group, at once.
 *
 * Why not another way: PR_SET_PDEATHSIG reaches only the job's own
 * process (not the group a shell starts), and is cleared by the user
 * switch and a set-user-ID exec; a guardian process dies with the rest of
 * kyud when every kyud pid is killed; a PID namespace per worker changes
 * the pids kyud records and needs privileges. Nothing is ever written to
 * the pipe (a write would notify the readers too), and a reader's read
 * notifies only writers armed for it, of which there are none.
 *
 * Each job gets its end as JOB_LIFE_FD. A job that closes that
 * descriptor in all of its processes gives the line up; processes that
 * left the job's process group (setsid) are not on it: while any kyud
 * process lives, the sweeps find them (common/orphans.h). The owner is
 * set while the child still has our credentials, so the kernel's check
 * on the signal passes whoever the job then runs as. */
static char life_path[32]; /* "/proc/self/fd/N" of our write end; "": no line */

/* proc_settle_signals: the process keeps every asynchronous signal
 * blocked and none has a handler; then the child resets only the
 * signals ignored here, which exec would leave ignored for the job. */
static bool signals_settled;
static int ignored[NSIG];
static int n_ignored;

static void *stack_get(void)
{
	void *s;

	if (n_pooled)
		return stack_pool[--n_pooled];
	s = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED)
		return NULL;
	return s;
}

static void stack_put(void *s)
{
	if (n_pooled < STACK_POOL)
		stack_pool[n_pooled++] = s;
	else
		munmap(s, CHILD_STACK);
}

__attribute__((noreturn, no_sanitize("address", "undefined"))) static void
fail_at(struct child_args *a, enum stage st, long r)
{
	a->err = (int)-r;
	a->stage = (int)st;
	for (;;)
		(void)SYS(SYS_exit_group, 127, 0, 0);
}

/* SIG_DFL for sig, as the kernel takes it (the layout of x86-64 and
 * arm64; no restorer is needed without a handler). */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask;
};

/* Not instrumented: it runs on its own stack, in a process that shares
 * the sanitizers' state with its parent. */
__attribute__((no_sanitize("address", "undefined"))) static int child_main(void *arg)
{
	struct child_args *a = arg;
	struct kernel_sigaction dfl = { SIG_DFL, 0, NULL, 0 };
	unsigned long none = 0;
	long fd, r, sid;
	unsigned top_fd = JOB_STATUS_FD;

	/* Every disposition back to the default while all signals are
	 * blocked (we blocked them before the clone, or keep them blocked
	 * for good): none of our handlers may run in here. With none to
	 * begin with (proc_settle_signals), only the ignored ones: exec
	 * resets the rest. */
	if (signals_settled) {
		for (int i = 0; i < n_ignored; i++)
			(void)SYS4(SYS_rt_sigaction, ignored[i], &dfl, NULL, sizeof(dfl.mask));
	} else {
		for (int sig = 1; sig < NSIG; sig++)
			if (sig != SIGKILL && sig != SIGSTOP)
				(void)SYS4(SYS_rt_sigaction, sig, &dfl, NULL, sizeof(dfl.mask));
	}
	if ((sid = SYS(SYS_setsid, 0, 0, 0)) < 0)
		fail_at(a, ST_SETSID, sid);
	fd = SYS4(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY, 0);
	if (fd < 0)
		fail_at(a, ST_STDIN, fd);
	if (fd != STDIN_FILENO) {
		if ((r = SYS(SYS_dup3, fd, STDIN_FILENO, 0)) < 0)
			fail_at(a, ST_STDIN, r);
		(void)SYS(SYS_close, fd, 0, 0);
	}
	/* Our pipe ends are above 2 (0-2 are open in every kyud process). */
	if ((r = SYS(SYS_dup3, a->out_fd, STDOUT_FILENO, 0)) < 0 ||
	    (r = SYS(SYS_dup3, a->out_fd, STDERR_FILENO, 0)) < 0)
		fail_at(a, ST_OUTPUT, r);
	/* The status channel (kyu_jobs(7)): dup3 leaves the copy open across
	 * exec; a pipe end that already has the number keeps its
	 * close-on-exec flag, which is cleared instead. */
	r = a->status_fd == JOB_STATUS_FD ? SYS(SYS_fcntl, JOB_STATUS_FD, F_SETFD, 0)
					  : SYS(SYS_dup3, a->status_fd, JOB_STATUS_FD, 0);
	if (r < 0)
		fail_at(a, ST_STATUS, r);
	/* The life line (above). 0-3 are taken, so the open gets 4 or
	 * more, and a copy above JOB_LIFE_FD goes with the rest below. */
	if (life_path[0]) {
		struct f_owner_ex own = { F_OWNER_PGRP, (pid_t)sid };
		if ((fd = SYS4(SYS_openat, AT_FDCWD, life_path, O_RDONLY, 0)) < 0)
			fail_at(a, ST_LIFE, fd);
		if ((r = SYS(SYS_fcntl, fd, F_SETSIG, SIGKILL)) < 0 ||
		    (r = SYS(SYS_fcntl, fd, F_SETOWN_EX, &own)) < 0 ||
		    (r = SYS(SYS_fcntl, fd, F_SETFL, O_RDONLY | O_ASYNC)) < 0 ||
		    (fd != JOB_LIFE_FD && (r = SYS(SYS_dup3, fd, JOB_LIFE_FD, 0)) < 0))
			fail_at(a, ST_LIFE, r);
		top_fd = JOB_LIFE_FD;
	}
	/* Everything of ours is close-on-exec already; this also covers
	 * descriptors opened by libraries that forget to. All above top_fd.
	 * close_range fails with ENOSYS before Linux 5.9 and with EPERM under
	 * some seccomp profiles: then one close per possible descriptor, up
	 * to the limit no descriptor of ours can reach. */
	if (SYS(SYS_close_range, top_fd + 1U, ~0U, 0U) < 0) {
		struct rlimit nofile = { 0, 0 };
		unsigned long top = SYS(SYS_getrlimit, RLIMIT_NOFILE, &nofile, 0) == 0 &&
						    nofile.rlim_cur != RLIM_INFINITY &&
						    nofile.rlim_cur < (1UL << 30)
					    ? (unsigned long)nofile.rlim_cur
					    : 1UL << 20;
		for (unsigned long f = top_fd + 1UL; f < top; f++)
			(void)SYS(SYS_close, f, 0, 0);
	}
	if (a->creds) {
		/* Raw calls: glibc's wrappers would try to change the ids of
		 * every thread of the process, and ours is shared. */
		if (a->switch_ids) {
			if ((r = SYS(SYS_setgroups, a->n_groups, a->groups, 0)) < 0)
				fail_at(a, ST_GROUPS, r);
			if ((r = SYS(SYS_setresgid, a->gid, a->gid, a->gid)) < 0)
				fail_at(a, ST_GID, r);
		}
		/* Limits and nice before giving up the privileges that may be
		 * needed to set them. */
		for (int i = 0; i < DLIM_N; i++) {
			struct rlimit rl = { a->limit[i], a->limit[i] }, cur = { 0, 0 };
			if (!a->limit_set[i])
				continue;
			/* At the soft CPU limit the kernel sends SIGXCPU, at the
			 * hard one SIGKILL: a second apart, so that the job (and
			 * its row) sees which limit it ran into; not above the
			 * hard limit we have, though. */
			if (i == DLIM_CPU && rl.rlim_max != RLIM_INFINITY &&
			    (SYS(SYS_getrlimit, RLIMIT_CPU, &cur, 0) < 0 ||
			     rl.rlim_max < cur.rlim_max))
				rl.rlim_max++;
			if ((r = SYS(SYS_setrlimit, a->resource[i], &rl, 0)) < 0)
				fail_at(a, (enum stage)(ST_LIMIT + i), r);
		}
		if (a->set_nice && (r = SYS(SYS_setpriority, PRIO_PROCESS, 0, a->nice)) < 0)
			fail_at(a, ST_NICE, r);
		if (a->umask >= 0)
			(void)SYS(SYS_umask, a->umask, 0, 0);
		if (a->switch_ids && (r = SYS(SYS_setresuid, a->uid, a->uid, a->uid)) < 0)
			fail_at(a, ST_UID, r);
	}
	/* As the job's user: a directory it may not enter is its error. */
	if (a->cwd && *a->cwd && (r = SYS(SYS_chdir, a->cwd, 0, 0)) < 0)
		fail_at(a, ST_CWD, r);
	(void)SYS4(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, sizeof(none));
	r = SYS(SYS_execve, a->path, a->argv, a->envp);
	/* A command line run without the shell could not be executed: the
	 * shell tries, so that a script without #!, a bad interpreter or a
	 * file without x permission ends exactly as it would have (run as a
	 * script, 127, 126, with the shell's message). Not for a user over
	 * its limit_nproc, which is a rule's failure, not the program's. */
	if (a->fallback && !(r == -EAGAIN && a->limit_set[DLIM_NPROC])) {
		a->fell_back = 1;
		r = SYS(SYS_execve, a->fallback[0], a->fallback, a->envp);
	}
	fail_at(a, ST_EXEC, r);
	return 127;
}

static const char *const limit_key[DLIM_N] = {
	"limit_cpu", "limit_as", "limit_nofile", "limit_nproc", "limit_fsize", "limit_core",
};

static void describe(const struct child_args *a, char *err, size_t errlen)
{
	const char *user = a->user ? a->user : "?";
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
		snprintf(err, errlen, "cannot connect the status pipe as descriptor %d: %s",
			 JOB_STATUS_FD, why);
		return;
	case ST_LIFE:
		snprintf(
			err, errlen,
			"cannot give the job its end of the worker's life line (descriptor %d): %s",
			JOB_LIFE_FD, why);
		return;
	case ST_GROUPS:
		snprintf(err, errlen, "rule user: cannot set the groups of %s: %s", user, why);
		return;
	case ST_GID:
		snprintf(err, errlen, "rule group: cannot switch to gid %u: %s", (unsigned)a->gid,
			 why);
		return;
	case ST_NICE:
		snprintf(err, errlen, "rule nice: cannot set nice %d: %s", a->nice, why);
		return;
	case ST_UID:
		snprintf(err, errlen, "rule user: cannot switch to user %s (uid %u): %s", user,
			 (unsigned)a->uid, why);
		return;
	case ST_TIMEOUT:
		snprintf(err, errlen,
			 "the new process did not reach exec within %d ms (stopped, or "
			 "a file system not answering): killed",
			 SPAWN_TIMEOUT_MS);
		return;
	case ST_CWD:
		snprintf(err, errlen, "cannot change to directory %s: %s", a->cwd,
			 a->err == ENOTDIR ? "not a directory" : why);
		return;
	case ST_EXEC: {
		const char *w = a->err == ENOENT   ? "not found"
				: a->err == EACCES ? "permission denied"
						   : why;
		/* execve fails with EAGAIN when the new user is over its
		 * RLIMIT_NPROC (setresuid only marks the process). */
		if (a->err == EAGAIN && a->limit_set[DLIM_NPROC]) {
			snprintf(
				err, errlen,
				"rule limit_nproc: user %s has more processes than its limit (%llu)",
				user, (unsigned long long)a->limit[DLIM_NPROC]);
			return;
		}
		snprintf(err, errlen, "cannot execute %s: %s",
			 a->fell_back ? a->fallback[0] : a->argv[0], w);
		return;
	}
	default:
		if (a->stage >= ST_LIMIT && a->stage < ST_LIMIT + DLIM_N) {
			int i = a->stage - ST_LIMIT;
			snprintf(err, errlen, "rule %s: cannot apply %llu: %s", limit_key[i],
				 (unsigned long long)a->limit[i], why);
			return;
		}
		snprintf(err, errlen, "internal: the child failed at step %d: %s", a->stage, why);
	}
}

/* ---- the copy the child reads ------------------------------------------- */

static size_t strv_bytes(const char *const *v, size_t *n)
{
	size_t b = 0;

	*n = 0;
	for (; v && v[*n]; (*n)++)
		b += strlen(v[*n]) + 1;
	return b;
}

static char *put_str(char **at, const char *s)
{
	size_t l = strlen(s) + 1;
	char *r = *at;

	memcpy(r, s, l);
	*at += l;
	return r;
}

static char **put_strv(char ***slots, char **at, const char *const *v, size_t n)
{
	char **r = *slots;

	for (size_t i = 0; i < n; i++)
		r[i] = put_str(at, v[i]);
	r[n] = NULL;
	*slots += n + 1;
	return r;
}

/* One allocation: the pointer vectors, the groups, then the strings. */
static void copy_args(struct proc_start *s, const struct jobspec *spec, const char *path,
		      const char *cwd, const struct proc_creds *cr, const char *const *fallback)
{
	const char *const *argv = (const char *const *)spec->argv, *const *envp =
									   (const char *const *)
										   spec->envp;
	struct child_args *a = &s->a;
	const struct domain_ids *ids = cr ? cr->ids : NULL;
	size_t na, ne, nf, bytes, groups = ids && ids->switch_ids ? (size_t)ids->n_groups : 0;
	char **slots, *at;

	bytes = strv_bytes(argv, &na) + strv_bytes(envp, &ne) + strv_bytes(fallback, &nf) +
		strlen(path) + 1 + (cwd ? strlen(cwd) + 1 : 0) +
		(ids && ids->name ? strlen(ids->name) + 1 : 0);
	s->blob = xmalloc((na + ne + (fallback ? nf + 1 : 0) + 2) * sizeof(char *) +
			  groups * sizeof(gid_t) + bytes);
	slots = (char **)(void *)s->blob;
	at = s->blob + (na + ne + (fallback ? nf + 1 : 0) + 2) * sizeof(char *);
	if (groups) {
		a->groups = (gid_t *)(void *)at;
		memcpy(a->groups, ids->groups, groups * sizeof(gid_t));
		at += groups * sizeof(gid_t);
	}
	a->argv = put_strv(&slots, &at, argv, na);
	a->envp = put_strv(&slots, &at, envp, ne);
	a->fallback = fallback ? put_strv(&slots, &at, fallback, nf) : NULL;
	a->path = put_str(&at, path);
	a->cwd = cwd ? put_str(&at, cwd) : NULL;
	a->user = ids && ids->name ? put_str(&at, ids->name) : NULL;
	a->umask = -1;
	if (!cr)
		return;
	a->creds = true;
	if (ids) {
		a->switch_ids = ids->switch_ids;
		a->uid = ids->uid;
		a->gid = ids->gid;
		a->n_groups = ids->switch_ids ? ids->n_groups : 0;
	}
	a->umask = cr->umask;
	a->set_nice = cr->set_nice;
	a->nice = cr->nice;
	for (int i = 0; cr->limit_set && i < DLIM_N; i++) {
		a->limit_set[i] = cr->limit_set[i];
		a->limit[i] = cr->limit[i];
		a->resource[i] = domain_limit_resource(i);
	}
}

/* ---- starting, and knowing it started ----------------------------------- */

static int *tid_word(const struct proc_start *s)
{
	return s->stack;
}

/* The child is off our memory: its stack and copy may go. */
static bool off_our_memory(const struct proc_start *s)
{
	return __atomic_load_n(tid_word(s), __ATOMIC_ACQUIRE) == 0;
}

/* counted: it was a pending start (proc_start's clone succeeded) */
static void start_free(struct proc_start *s, bool stack_free, bool counted)
{
	if (stack_free)
		stack_put(s->stack);
	/* else left mapped: the kernel still writes its word some day */
	free(s->blob);
	free(s);
	if (counted && --n_pending == 0)
		flush_grave();
}

int proc_start(const struct jobspec *spec, const char *path, const char *cwd,
	       const struct proc_creds *cr, const char *const *fallback,
	       struct proc_start **ret_start, pid_t *ret_pid, int *ret_out, int *ret_status,
	       char *err, size_t errlen)
{
	struct proc_start *s;
	sigset_t all, old;
	int pipefd[2] = { -1, -1 }, statusfd[2] = { -1, -1 };
	int r;

	*ret_start = NULL;
	if (pipe2(pipefd, O_CLOEXEC) < 0 || pipe2(statusfd, O_CLOEXEC) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
		goto fail;
	}
	/* Only our ends are non-blocking: the job sees ordinary pipes. */
	if (fcntl(pipefd[0], F_SETFL, O_NONBLOCK) < 0 ||
	    fcntl(statusfd[0], F_SETFL, O_NONBLOCK) < 0) {
		r = -errno;
		snprintf(err, errlen, "cannot set output pipe non-blocking: %s", strerror(errno));
		goto fail;
	}
	s = xcalloc(1, sizeof(*s));
	if (!(s->stack = stack_get())) {
		r = -errno;
		snprintf(err, errlen, "cannot map a stack for spawning: %s", strerror(errno));
		free(s);
		goto fail;
	}
	copy_args(s, spec, path, cwd, cr, fallback);
	s->a.out_fd = pipefd[1];
	s->a.status_fd = statusfd[1];
	*tid_word(s) = 1;
	if (!signals_settled) {
		sigfillset(&all);
		sigprocmask(SIG_SETMASK, &all, &old);
	}
	s->deadline = mono_now() + PROC_EXEC_TIMEOUT;
	s->pid = clone(child_main, (char *)s->stack + CHILD_STACK,
		       CLONE_VM | CLONE_CHILD_CLEARTID | SIGCHLD, &s->a, NULL, NULL, tid_word(s));
	r = errno;
	if (!signals_settled)
		sigprocmask(SIG_SETMASK, &old, NULL);
	/* The child has copies of these: ours must go for the EOF to come. */
	close(pipefd[1]);
	close(statusfd[1]);
	pipefd[1] = statusfd[1] = -1;
	if (s->pid < 0) {
		snprintf(err, errlen, "cannot start a process: %s", strerror(r));
		start_free(s, true, false);
		r = -r;
		goto fail;
	}
	n_pending++;
	*ret_start = s;
	*ret_pid = s->pid;
	*ret_out = pipefd[0];
	*ret_status = statusfd[0];
	if (!PROC_ASYNC) {
		/* sys6 is glibc's syscall here, which writes errno: nothing of
		 * ours may run until the child is off our memory. */
		proc_start_wait(s);
	}
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

int proc_settle(struct proc_start **sp, int *exec_errno, char *err, size_t errlen)
{
	struct proc_start *s = *sp;
	int r;

	*exec_errno = 0;
	if (!s)
		return 0;
	if (!off_our_memory(s))
		return 1;
	*sp = NULL;
	if (s->killed) {
		s->a.stage = ST_TIMEOUT;
		s->a.err = ETIMEDOUT;
	}
	if (s->a.stage == ST_OK) {
		start_free(s, true, true);
		return 0;
	}
	describe(&s->a, err, errlen);
	/* A rule that failed is not the program's failure. */
	if (s->a.stage == ST_EXEC && strncmp(err, "rule ", 5) != 0)
		*exec_errno = s->a.err;
	r = -(s->a.err ? s->a.err : EIO);
	start_free(s, true, true);
	return r;
}

double proc_start_deadline(const struct proc_start *s)
{
	return s->deadline;
}

void proc_start_kill(struct proc_start *s)
{
	if (s->killed || off_our_memory(s))
		return;
	s->killed = true;
	(void)kill(s->pid, SIGKILL);
}

/* Wait until the child is off our memory or past its deadline (then
 * killed). Not FUTEX_PRIVATE_FLAG: the kernel's wake is a shared one.
 * EAGAIN means the word was no longer 1 when the kernel looked; EINTR a
 * signal of ours, which changes nothing. */
void proc_start_wait(struct proc_start *s)
{
	int *tid = tid_word(s);

	while (!off_our_memory(s)) {
		double left = s->deadline - mono_now();
		struct timespec ts;
		if (left <= 0) {
			proc_start_kill(s);
			return;
		}
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		(void)syscall(SYS_futex, tid, FUTEX_WAIT, 1, &ts, NULL, 0);
	}
}

/* Reap a child that failed or that we killed, so that no one else takes
 * it for a job; false if it is not gone within 100 ms (a kill cannot end
 * a process stuck in the kernel). */
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
	struct proc_start *s;
	int r;

	*exec_errno = 0;
	r = proc_start(spec, path, cwd, cr, NULL, &s, ret_pid, ret_out, ret_status, err, errlen);
	if (r < 0 || !s)
		return r < 0 ? r : -EIO;
	proc_start_wait(s);
	if (s->killed && !off_our_memory(s)) {
		/* Killed and not gone yet: reaped below, or later by whoever
		 * reaps; its stack stays mapped if it is not off it by then. */
		if (!reap(s->pid) || !off_our_memory(s)) {
			describe(&(struct child_args){ .stage = ST_TIMEOUT, .err = ETIMEDOUT }, err,
				 errlen);
			start_free(s, false, true);
			r = -ETIMEDOUT;
			goto fail;
		}
	}
	r = proc_settle(&s, exec_errno, err, errlen);
	if (r == 0)
		return 0;
	(void)reap(*ret_pid);

fail:
	close(*ret_out);
	close(*ret_status);
	*ret_out = *ret_status = -1;
	return r;
}

int proc_life_init(char *err, size_t errlen)
{
	int fds[2], probe, e;

	if (pipe2(fds, O_CLOEXEC) < 0) {
		e = errno;
		snprintf(err, errlen, "cannot create the jobs' life line: pipe: %s", strerror(e));
		return -e;
	}
	snprintf(life_path, sizeof(life_path), "/proc/self/fd/%d", fds[1]);
	/* What each child does before its exec; without /proc, no line at
	 * all rather than every start failing. */
	probe = open(life_path, O_RDONLY | O_CLOEXEC);
	if (probe < 0) {
		e = errno;
		snprintf(err, errlen, "cannot open %s for the jobs' life line: %s", life_path,
			 strerror(e));
		life_path[0] = '\0';
		close(fds[0]);
		close(fds[1]);
		return -e;
	}
	close(probe);
	/* Both ends stay open for the rest of our life (the kernel closes
	 * them when we go: that is the point). */
	return 0;
}

bool proc_synchronous_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL ||
	       sig == SIGTRAP || sig == SIGSYS || sig == SIGABRT;
}

bool proc_settle_signals(sigset_t *handled)
{
	bool any = false;
	int n = 0;

	sigemptyset(handled);
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sig == SIGKILL || sig == SIGSTOP || proc_synchronous_signal(sig) ||
		    sigaction(sig, NULL, &sa) < 0)
			continue;
		if (!(sa.sa_flags & SA_SIGINFO) && sa.sa_handler == SIG_IGN) {
			ignored[n++] = sig;
		} else if ((sa.sa_flags & SA_SIGINFO) || sa.sa_handler != SIG_DFL) {
			sigaddset(handled, sig);
			any = true;
		}
	}
	if (any)
		return false;
	n_ignored = n;
	signals_settled = true;
	return true;
}

bool proc_temporary(int err)
{
	switch (err) {
	case EAGAIN: /* clone, a user over RLIMIT_NPROC at execve */
	case ENOMEM: /* clone, mmap, execve */
	case EMFILE: /* pipe2, open */
	case ENFILE:
	case ENOBUFS:
	case ETIMEDOUT: /* the spawn timeout; a name service that did not answer */
	case EINTR:
	case ETXTBSY: /* the program is being written right now */
	case EIO:     /* a name service or file system in trouble */
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
