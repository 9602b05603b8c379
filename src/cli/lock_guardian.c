/* kyu lock's guardian: the process between kyu and the command
 * (lock_guardian.h says why there is one). */
#include "lock_guardian.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

enum { MSG_STARTED = 1, MSG_START_FAILED, MSG_ENDED };
struct gmsg {
	int32_t kind;
	int32_t value; /* pid, errno or exit status */
};

/* fork and exec the command in a process group of its own, with only
 * stdin, stdout and stderr, the signal mask kyu was started with and
 * default handlers. Returns its pid, or -1. */
static pid_t spawn(const struct lock_guardian_cmd *c)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0) {
		/* Also here, so that killpg works whichever runs first. */
		if (pid > 0)
			(void)setpgid(pid, pid);
		return pid;
	}
	(void)setpgid(0, 0);
	signal(SIGCHLD, SIG_DFL);
	for (int i = 0; i < c->n_dfl_sigs; i++)
		signal(c->dfl_sigs[i], SIG_DFL);
	/* The parent is the guardian, which kills the whole command when kyu
	 * goes; should the guardian itself be killed, this is the backstop
	 * for the command's own process. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(c->orphaned_status);
	/* The database socket (Connector/C may not open it close-on-exec)
	 * and anything else but the standard three. */
	closefrom(3);
	sigprocmask(SIG_SETMASK, c->mask, NULL);
	execvp(c->argv[0], c->argv);
	{
		int e = errno;
		dprintf(STDERR_FILENO, "kyu: lock %s: cannot execute %s: %s\n", c->name, c->argv[0],
			strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
}

/* SIGCHLD only ends the guardian's wait in ppoll. */
static void on_child(int sig)
{
	(void)sig;
}

static void send_msg(int fd, int kind, int value)
{
	struct gmsg m = { .kind = kind, .value = value };
	ssize_t n;

	/* Smaller than PIPE_BUF: written whole or not at all. If kyu is
	 * gone, there is nobody to tell (SIGPIPE is ignored here). */
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

/* Without the children file (a kernel without CONFIG_PROC_CHILDREN):
 * every process whose parent is this one, from /proc/PID/stat. */
static void kill_children_slowly(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long self = (long)getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		long pid = strtol(e->d_name, &p, 10), ppid;
		ssize_t n;
		int fd;

		if (pid <= 0 || *p)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "PID (COMM) STATE PPID ...": COMM may hold anything. */
		p = strrchr(buf, ')');
		if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
			continue;
		ppid = strtol(p + 4, &p, 10);
		if (*p == ' ' && ppid == self)
			(void)kill((pid_t)pid, SIGKILL);
	}
	closedir(d);
}

/* SIGKILL each child of this (single-threaded) process. */
static void kill_children(void)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kill_children_slowly();
		return;
	}
	/* Each round kills what it read; more come at the next. */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* A full buffer may end inside a number: leave that one to the next
	 * round rather than kill a pid cut short. */
	if ((size_t)n == sizeof(buf) - 1) {
		char *last = strrchr(buf, ' ');
		if (!last)
			return;
		*last = '\0';
	}
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		/* A child not yet reaped: its pid is still its own. */
		if (pid > 0)
			(void)kill((pid_t)pid, SIGKILL);
	}
}

/* The end of the command: the group while its leader is unreaped, then
 * whatever else is below us, until nothing is. */
_Noreturn static void guardian_finish(pid_t cmd)
{
	if (cmd > 0)
		(void)kill(-cmd, SIGKILL);
	for (;;) {
		pid_t r;
		kill_children();
		r = waitpid(-1, NULL, 0);
		if (r < 0 && errno == ECHILD)
			break;
	}
	_exit(0);
}

