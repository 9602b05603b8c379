/* The metrics process, seen from the supervisor. See metricsproc.h. */
#include "metricsproc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/metrics.h"
#include "common/proto.h"

void metricsproc_init(struct metricsproc *mp, struct ev_loop *loop, const struct kyu_config *cfg)
{
	memset(mp, 0, sizeof(*mp));
	mp->loop = loop;
	mp->cfg = cfg;
	mp->fd = -1;
}

void metricsproc_find_exe(struct metricsproc *mp, const char *self)
{
	/* kyud-metrics beside kyud (a build tree), else where it is installed. */
	const char *slash = strrchr(self, '/');

	snprintf(mp->exe, sizeof(mp->exe), "%.*s/kyud-metrics", (int)(slash ? slash - self : 0),
		 self);
	if (access(mp->exe, X_OK) < 0)
		snprintf(mp->exe, sizeof(mp->exe), "%s", KYU_METRICS_EXE);
}

int metricsproc_bind(struct metricsproc *mp)
{
	const char *addr = mp->cfg->metrics;
	char err[256];
	int fd;

	metricsproc_close(mp);
	if (!addr || !*addr)
		return 0;
	fd = metrics_listen(addr, err, sizeof(err));
	if (fd < 0) {
		log_err("%s", err);
		return fd;
	}
	mp->fd = fd;
	return 0;
}

void metricsproc_close(struct metricsproc *mp)
{
	if (mp->fd >= 0)
		close(mp->fd);
	mp->fd = -1;
}

/* The metrics process gets the scoreboard read-only, through a descriptor
 * of its own opened for reading only. */
void metricsproc_spawn(struct metricsproc *mp, int cfg_fd, int board_fd)
{
	struct child *c = &mp->child;
	char cfd_arg[16], path[64];
	char *argv[] = { "kyud-metrics", "--config-fd", cfd_arg, "-c", mp->cfg->path, NULL };
	int ro = -1, r;

	if (mp->fd < 0 || board_fd < 0 || c->pid || mp->stopping)
		return;
	snprintf(cfd_arg, sizeof(cfd_arg), "%d", PROTO_CONFIG_FD);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", board_fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		log_err("metrics: cannot open the scoreboard read-only: %s", strerror(errno));
		r = -1;
	} else {
		/* After the control socket and the configuration:
		 * METRICS_BOARD_FD and METRICS_LISTEN_FD (metrics/metricsd.h). */
		int fds[] = { -1, cfg_fd, ro, mp->fd };
		r = child_spawn(mp->loop, c, "metrics", mp->exe, argv, fds, 4);
		close(ro);
	}
	if (r < 0) {
		c->backoff = c->backoff < 1 ? 1 : c->backoff * 2 > 60 ? 60 : c->backoff * 2;
		child_restart_later(mp->loop, c);
		return;
	}
	log_info("metrics process started (pid %d)", (int)c->pid);
}

/* The metrics process reads its configuration once: a reload replaces it
 * (the scoreboard, and so every counter, stays). */
void metricsproc_replace(struct metricsproc *mp, int cfg_fd, int board_fd)
{
	struct child *c = &mp->child;

	if (c->pid) {
		c->retired = true;
		child_send(c, KYU_STOP);
	} else {
		ev_timer_stop(mp->loop, &c->restart_w);
		c->backoff = 0;
		metricsproc_spawn(mp, cfg_fd, board_fd);
	}
}

bool metricsproc_exited(struct metricsproc *mp, pid_t pid, const char *how, double ran, int cfg_fd,
			int board_fd)
{
	struct child *c = &mp->child;

	if (mp->stopping || c->retired) {
		log_info("metrics process (pid %d) %s", (int)pid, how);
		c->retired = false;
		c->backoff = 0;
		if (mp->stopping)
			return true;
		/* Stopped by a reload: start it on the new configuration (or
		 * not, if it has none). */
		metricsproc_spawn(mp, cfg_fd, board_fd);
		return false;
	}
	c->backoff =
		ran > 10 ? 1 : (c->backoff * 2 > 60 ? 60 : (c->backoff < 1 ? 1 : c->backoff * 2));
	log_err("metrics process (pid %d) %s; restarting in %.0f s", (int)pid, how, c->backoff);
	child_restart_later(mp->loop, c);
	return false;
}

void metricsproc_stop(struct metricsproc *mp)
{
	mp->stopping = true;
	ev_timer_stop(mp->loop, &mp->child.restart_w);
	child_send(&mp->child, KYU_STOP);
}

void metricsproc_kill(struct metricsproc *mp)
{
	if (mp->child.pid)
		kill(mp->child.pid, SIGKILL);
}
