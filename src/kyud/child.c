/* One child process of the supervisor, a worker (pool.h) or the metrics
 * process (metricsproc.h). See child.h. */
#include "child.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"

extern char **environ;

/* A copy of environ without NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID:
 * only the supervisor speaks to systemd (sdnotify.h). The array is the
 * caller's to free(); the strings are environ's. */
static char **child_env(void)
{
	static const char *const drop[] = { "NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=" };
	size_t k = 0, count = 0;
	char **env;

	while (environ[count])
		count++;
	env = xcalloc(count + 1, sizeof(*env));
	for (size_t i = 0; i < count; i++) {
		bool keep = true;
		for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]); d++)
			keep &= strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	return env;
}

void child_init(struct child *c, struct sup *s, const struct child_ops *ops, int index,
		bool metrics)
{
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->ops = ops;
	c->metrics = metrics;
	c->index = index;
	c->fd = -1;
	ev_init(&c->restart_w, ops->restart);
	c->restart_w.data = c;
}

void child_send(const struct child *c, uint32_t type)
{
	struct msg m = { .type = type };
	if (c->pid && c->fd >= 0)
		(void)proto_send_fd(c->fd, &m, -1);
}

/* In the child between fork and exec (async-signal-safe only): make fd,
 * inherited close-on-exec, survive exec as target. */
static int place_fd(int fd, int target)
{
	if (fd == target)
		return fcntl(fd, F_SETFD, 0);
	return dup2(fd, target) < 0 ? -1 : 0;
}

/* In the child: fds[i] becomes descriptor 3 + i (PROTO_FD, PROTO_CONFIG_FD,
 * BOARD_FD, ...; -1 leaves that one closed). Sources sitting on a target
 * move out of the way first, so that no dup2 overwrites one still to be
 * placed. */
static int place_fds(int *fds, int n)
{
	for (int i = 0; i < n; i++)
		if (fds[i] >= PROTO_FD && fds[i] < PROTO_FD + n &&
		    (fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, PROTO_FD + n)) < 0)
			return -1;
	for (int i = 0; i < n; i++)
		if (fds[i] >= 0 && place_fd(fds[i], PROTO_FD + i) < 0)
			return -1;
	return 0;
}

int child_spawn(struct ev_loop *loop, struct child *c, const char *what, const char *exe,
		char *const argv[], int *fds, int nfds)
{
	int sv[2];
	pid_t pid;
	char **env;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_err("%s: socketpair: %s", what, strerror(errno));
		return -1;
	}
	fds[0] = sv[1];
	env = child_env(); /* before fork: it allocates */
	pid = fork();
	if (pid < 0) {
		free(env);
		log_err("%s: fork: %s", what, strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls until exec. */
		struct sigaction ign = { .sa_handler = SIG_IGN };
		sigset_t none;
		/* Ignored signals stay ignored across exec: a HUP or ^C sent to
		 * the whole process group cannot kill the child even before it
		 * runs. The supervisor relays reloads and stops. */
		sigaction(SIGHUP, &ign, NULL);
		sigaction(SIGINT, &ign, NULL);
		/* libev may block signals for its signalfd; the child starts
		 * with none blocked. */
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (place_fds(fds, nfds) < 0)
			_exit(71);
		execve(exe, argv, env);
		_exit(71);
	}
	free(env);
	close(sv[1]);
	c->fd = sv[0];
	c->pid = pid;
	c->started = mono_now();
	c->ready = c->idle = c->wake_inflight = false;
	ev_io_init(&c->io, c->ops->msg, c->fd, EV_READ);
	c->io.data = c;
	ev_io_start(loop, &c->io);
	ev_child_init(&c->cw, c->ops->exit, pid, 0);
	c->cw.data = c;
	ev_child_start(loop, &c->cw);
	return 0;
}

void child_reaped(struct ev_loop *loop, struct child *c)
{
	ev_child_stop(loop, &c->cw);
	ev_io_stop(loop, &c->io);
	close(c->fd);
	c->fd = -1;
	c->pid = 0;
	c->ready = c->idle = c->wake_inflight = false;
}

void child_restart_later(struct ev_loop *loop, struct child *c)
{
	ev_timer_set(&c->restart_w, c->backoff, 0.);
	ev_timer_start(loop, &c->restart_w);
}
