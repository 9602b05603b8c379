/* The watcher process, seen from the supervisor. See watchproc.h. */
#include "watchproc.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>

#include "common/log.h"

void watchproc_init(struct watchproc *wp, struct ev_loop *loop, const struct kyu_config *cfg,
		    struct fanout *fan)
{
	memset(wp, 0, sizeof(*wp));
	wp->loop = loop;
	wp->cfg = cfg;
	wp->fan = fan;
	wp->board_fd = -1;
}

static bool wanted(const struct kyu_config *cfg)
{
	return cfg->wake_binlog != WAKE_BINLOG_OFF || cfg->wake_poll > 0;
}

void watchproc_spawn(struct watchproc *wp, int cfg_fd)
{
	struct child *c = &wp->child;
	char cfd_arg[16];
	char *argv[] = { "kyud",        "--watcher",   "--config-fd", cfd_arg, "-c",
			 wp->cfg->path, "--daemon-id", wp->id,        NULL };
	int fds[] = { -1, cfg_fd, wp->board_fd };

	if (c->pid || wp->stopping || !wanted(wp->cfg))
		return;
	snprintf(cfd_arg, sizeof(cfd_arg), "%d", PROTO_CONFIG_FD);
	if (child_spawn(wp->loop, c, "watcher", wp->exe, argv, fds, 3) < 0) {
		c->backoff = c->backoff < 1 ? 1 : c->backoff * 2 > 60 ? 60 : c->backoff * 2;
		child_restart_later(wp->loop, c);
		return;
	}
	log_debug("watcher started (pid %d)", (int)c->pid);
}

/* It blocks on the database, not on its control socket: a signal stops
 * it. */
static void terminate(struct watchproc *wp)
{
	if (wp->child.pid)
		kill(wp->child.pid, SIGTERM);
}

void watchproc_replace(struct watchproc *wp, int cfg_fd)
{
	struct child *c = &wp->child;

	if (c->pid) {
		c->retired = true;
		terminate(wp);
	} else {
		ev_timer_stop(wp->loop, &c->restart_w);
		c->backoff = 0;
		watchproc_spawn(wp, cfg_fd);
	}
}

void watchproc_msg(struct watchproc *wp, const struct msg *m)
{
	if (m->type != KYU_HINT)
		return;
	wp->hints++;
	if (m->value & KYU_HINT_CANCEL)
		fanout_cancel(wp->fan);
	if (m->value & KYU_HINT_SCHEDULES)
		fanout_schedules(wp->fan);
	if (m->value & KYU_HINT_WAKE)
		fanout_wake(wp->fan);
}

bool watchproc_exited(struct watchproc *wp, pid_t pid, int status, const char *how, double ran,
		      int cfg_fd, bool *refused)
{
	struct child *c = &wp->child;

	*refused = false;
	if (wp->stopping || c->retired) {
		log_debug("watcher (pid %d) %s", (int)pid, how);
		c->retired = false;
		c->backoff = 0;
		if (wp->stopping)
			return true;
		watchproc_spawn(wp, cfg_fd);
		return false;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == EX_CONFIG) {
		/* It said why. */
		*refused = true;
		return false;
	}
	c->backoff =
		ran > 10 ? 1 : (c->backoff * 2 > 60 ? 60 : (c->backoff < 1 ? 1 : c->backoff * 2));
	log_err("watcher (pid %d) %s; restarting in %.0f s (wake-ups wait for the poll meanwhile)",
		(int)pid, how, c->backoff);
	child_restart_later(wp->loop, c);
	return false;
}

void watchproc_stop(struct watchproc *wp)
{
	wp->stopping = true;
	ev_timer_stop(wp->loop, &wp->child.restart_w);
	terminate(wp);
}

void watchproc_kill(struct watchproc *wp)
{
	if (wp->child.pid)
		kill(wp->child.pid, SIGKILL);
}
