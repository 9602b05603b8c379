/* The pool of worker processes: `kyud --worker N` for each of [kyud]
 * workers, started with the configuration's bytes and the scoreboard. See
 * pool.h. */
#include "pool.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <unistd.h>

#include "common/board.h"
#include "common/log.h"
#include "common/proto.h"

void pool_init(struct pool *p, struct ev_loop *loop, const struct kyu_config *cfg,
	       struct sdnotify *sdn)
{
	memset(p, 0, sizeof(*p));
	p->loop = loop;
	p->cfg = cfg;
	p->sdn = sdn;
	p->board_fd = -1;
	liveness_init(&p->live, loop, p->children, &p->n, cfg);
}

int pool_find_exe(struct pool *p)
{
	ssize_t n = readlink("/proc/self/exe", p->exe, sizeof(p->exe) - 1);

	if (n <= 0) {
		log_err("cannot find my own executable: %s", strerror(errno));
		return -1;
	}
	p->exe[n] = '\0';
	return 0;
}

void pool_make_id(struct pool *p)
{
	char host[256];

	if (gethostname(host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "unknown");
	host[sizeof(host) - 1] = '\0';
	registry_make_id(p->id, sizeof(p->id), host, getpid());
}

void pool_create_board(struct pool *p)
{
	int r = board_create(&p->board, &p->board_fd);

	/* Counting is not worth refusing to run jobs for. */
	if (r < 0)
		log_warn("no scoreboard (%s): kyud's own counters and /metrics are off",
			 strerror(-r));
}

void pool_report(struct pool *p, struct child *c, int64_t value)
{
	liveness_report(&p->live, c, value);
	sdnotify_report(p->sdn, c);
}

void pool_reaped(struct pool *p, struct child *c)
{
	liveness_exited(&p->live, c);
	sdnotify_exited(p->sdn);
}

void pool_configure(struct pool *p)
{
	liveness_configure(&p->live, p->cfg);
}

void pool_free(struct pool *p)
{
	liveness_free(&p->live);
	if (p->board_fd >= 0)
		close(p->board_fd);
	board_unmap(p->board);
}

void pool_spawn(struct pool *p, struct child *c, int cfg_fd)
{
	char idx[16], cfd_arg[16], what[32];
	char *argv[] = { "kyud", "--worker",   idx,           "--config-fd", cfd_arg,
			 "-c",   p->cfg->path, "--daemon-id", p->id,         NULL };
	int fds[] = { -1, cfg_fd, p->board_fd };
	struct msg report = { .type = KYU_REPORT, .value = liveness_report_us(&p->live) };

	snprintf(idx, sizeof(idx), "%d", c->index);
	snprintf(cfd_arg, sizeof(cfd_arg), "%d", PROTO_CONFIG_FD);
	snprintf(what, sizeof(what), "worker %d", c->index);
	if (child_spawn(p->loop, c, what, p->exe, argv, fds, 3) < 0) {
		c->backoff = c->backoff < 1 ? 1 : c->backoff;
		child_restart_later(p->loop, c);
		return;
	}
	liveness_spawned(&p->live, c);
	sdnotify_spawned(p->sdn);
	/* Its reports are the proof that its loop turns (liveness.h). */
	(void)proto_send_fd(c->fd, &report, -1);
	log_info("worker %d started (pid %d)", c->index, (int)c->pid);
}

void pool_restart(struct pool *p, struct child *c, int cfg_fd)
{
	if (!p->stopping && !c->retired)
		pool_spawn(p, c, cfg_fd);
}

void pool_start(struct pool *p, int cfg_fd)
{
	for (int i = 0; i < p->n; i++)
		pool_spawn(p, &p->children[i], cfg_fd);
}

/* Hand a running worker the configuration to apply. */
static void send_reload(struct pool *p, struct child *c, int cfg_fd)
{
	struct msg m = { .type = KYU_RELOAD };
	struct msg report = { .type = KYU_REPORT, .value = liveness_report_us(&p->live) };

	if (!c->pid || c->fd < 0)
		return;
	if (proto_send_fd(c->fd, &m, cfg_fd) < 0)
		log_err("worker %d (pid %d) keeps its old configuration: cannot send it the new one: %s",
			c->index, (int)c->pid, strerror(errno));
	/* The new lease may ask for reports more often. */
	(void)proto_send_fd(c->fd, &report, -1);
}

void pool_reload(struct pool *p, int cfg_fd)
{
	/* Grow or shrink the pool; retired workers drain and are not restarted. */
	for (int i = 0; i < p->n; i++) {
		struct child *c = &p->children[i];
		if (i < p->cfg->workers) {
			c->retired = false;
			if (c->pid)
				send_reload(p, c, cfg_fd);
			else if (!ev_is_active(&c->restart_w))
				pool_spawn(p, c, cfg_fd);
		} else if (!c->retired) {
			c->retired = true;
			ev_timer_stop(p->loop, &c->restart_w);
			child_send(c, KYU_STOP);
		}
	}
}

enum pool_exit pool_exited(struct pool *p, struct child *c, pid_t pid, int st, const char *how,
			   double ran)
{
	if (p->stopping || c->retired) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			log_info("worker %d (pid %d) exited", c->index, (int)pid);
		else
			log_warn("worker %d (pid %d) %s", c->index, (int)pid, how);
		return POOL_EXIT_GONE;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == EX_CONFIG) {
		/* The worker refused the configuration this supervisor validated
		 * and handed it: a new one would refuse it too, for ever. Like
		 * nginx's "do not respawn" status, it ends the daemon. */
		log_err("worker %d (pid %d) exited with status %d (configuration or schema error, logged above): "
			"not restarting; stopping",
			c->index, (int)pid, EX_CONFIG);
		return POOL_EXIT_REFUSED;
	}
	if (p->board)
		board_restarted(p->board);
	/* Restart at least 1 s later, doubling while it keeps dying young. */
	c->backoff =
		ran > 10 ? 1 : (c->backoff * 2 > 60 ? 60 : (c->backoff < 1 ? 1 : c->backoff * 2));
	log_err("worker %d (pid %d) %s; restarting in %.0f s", c->index, (int)pid, how, c->backoff);
	child_restart_later(p->loop, c);
	return POOL_EXIT_RESTARTING;
}

