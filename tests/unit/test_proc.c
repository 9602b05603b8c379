/* Starting a job's process (worker/proc.h): a start returns once the child
 * has executed, with its output and status pipes; a program that cannot be
 * executed or a directory that cannot be entered is an error naming it,
 * found before proc_spawn returns; and a child that never reaches exec is
 * killed after the spawn timeout, after which the next start still works;
 * the start without the wait (proc_start, proc_settle) gives the same
 * answers from memory, and falls back to the shell in the child.
 *
 * The last case holds the child in the kernel deterministically: a seccomp
 * filter (inherited by the child) turns its setsid, the first thing it
 * does, into a user notification nobody answers. It runs in a process of
 * its own, which keeps the filter.
 *
 * And the life line: the jobs' process groups die with the process that
 * started them, however it dies. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "worker/jobspec.h"
#include "worker/proc.h"
#include "check.h"

extern char **environ;

struct started {
	pid_t pid;
	int out, status, exec_errno, r;
	char err[512];
};

static void start(const char *argv_json, const char *path, const char *cwd, struct started *s)
{
	struct jobspec_input in = { .shell = "/bin/sh", .argv_json = argv_json, .job_id = "p",
				    .queue = "q", .attempt = 1, .base_env = environ };
	struct jobspec spec;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	s->out = s->status = -1;
	if (jobspec_build(&in, &spec, s->err, sizeof(s->err)) < 0) {
		s->r = -EINVAL;
		return;
	}
	s->r = proc_spawn(&spec, path, cwd, NULL, &s->pid, &s->out, &s->status, &s->exec_errno, s->err,
			  sizeof(s->err));
	jobspec_free(&spec);
}

/* Everything the pipe gives until EOF (the child and whatever it started
 * are gone), at most len - 1 bytes. */
static size_t drain(int fd, char *buf, size_t len)
{
	size_t n = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (;;) {
		ssize_t r;
		if (poll(&p, 1, 10000) <= 0)
			break;
		r = read(fd, buf + n, len - 1 - n);
		if (r > 0 && n + (size_t)r < len - 1) {
			n += (size_t)r;
			continue;
		}
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR))
			break;
	}
	buf[n] = '\0';
	return n;
}

static int exit_status(pid_t pid)
{
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void test_runs(void)
{
	struct started s;
	char buf[256];

	/* Output on the pipe, the status channel on JOB_STATUS_FD, nothing
	 * else of ours open. */
	start("[\"/bin/sh\", \"-c\", \"echo out; echo 'progress 5' >&3; ls /proc/$$/fd\"]", "/bin/sh", NULL,
	      &s);
	CHECK_STR(s.err, "");
	CHECK(s.r == 0 && s.pid > 0 && s.out >= 0 && s.status >= 0);
	if (s.r < 0)
		return;
	drain(s.out, buf, sizeof(buf));
	CHECK_STR(buf, "out\n0\n1\n2\n3\n");
	drain(s.status, buf, sizeof(buf));
	CHECK_STR(buf, "progress 5\n");
	CHECK(exit_status(s.pid) == 0);
	close(s.out);
	close(s.status);

	/* Many in a row: each waits for its own exec, none for a timeout. */
	for (int i = 0; i < 200; i++) {
		start("[\"/bin/true\"]", "/bin/true", NULL, &s);
		if (s.r < 0) {
			CHECK_STR(s.err, "");
			break;
		}
		close(s.out);
		close(s.status);
		CHECK(exit_status(s.pid) == 0);
	}
}

static void test_failures(void)
{
	struct started s;

	start("[\"/nonexistent/kyu-no-such-program\"]", "/nonexistent/kyu-no-such-program", NULL, &s);
	CHECK(s.r == -ENOENT);
	CHECK(s.exec_errno == ENOENT);
	CHECK_STR(s.err, "cannot execute /nonexistent/kyu-no-such-program: not found");
	CHECK(s.out == -1 && s.status == -1);

	start("[\"/bin/true\"]", "/bin/true", "/nonexistent/kyu-dir", &s);
	CHECK(s.r == -ENOENT);
	CHECK(s.exec_errno == 0); /* the directory, not the program */
	CHECK_STR(s.err, "cannot change to directory /nonexistent/kyu-dir: No such file or directory");

	/* The child is reaped by proc_spawn: no zombie is left for anyone. */
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);

	/* And the next start works. */
	start("[\"/bin/true\"]", "/bin/true", NULL, &s);
	CHECK(s.r == 0);
	if (s.r == 0) {
		close(s.out);
		close(s.status);
		CHECK(exit_status(s.pid) == 0);
	}
}

/* proc_start without the wait: argv_json's spec, optionally a fallback. */
static int start_async(const char *argv_json, const char *path, const char *const *fallback,
		       struct proc_start **ps, struct started *s)
{
	struct jobspec_input in = { .shell = "/bin/sh", .argv_json = argv_json, .job_id = "p",
				    .queue = "q", .attempt = 1, .base_env = environ };
	struct jobspec spec;