/* In the child kyu forked: start the command and watch over it. */
_Noreturn static void guardian(const struct lock_guardian_cmd *c, int life_fd, int report_fd)
{
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = on_child };
	sigset_t all, wait_mask;
	struct pollfd pfd = { .fd = life_fd, .events = POLLIN };
	bool reported = false;
	pid_t cmd;

	/* Until the handlers below are in place, nothing may end us. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* Not PR_SET_PDEATHSIG: this process must outlive kyu. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		dprintf(STDERR_FILENO,
			"kyu: lock %s: cannot become a subreaper (%s): a process "
			"that leaves the command's process group may outlive it\n",
			c->name, strerror(errno));
	cmd = spawn(c);
	if (cmd < 0) {
		send_msg(report_fd, MSG_START_FAILED, errno);
		_exit(0);
	}
	send_msg(report_fd, MSG_STARTED, (int)cmd);
	/* A Control-C or a signal to kyu's process group is kyu's to pass
	 * on; this process ends only when kyu says so or is gone. */
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigfillset(&wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
	/* Nothing of kyu's (its database connection) and no terminal:
	 * only the two pipes. */
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			(void)dup2(null, STDIN_FILENO);
			(void)dup2(null, STDOUT_FILENO);
			(void)dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		int lo = life_fd < report_fd ? life_fd : report_fd;
		int hi = life_fd < report_fd ? report_fd : life_fd;
		/* EINVAL for an empty range is as good as done. */
		(void)close_range(3, (unsigned)lo - 1, 0);
		(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
		(void)close_range((unsigned)hi + 1, ~0U, 0);
	}
	for (;;) {
		siginfo_t si;

		/* Orphans that ended are reaped; the command only when it is
		 * finished with. Once it has ended (a zombie), others wait: the
		 * end comes at once, as kyu learns of it. */
		while (!reported) {
			si.si_pid = 0;
			if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
			    si.si_pid == 0)
				break;
			if (si.si_pid != cmd) {
				(void)waitpid(si.si_pid, NULL, 0);
				continue;
			}
			send_msg(report_fd, MSG_ENDED,
				 si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
			reported = true;
		}
		pfd.revents = 0;
		if (ppoll(&pfd, 1, NULL, &wait_mask) > 0 && pfd.revents)
			guardian_finish(cmd); /* kyu closed the pipe, or died */
	}
}

pid_t lock_guardian_start(const struct lock_guardian_cmd *c, pid_t *cmd, int *life, int *report)
{
	int lp[2], rp[2], e;
	struct gmsg m;
	ssize_t n;
	pid_t g;

	if (pipe2(lp, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(rp, O_CLOEXEC) < 0) {
		e = errno;
		close(lp[0]);
		close(lp[1]);
		errno = e;
		return -1;
	}
	fflush(NULL);
	g = fork();
	if (g == 0) {
		close(lp[1]);
		close(rp[0]);
		guardian(c, lp[0], rp[1]);
	}
	e = errno;
	close(lp[0]);
	close(rp[1]);
	if (g < 0) {
		close(lp[1]);
		close(rp[0]);
		errno = e;
		return -1;
	}
	/* The first message comes at once: the command's pid, or why there
	 * is none. */
	do
		n = read(rp[0], &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m) || m.kind != MSG_STARTED) {
		e = n == (ssize_t)sizeof(m) && m.kind == MSG_START_FAILED ? m.value : ECHILD;
		close(lp[1]);
		close(rp[0]);
		(void)waitpid(g, NULL, 0);
		errno = e;
		return -1;
	}
	(void)fcntl(rp[0], F_SETFL, O_NONBLOCK);
	*cmd = (pid_t)m.value;
	*life = lp[1];
	*report = rp[0];
	return g;
}

enum lock_guardian_news lock_guardian_read(int report, int *status)
{
	for (;;) {
		struct gmsg m;
		ssize_t n = read(report, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return LOCK_GUARDIAN_NONE;
		if (n == (ssize_t)sizeof(m) && m.kind == MSG_ENDED) {
			*status = m.value;
			return LOCK_GUARDIAN_ENDED;
		}
		return LOCK_GUARDIAN_GONE;
	}
}