void pool_stop(struct pool *p, bool now)
{
	if (!p->stopping) {
		p->stopping = true;
		for (int i = 0; i < p->n; i++)
			ev_timer_stop(p->loop, &p->children[i].restart_w);
	}
	for (int i = 0; i < p->n; i++)
		child_send(&p->children[i], now ? KYU_STOP_NOW : KYU_STOP);
}

void pool_drain(struct pool *p)
{
	struct msg m = { .type = KYU_STOP, .value = KYU_STOP_FINISH };

	if (!p->stopping) {
		p->stopping = true;
		for (int i = 0; i < p->n; i++)
			ev_timer_stop(p->loop, &p->children[i].restart_w);
	}
	for (int i = 0; i < p->n; i++)
		if (p->children[i].pid && p->children[i].fd >= 0)
			(void)proto_send_fd(p->children[i].fd, &m, -1);
}

void pool_kill(struct pool *p)
{
	for (int i = 0; i < p->n; i++) {
		if (p->children[i].pid) {
			log_err("worker %d (pid %d) did not stop in time; killing it",
				p->children[i].index, (int)p->children[i].pid);
			kill(p->children[i].pid, SIGKILL);
		}
	}
}

bool pool_has(const struct pool *p, pid_t pid)
{
	for (int i = 0; i < p->n; i++)
		if (p->children[i].pid == pid)
			return true;
	return false;
}

bool pool_all_exited(const struct pool *p)
{
	for (int i = 0; i < p->n; i++)
		if (p->children[i].pid)
			return false;
	return true;
}