	memset(s, 0, sizeof(*s));
	s->out = s->status = -1;
	if (jobspec_build(&in, &spec, s->err, sizeof(s->err)) < 0)
		return -EINVAL;
	s->r = proc_start(&spec, path, NULL, NULL, fallback, ps, &s->pid, &s->out, &s->status, s->err,
			  sizeof(s->err));
	/* Nothing of the spec is needed once proc_start is back. */
	memset(spec.argv[0], 'x', strlen(spec.argv[0]));
	jobspec_free(&spec);
	return s->r;
}

/* Settle without waiting in the kernel: spins on proc_settle, which
 * reads memory only. Returns its result, or 1 after 10 s. */
static int settle_spin(struct proc_start **ps, int *exec_errno, char *err, size_t errlen)
{
	double until = 0;
	int r;

	for (long i = 0;; i++) {
		if ((r = proc_settle(ps, exec_errno, err, errlen)) != 1)
			return r;
		if (i % 100000 == 0) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			if (!until)
				until = (double)ts.tv_sec + 10;
			else if ((double)ts.tv_sec > until)
				return 1;
		}
	}
}

/* The start that does not wait for the exec (proc_start, proc_settle):
 * the child reads its own copy of what it runs, its failure is known
 * from memory and leaves our errno alone, and a command line's program
 * that cannot be executed falls back to the shell in the child. */
static void test_async(void)
{
	struct proc_start *ps = NULL;
	struct started s;
	char buf[256], err[512];
	int exec_errno = -1, r;
	const char *fallback[] = { "/bin/sh", "-c", "echo fell back; exit 7", NULL };

	/* Runs, though its spec was scribbled over and freed at once. */
	CHECK(start_async("[\"/bin/sh\", \"-c\", \"echo async\"]", "/bin/sh", NULL, &ps, &s) == 0);
	CHECK(ps != NULL);
	if (s.r == 0) {
		CHECK(settle_spin(&ps, &exec_errno, err, sizeof(err)) == 0 && ps == NULL && exec_errno == 0);
		drain(s.out, buf, sizeof(buf));
		CHECK_STR(buf, "async\n");
		CHECK(exit_status(s.pid) == 0);
		close(s.out);
		close(s.status);
	}

	/* A failed exec: known from memory, named, errno untouched. */
	CHECK(start_async("[\"/nonexistent/kyu-async\"]", "/nonexistent/kyu-async", NULL, &ps, &s) == 0);
	if (s.r == 0) {
		errno = 4242;
		r = settle_spin(&ps, &exec_errno, err, sizeof(err));
		CHECK(errno == 4242);
		CHECK(r == -ENOENT && exec_errno == ENOENT && ps == NULL);
		CHECK_STR(err, "cannot execute /nonexistent/kyu-async: not found");
		/* It exits by itself, with 127. */
		CHECK(exit_status(s.pid) == 127);
		close(s.out);
		close(s.status);
	}

	/* The program of a command line run directly cannot be executed:
	 * the shell runs the line instead, in the same child. */
	CHECK(start_async("[\"/nonexistent/kyu-direct\"]", "/nonexistent/kyu-direct", fallback, &ps, &s) == 0);
	if (s.r == 0) {
		CHECK(settle_spin(&ps, &exec_errno, err, sizeof(err)) == 0);
		drain(s.out, buf, sizeof(buf));
		CHECK_STR(buf, "fell back\n");
		CHECK(exit_status(s.pid) == 7);
		close(s.out);
		close(s.status);
	}
	/* And when the shell cannot either, the error names the shell. */
	fallback[0] = "/nonexistent/kyu-shell";
	CHECK(start_async("[\"/nonexistent/kyu-direct\"]", "/nonexistent/kyu-direct", fallback, &ps, &s) == 0);
	if (s.r == 0) {
		CHECK(settle_spin(&ps, &exec_errno, err, sizeof(err)) == -ENOENT);
		CHECK_STR(err, "cannot execute /nonexistent/kyu-shell: not found");
		CHECK(exit_status(s.pid) == 127);
		close(s.out);
		close(s.status);
	}
}

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* In a process of its own: 0 when every check passed, 77 when the kernel
 * offers no seccomp user notification (skipped), else 1. */
static int timeout_case(void)
{
	struct sock_filter code[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_setsid, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
	struct started s;
	double t0;
	int listener, failed = check_failures;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return 77;
	listener = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	if (listener < 0)
		return 77;
	/* Without the wait: proc_start is back at once, the child still
	 * short of its exec; killed, it settles as the timeout. */
	{
		struct proc_start *ps = NULL;
		char err[512];
		int exec_errno;
		t0 = mono();
		CHECK(start_async("[\"/bin/true\"]", "/bin/true", NULL, &ps, &s) == 0);
		CHECK(mono() - t0 < 1.0);
		CHECK(proc_settle(&ps, &exec_errno, err, sizeof(err)) == 1 && ps != NULL);
		CHECK(proc_start_deadline(ps) > mono() + 1.0);
		if (ps) {
			proc_start_kill(ps);
			CHECK(exit_status(s.pid) == 128 + SIGKILL);
			CHECK(proc_settle(&ps, &exec_errno, err, sizeof(err)) == -ETIMEDOUT && ps == NULL);
			CONTAINS(err, "did not reach exec within 3000 ms");
			close(s.out);
			close(s.status);
		}
	}
	t0 = mono();
	start("[\"/bin/true\"]", "/bin/true", NULL, &s);
	CHECK(s.r == -ETIMEDOUT);
	CONTAINS(s.err, "did not reach exec within 3000 ms");
	CHECK(mono() - t0 >= 2.9);
	CHECK(s.out == -1 && s.status == -1);
	/* Killed and reaped. */
	CHECK(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD);
	/* With the listener gone the filter answers ENOSYS: the next child
	 * fails at once, on a fresh stack, and says where. */
	close(listener);
	start("[\"/bin/true\"]", "/bin/true", NULL, &s);
	CHECK(s.r == -ENOSYS);
	CONTAINS(s.err, "cannot start a session");
	return check_failures > failed ? 1 : 0;
}

static void test_timeout(void)
{
	pid_t p = fork();
	int st;

	if (p == 0) {
		fflush(stderr);
		_exit(timeout_case());
	}
	CHECK(p > 0);
	if (p <= 0)
		return;
	st = exit_status(p);
	if (st == 77) {
		printf("test_proc: no seccomp user notification here: timeout case skipped\n");
		return;
	}
	CHECK(st == 0);
}

/* The life line (proc_life_init): in a process of its own, which starts
 * two jobs, each a shell with a child in its process group, lets the
 * first end, tells us the second's process group, and is then SIGKILLed
 * by us: the kernel must end that whole group, with nothing of ours left
 * to do it. We are a subreaper meanwhile, so that the orphans come to us
 * to be reaped (a zombie still counts in its group). */
static void test_life(void)
{
	int fds[2], st;
	pid_t p, pgid = 0, msg[2] = { 0, 0 };
	bool gone = false;

	CHECK(prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
	CHECK(pipe(fds) == 0);
	p = fork();
	if (p == 0) {
		struct started first, second;
		char err[256], buf[64];
		close(fds[0]);
		if (proc_life_init(err, sizeof(err)) < 0) {
			fprintf(stderr, "test_proc: %s\n", err);
			_exit(1);
		}
		start("[\"/bin/sh\", \"-c\", \"sleep 0.1 & wait\"]", "/bin/sh", NULL, &first);
		start("[\"/bin/sh\", \"-c\", \"ls /proc/$$/fd; sleep 100 & sleep 100\"]", "/bin/sh", NULL, &second);
		if (first.r < 0 || second.r < 0 || exit_status(first.pid) != 0)
			_exit(1);
		/* The first job's end left the second alone, and its end of the
		 * line is descriptor 4. */
		drain(first.out, buf, sizeof(buf));
		msg[0] = second.pid;
		msg[1] = read(second.out, buf, 10) == 10 && memcmp(buf, "0\n1\n2\n3\n4\n", 10) == 0 &&
			 kill(-second.pid, 0) == 0;
		(void)write(fds[1], msg, sizeof(msg));
		pause();
		_exit(1);
	}
	close(fds[1]);
	CHECK(p > 0 && read(fds[0], msg, sizeof(msg)) == sizeof(msg) && msg[0] > 1);
	pgid = msg[0];
	CHECK(msg[1] == 1); /* descriptor 4, and the second job outlived the first */
	close(fds[0]);
	if (p > 0) {
		CHECK(kill(p, SIGKILL) == 0);
		CHECK(waitpid(p, &st, 0) == p && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	/* A bound for a hang, not a figure: the kill is part of the exit. */
	for (int i = 0; pgid > 1 && i < 1000 && !gone; i++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		gone = kill(-pgid, 0) < 0 && errno == ESRCH;
		if (!gone)
			(void)nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	CHECK(gone);
	if (!gone && pgid > 1)
		(void)kill(-pgid, SIGKILL);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	(void)prctl(PR_SET_CHILD_SUBREAPER, 0);
}

int main(void)
{
	/* As in a worker: proc_spawn's children are reaped by waitpid. */
	signal(SIGCHLD, SIG_DFL);
	test_runs();
	test_failures();
	test_async();
	test_timeout();
	test_life();
	return check_done("test_proc");
}
