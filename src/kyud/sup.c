#include "sup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "common/board.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/orphans.h"
#include "common/proto.h"
#include "common/registry.h"
#include "common/util.h"
#include "common/wake.h"
#include "ratelimit.h"
#include "sdnotify.h"

#define MAX_WORKERS 256

struct sup;

struct child {
	struct sup *s;
	int index;
	pid_t pid; /* 0: not running */
	int fd;
	ev_io io;
	ev_child cw;
	ev_timer restart_w;
	double started;
	double backoff;
	bool ready, idle, wake_inflight, retired;
	bool metrics; /* the metrics process, not a worker */
};

struct sup {
	struct kyu_config cfg;
	int cfg_fd; /* sealed memfd of the bytes cfg was parsed from, for workers */
	struct ev_loop *loop;
	struct child children[MAX_WORKERS];
	int n_children; /* slots in use: >= cfg.workers after a shrinking reload */
	ev_signal term_w, int_w, hup_w;
	ev_timer poll_w, kill_w, sweep_w;
	double polled_at; /* ev_now of the last KYU_POLLED to every worker */
	ev_io wake_w;
	int wake_fd;
	struct ratelimit rl;
	bool stopping, announced, hint_pending;
	int exit_status; /* of the supervisor, once stopped */
	int rr;          /* where the next round-robin search starts */
	char exe[PATH_MAX];
	char metrics_exe[PATH_MAX];
	unsigned long hints_bad;
	/* The scoreboard every worker counts into (board.h), and the metrics
	 * process that serves it with its listening socket (-1: none). */
	struct board *board;
	int board_fd;
	struct child metrics;
	int metrics_fd;
	struct sdnotify sdn; /* what systemd is told */
	/* This daemon's token in kyu_daemons (registry.h), for worker 1. */
	char id[REGISTRY_ID_MAX];
	/* The wake to send was asked for by a datagram: a worker whose claim
	 * then finds nothing looks once more (the datagram may have left
	 * before its rows were committed). */
	bool datagram_hint;
};

static void send_msg(struct child *c, uint32_t type)
{
	struct msg m = { .type = type };
	if (c->pid && c->fd >= 0)
		(void)proto_send_fd(c->fd, &m, -1);
}

static double jittered(double v)
{
	/* ±10%, so that many daemons started together drift apart. */
	return v * (0.9 + 0.2 * ((double)random() / RAND_MAX));
}

/* Every worker hears, once per poll interval, that the daemon is polling:
 * one that hears nothing for longer (this process stopped, or stuck)
 * claims by itself (worker.c, SELF_POLL). Also from the idle answers,
 * which re-arm the poll timer and can keep it from ever firing while
 * wake-ups come often. A message per worker per interval. */
static void tell_polled(struct sup *s, bool polled)
{
	double now = ev_now(s->loop);

	if (!polled && now - s->polled_at < s->cfg.poll_interval)
		return;
	s->polled_at = now;
	for (int i = 0; i < s->n_children; i++)
		if (!s->children[i].metrics && s->children[i].ready)
			send_msg(&s->children[i], KYU_POLLED);
}

static void arm_poll(struct sup *s, double after)
{
	ev_timer_stop(s->loop, &s->poll_w);
	ev_timer_set(&s->poll_w, after, 0.);
	ev_timer_start(s->loop, &s->poll_w);
}

/* The next idle worker other than except, in turn, so that claims (and the
 * database work they bring) spread over the pool; NULL when none is idle. */
static struct child *next_idle(struct sup *s, const struct child *except)
{
	for (int k = 0; k < s->n_children; k++) {
		struct child *c = &s->children[(s->rr + k) % s->n_children];
		if (c != except && c->pid && c->ready && c->idle && !c->retired &&
		    !c->wake_inflight) {
			s->rr = (int)(c - s->children + 1) % s->n_children;
			return c;
		}
	}
	return NULL;
}

/* Ask one idle worker to acquire. Hints that arrive while a claim is in
 * flight are folded into one follow-up claim. */
static void sup_wake(struct sup *s)
{
	struct child *c;

	if (s->stopping || !s->announced)
		return;
	for (int i = 0; i < s->n_children; i++) {
		if (s->children[i].pid && s->children[i].wake_inflight) {
			s->hint_pending = true;
			return;
		}
	}
	c = next_idle(s, NULL);
	if (c) {
		struct msg m = { .type = KYU_WAKE, .value = s->datagram_hint ? KYU_WAKE_HINTED : 0 };
		c->wake_inflight = true;
		s->datagram_hint = false;
		(void)proto_send_fd(c->fd, &m, -1);
	}
}

/* A worker found a full batch: bring in another idle worker too. Not
 * counted as the claim in flight: the busy worker's next answer is. */
static void wake_another(struct sup *s, struct child *busy)
{
	struct child *c = next_idle(s, busy);

	if (c) {
		c->idle = false;
		send_msg(c, KYU_WAKE);
	}
}

static void spawn_worker(struct sup *s, struct child *c);
static void spawn_metrics(struct sup *s);

static void check_ready(struct sup *s)
{
	int ready = 0;
	if (s->announced)
		return;
	for (int i = 0; i < s->cfg.workers; i++)
		ready += s->children[i].ready;
	if (ready < s->cfg.workers)
		return;
	s->announced = true;
	sdnotify_started(&s->sdn, s->cfg.workers);
	sup_wake(s);
}

static void on_child_msg(EV_P_ ev_io *io, int revents)
{
	struct child *c = io->data;
	struct sup *s = c->s;
	struct msg m;
	(void)EV_A;
	(void)revents;

	for (;;) {
		ssize_t n = proto_recv(c->fd, &m, NULL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* EOF: the worker is exiting; its ev_child reports how. */
			if (n == 0 || errno != EAGAIN) {
				ev_io_stop(s->loop, io);
			}
			return;
		}
		if ((size_t)n != sizeof(m))
			continue;
		switch (m.type) {
		case KYU_READY:
			c->ready = true;
			c->idle = true;
			check_ready(s);
			if (s->announced)
				sup_wake(s);
			break;
		case KYU_IDLE: {
			double next = s->cfg.poll_interval, due = (double)m.value / 1e6;
			c->idle = true;
			c->wake_inflight = false;
			next = jittered(next);
			if (m.value != INT64_MAX && due < next)
				next = due < 0.01 ? 0.01 : due;
			if (!s->stopping)
				arm_poll(s, next);
			tell_polled(s, false);
			if (s->hint_pending) {
				s->hint_pending = false;
				sup_wake(s);
			}
			break;
		}
		case KYU_MORE:
			c->idle = false;
			c->wake_inflight = false;
			s->hint_pending = false;
			wake_another(s, c);
			break;
		case KYU_STATE:
			if (!c->metrics)
				sdnotify_report(&s->sdn, c->index - 1, m.value);
			break;
		}
	}
}

static void on_poll(EV_P_ ev_timer *t, int revents)
{
	struct sup *s = t->data;
	(void)EV_A;
	(void)revents;
	/* Re-armed at the full interval in case no worker answers; an answer
	 * re-arms it to the next due time. */
	arm_poll(s, jittered(s->cfg.poll_interval));
	/* A claim lost with its worker must not block all further wakes. */
	for (int i = 0; i < s->n_children; i++)
		s->children[i].wake_inflight = false;
	sup_wake(s);
	tell_polled(s, true);
}

static void on_wake_datagram(EV_P_ ev_io *io, int revents)
{
	struct sup *s = io->data;
	char buf[512], queue[WAKE_QUEUE_MAX + 1];
	bool wake = false, any = false;
	(void)EV_A;
	(void)revents;

	/* Drain everything queued: a burst of hints becomes one wake. */
	for (int i = 0; i < 1024; i++) {
		ssize_t n = recv(s->wake_fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			break;
		if (wake_parse(buf, (size_t)n, queue, sizeof(queue)) < 0) {
			s->hints_bad++;
			if (s->hints_bad == 1 || s->hints_bad % 1000 == 0)
				log_notice("ignored %lu malformed wake-up datagram(s)", s->hints_bad);
			continue;
		}
		/* "Any queue" is also what a changed schedule sends. */
		any |= !queue[0];
		if (queue[0] && s->cfg.n_queues) {
			bool ours = false;
			for (int q = 0; q < s->cfg.n_queues; q++)
				ours |= strcmp(queue, s->cfg.queues[q]) == 0;
			if (!ours)
				continue;
		}
		wake = true;
	}
	if (any && s->n_children > 0 && !s->stopping)
		send_msg(&s->children[0], KYU_SCHEDULES);
	if (!wake)
		return;
	s->datagram_hint = true;
	if (!ratelimit_allow(&s->rl, mono_now())) {
		/* Over the rate: the poll timer still runs; pick it up shortly. */
		if (!ev_is_active(&s->poll_w) || ev_timer_remaining(s->loop, &s->poll_w) > 0.1)
			arm_poll(s, 0.1);
		return;
	}
	sup_wake(s);
}

static void close_wake(struct sup *s)
{
	if (s->wake_fd >= 0) {
		ev_io_stop(s->loop, &s->wake_w);
		close(s->wake_fd);
		s->wake_fd = -1;
	}
}

static int open_wake(struct sup *s, const struct kyu_config *cfg)
{
	char err[256];
	int fd;

	if (!cfg->listen || !*cfg->listen)
		return 0;
	fd = wake_socket(cfg->listen, true, err, sizeof(err));
	if (fd < 0) {
		log_err("%s", err);
		return fd;
	}
	close_wake(s);
	s->wake_fd = fd;
	ev_io_init(&s->wake_w, on_wake_datagram, fd, EV_READ);
	s->wake_w.data = s;
	ev_io_start(s->loop, &s->wake_w);
	log_info("listening for wake-ups on udp %s", cfg->listen);
	return 0;
}

/* Bind [kyud] metrics into *ret_fd (-1 when it is empty). */
static int open_metrics(const char *addr, int *ret_fd)
{
	char err[256];
	int fd;

	*ret_fd = -1;
	if (!addr || !*addr)
		return 0;
	fd = metrics_listen(addr, err, sizeof(err));
	if (fd < 0) {
		log_err("%s", err);
		return fd;
	}
	*ret_fd = fd;
	return 0;
}

/* The metrics process reads its configuration once: a reload replaces it
 * (the scoreboard, and so every counter, stays). */
static void restart_metrics(struct sup *s)
{
	if (s->metrics.pid) {
		s->metrics.retired = true;
		send_msg(&s->metrics, KYU_STOP);
	} else {
		ev_timer_stop(s->loop, &s->metrics.restart_w);
		s->metrics.backoff = 0;
		spawn_metrics(s);
	}
}

static bool all_exited(const struct sup *s)
{
	for (int i = 0; i < s->n_children; i++)
		if (s->children[i].pid)
			return false;
	return s->metrics.pid == 0;
}

static void on_restart(EV_P_ ev_timer *t, int revents)
{
	struct child *c = t->data;
	(void)EV_A;
	(void)revents;
	if (c->metrics)
		spawn_metrics(c->s);
	else if (!c->s->stopping && !c->retired)
		spawn_worker(c->s, c);
}

static void begin_stop(struct sup *s, bool now);

/* Our own children: the workers and the metrics process. */
static bool is_worker(void *arg, pid_t pid)
{
	const struct sup *s = arg;
	if (s->metrics.pid == pid)
		return true;
	for (int i = 0; i < s->n_children; i++)
		if (s->children[i].pid == pid)
			return true;
	return false;
}

/* The jobs of a worker that died are re-parented here (we are a subreaper)
 * and nobody renews their leases any more: when the leases run out another
 * worker runs them again, so they must not still be running then. Kill them
 * now. A killed job's children that had left its process group arrive a
 * moment later, hence the repeated sweeps. Returns the number killed. */
static int sweep_orphans(struct sup *s)
{
	int n = orphans_kill(is_worker, s);
	if (n < 0) {
		log_err("cannot list my children to stop the jobs of a dead worker: %s",
			strerror(-n));
		return 0;
	}
	if (n > 0 && !ev_is_active(&s->sweep_w)) {
		ev_timer_set(&s->sweep_w, 0.02, 0.);
		ev_timer_start(s->loop, &s->sweep_w);
	}
	return n;
}

static void on_sweep(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	sweep_orphans(t->data);
}

static void on_child_exit(EV_P_ ev_child *w, int revents)
{
	struct child *c = w->data;
	struct sup *s = c->s;
	int st = w->rstatus;
	double ran = mono_now() - c->started;
	char how[96];
	(void)revents;

	ev_child_stop(EV_A_ w);
	ev_io_stop(EV_A_ & c->io);
	close(c->fd);
	c->fd = -1;
	c->pid = 0;
	c->ready = c->idle = c->wake_inflight = false;
	if (!c->metrics)
		sdnotify_exited(&s->sdn, c->index - 1);
	describe_wait_status(st, how, sizeof(how));
	{
		int killed = sweep_orphans(s);
		if (killed > 0)
			log_warn("worker %d (pid %d) left %d job process(es) running: killed them; "
				 "their jobs run again when their leases expire",
				 c->index, (int)w->rpid, killed);
	}

	if (c->metrics) {
		if (s->stopping || c->retired) {
			log_info("metrics process (pid %d) %s", (int)w->rpid, how);
			c->retired = false;
			if (s->stopping && all_exited(s)) {
				log_notice("stopped");
				ev_break(EV_A_ EVBREAK_ALL);
			} else {
				/* Stopped by a reload: start it on the new
				 * configuration (or not, if it has none). */
				c->backoff = 0;
				spawn_metrics(s);
			}
			return;
		}
		c->backoff = ran > 10 ? 1 : (c->backoff * 2 > 60 ? 60 : (c->backoff < 1 ? 1 : c->backoff * 2));
		log_err("metrics process (pid %d) %s; restarting in %.0f s", (int)w->rpid, how, c->backoff);
		ev_timer_set(&c->restart_w, c->backoff, 0.);
		ev_timer_start(EV_A_ & c->restart_w);
		return;
	}
	if (s->stopping || c->retired) {
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			log_info("worker %d (pid %d) exited", c->index, (int)w->rpid);
		else
			log_warn("worker %d (pid %d) %s", c->index, (int)w->rpid, how);
		if (s->stopping && all_exited(s)) {
			log_notice("stopped");
			ev_break(EV_A_ EVBREAK_ALL);
		}
		return;
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == EX_CONFIG) {
		/* The worker refused the configuration this supervisor validated
		 * and handed it: a new one would refuse it too, for ever. Like
		 * nginx's "do not respawn" status, it ends the daemon. */
		log_err("worker %d (pid %d) exited with status %d (configuration or schema error, logged above): "
			"not restarting; stopping",
			c->index, (int)w->rpid, EX_CONFIG);
		s->exit_status = EX_CONFIG;
		begin_stop(s, false);
		return;
	}
	if (s->board)
		board_restarted(s->board);
	/* Restart at least 1 s later, doubling while it keeps dying young. */
	c->backoff = ran > 10 ? 1 : (c->backoff * 2 > 60 ? 60 : (c->backoff < 1 ? 1 : c->backoff * 2));
	log_err("worker %d (pid %d) %s; restarting in %.0f s", c->index, (int)w->rpid, how,
		c->backoff);
	ev_timer_set(&c->restart_w, c->backoff, 0.);
	ev_timer_start(EV_A_ & c->restart_w);
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

/* Fork and exec exe (kyud itself, or kyud-metrics) as a child process
 * with argv, the control socket on fd 3 and fds[] after it; c records it. Returns 0, or -1 (logged)
 * when it could not be started. */
static int spawn_child(struct sup *s, struct child *c, const char *what, const char *exe,
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
	env = sdnotify_worker_env(); /* before fork: it allocates */
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
	ev_io_init(&c->io, on_child_msg, c->fd, EV_READ);
	c->io.data = c;
	ev_io_start(s->loop, &c->io);
	ev_child_init(&c->cw, on_child_exit, pid, 0);
	c->cw.data = c;
	ev_child_start(s->loop, &c->cw);
	return 0;
}

static void spawn_worker(struct sup *s, struct child *c)
{
	char idx[16], cfd_arg[16], what[32];
	char *argv[] = { "kyud", "--worker", idx, "--config-fd", cfd_arg, "-c", s->cfg.path,
			 "--daemon-id", s->id, NULL };
	int fds[] = { -1, s->cfg_fd, s->board_fd };
	struct msg report = { .type = KYU_REPORT, .value = sdnotify_report_us(&s->sdn) };

	snprintf(idx, sizeof(idx), "%d", c->index);
	snprintf(cfd_arg, sizeof(cfd_arg), "%d", PROTO_CONFIG_FD);
	snprintf(what, sizeof(what), "worker %d", c->index);
	if (spawn_child(s, c, what, s->exe, argv, fds, 3) < 0) {
		c->backoff = c->backoff < 1 ? 1 : c->backoff;
		ev_timer_set(&c->restart_w, c->backoff, 0.);
		ev_timer_start(s->loop, &c->restart_w);
		return;
	}
	sdnotify_spawned(&s->sdn, c->index - 1, c->pid);
	/* Its reports are the proof that its loop turns (sdnotify.h). */
	(void)proto_send_fd(c->fd, &report, -1);
	log_info("worker %d started (pid %d)", c->index, (int)c->pid);
}

/* The metrics process gets the scoreboard read-only, through a descriptor
 * of its own opened for reading only. */
static void spawn_metrics(struct sup *s)
{
	struct child *c = &s->metrics;
	char cfd_arg[16], path[64];
	char *argv[] = { "kyud-metrics", "--config-fd", cfd_arg, "-c", s->cfg.path, NULL };
	int ro = -1, r;

	if (s->metrics_fd < 0 || s->board_fd < 0 || c->pid || s->stopping)
		return;
	snprintf(cfd_arg, sizeof(cfd_arg), "%d", PROTO_CONFIG_FD);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", s->board_fd);
	ro = open(path, O_RDONLY | O_CLOEXEC);
	if (ro < 0) {
		log_err("metrics: cannot open the scoreboard read-only: %s", strerror(errno));
		r = -1;
	} else {
		int fds[] = { -1, s->cfg_fd, ro, s->metrics_fd };
		r = spawn_child(s, c, "metrics", s->metrics_exe, argv, fds, 4);
		close(ro);
	}
	if (r < 0) {
		c->backoff = c->backoff < 1 ? 1 : c->backoff * 2 > 60 ? 60 : c->backoff * 2;
		ev_timer_set(&c->restart_w, c->backoff, 0.);
		ev_timer_start(s->loop, &c->restart_w);
		return;
	}
	log_info("metrics process started (pid %d)", (int)c->pid);
}

/* Slot i of the pool; -1: the metrics process. */
static void init_child(struct sup *s, int i)
{
	struct child *c = i < 0 ? &s->metrics : &s->children[i];
	memset(c, 0, sizeof(*c));
	c->s = s;
	c->metrics = i < 0;
	c->index = i + 1;
	c->fd = -1;
	ev_init(&c->restart_w, on_restart);
	c->restart_w.data = c;
}

static void on_kill_deadline(EV_P_ ev_timer *t, int revents)
{
	struct sup *s = t->data;
	(void)EV_A;
	(void)revents;
	for (int i = 0; i < s->n_children; i++) {
		if (s->children[i].pid) {
			log_err("worker %d (pid %d) did not stop in time; killing it", s->children[i].index,
				(int)s->children[i].pid);
			kill(s->children[i].pid, SIGKILL);
		}
	}
	if (s->metrics.pid)
		kill(s->metrics.pid, SIGKILL);
}

static void begin_stop(struct sup *s, bool now)
{
	if (!s->stopping) {
		s->stopping = true;
		log_notice("stopping%s", now ? " (interrupting running jobs)" : "");
		sdnotify_stopping(&s->sdn);
		ev_timer_stop(s->loop, &s->poll_w);
		close_wake(s);
		for (int i = 0; i < s->n_children; i++)
			ev_timer_stop(s->loop, &s->children[i].restart_w);
		ev_timer_set(&s->kill_w,
			     (now ? 0 : s->cfg.shutdown_grace) + config_max_kill_grace(&s->cfg) + 15.0, 0.);
		ev_timer_start(s->loop, &s->kill_w);
	}
	for (int i = 0; i < s->n_children; i++)
		send_msg(&s->children[i], now ? KYU_STOP_NOW : KYU_STOP);
	ev_timer_stop(s->loop, &s->metrics.restart_w);
	send_msg(&s->metrics, KYU_STOP);
	if (all_exited(s)) {
		log_notice("stopped");
		ev_break(s->loop, EVBREAK_ALL);
	}
}

static void on_term(EV_P_ ev_signal *w, int revents)
{
	struct sup *s = w->data;
	(void)EV_A;
	(void)revents;
	/* A second TERM while draining means "now". */
	begin_stop(s, s->stopping);
}

static void on_int(EV_P_ ev_signal *w, int revents)
{
	(void)EV_A;
	(void)revents;
	begin_stop(w->data, true);
}

/* Hand a running worker the configuration to apply. */
static void send_reload(struct sup *s, struct child *c)
{
	struct msg m = { .type = KYU_RELOAD };
	struct msg report = { .type = KYU_REPORT, .value = sdnotify_report_us(&s->sdn) };

	if (!c->pid || c->fd < 0)
		return;
	if (proto_send_fd(c->fd, &m, s->cfg_fd) < 0)
		log_err("worker %d (pid %d) keeps its old configuration: cannot send it the new one: %s",
			c->index, (int)c->pid, strerror(errno));
	/* The new lease may ask for reports more often. */
	(void)proto_send_fd(c->fd, &report, -1);
}

static void on_hup(EV_P_ ev_signal *w, int revents)
{
	struct sup *s = w->data;
	struct kyu_config nc;
	char err[512];
	bool listen_changed, metrics_changed;
	int nfd;
	(void)EV_A;
	(void)revents;

	if (s->stopping)
		return;
	sdnotify_reloading(&s->sdn);
	/* The file is read once, here; workers get these very bytes. */
	if (config_load_memfd(s->cfg.path, &nc, &nfd, err, sizeof(err)) < 0) {
		log_err("reload failed, keeping old config: %s", err);
		sdnotify_reloaded(&s->sdn, &s->cfg);
		return;
	}
	if (config_check_system(&nc, err, sizeof(err)) < 0) {
		log_err("reload failed, keeping old config: %s", err);
		config_free(&nc);
		close(nfd);
		sdnotify_reloaded(&s->sdn, &s->cfg);
		return;
	}
	listen_changed = strcmp(nc.listen, s->cfg.listen) != 0;
	metrics_changed = strcmp(nc.metrics, s->cfg.metrics) != 0;
	/* In force before any worker is started or told below. */
	config_free(&s->cfg);
	s->cfg = nc;
	close(s->cfg_fd);
	s->cfg_fd = nfd;
	sdnotify_configure(&s->sdn, &s->cfg);
	if (listen_changed) {
		close_wake(s);
		if (open_wake(s, &s->cfg) < 0)
			log_err("wake-ups are off until the next reload; polling continues");
	}
	if (metrics_changed) {
		int fd;
		if (s->metrics_fd >= 0)
			close(s->metrics_fd);
		if (open_metrics(s->cfg.metrics, &fd) < 0)
			log_err("metrics are off until the next reload");
		s->metrics_fd = fd;
	}
	restart_metrics(s);
	/* Grow or shrink the pool; retired workers drain and are not restarted. */
	for (int i = 0; i < s->n_children || i < s->cfg.workers; i++) {
		if (i >= s->n_children) {
			init_child(s, i);
			s->n_children = i + 1;
		}
		struct child *c = &s->children[i];
		if (i < s->cfg.workers) {
			c->retired = false;
			if (c->pid)
				send_reload(s, c);
			else if (!ev_is_active(&c->restart_w))
				spawn_worker(s, c);
		} else if (!c->retired) {
			c->retired = true;
			ev_timer_stop(s->loop, &c->restart_w);
			send_msg(c, KYU_STOP);
		}
	}
	log_set_level((enum log_level)s->cfg.log_level);
	ratelimit_init(&s->rl, s->cfg.wake_rate, mono_now());
	log_notice("reloaded %s", s->cfg.path);
	sdnotify_reloaded(&s->sdn, &s->cfg);
	sup_wake(s);
}

int sup_main(struct kyu_config *cfg, int cfg_fd)
{
	struct sup *s = xcalloc(1, sizeof(*s));
	ssize_t n;
	int rc = 0;

	log_set_role("sup");
	s->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	s->cfg_fd = cfg_fd;
	s->wake_fd = -1;
	s->board_fd = -1;
	s->metrics_fd = -1;
	init_child(s, -1);
	s->loop = EV_DEFAULT;
	sdnotify_init(&s->sdn, s->loop, &s->cfg);
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	signal(SIGPIPE, SIG_IGN);

	n = readlink("/proc/self/exe", s->exe, sizeof(s->exe) - 1);
	if (n <= 0) {
		log_err("cannot find my own executable: %s", strerror(errno));
		rc = 1;
		goto out;
	}
	s->exe[n] = '\0';
	/* kyud-metrics beside kyud (a build tree), else where it is installed. */
	{
		const char *slash = strrchr(s->exe, '/');
		snprintf(s->metrics_exe, sizeof(s->metrics_exe), "%.*s/kyud-metrics",
			 (int)(slash ? slash - s->exe : 0), s->exe);
		if (access(s->metrics_exe, X_OK) < 0)
			snprintf(s->metrics_exe, sizeof(s->metrics_exe), "%s", KYU_METRICS_EXE);
	}

	{
		char host[256];
		if (gethostname(host, sizeof(host)) < 0)
			snprintf(host, sizeof(host), "unknown");
		host[sizeof(host) - 1] = '\0';
		registry_make_id(s->id, sizeof(s->id), host, getpid());
	}
	ratelimit_init(&s->rl, s->cfg.wake_rate, mono_now());
	if (open_wake(s, &s->cfg) < 0) {
		/* The address is the configuration's: restarting will not make
		 * it bindable (systemd's RestartPreventExitStatus=78). */
		log_err("[kyud] listen = '%s' in %s cannot be used: fix it, or leave it empty to turn "
			"wake-ups off",
			s->cfg.listen, s->cfg.path);
		rc = 78;
		goto out;
	}
	if (open_metrics(s->cfg.metrics, &s->metrics_fd) < 0) {
		log_err("[kyud] metrics = '%s' in %s cannot be used: fix it, or leave it empty to turn "
			"metrics off",
			s->cfg.metrics, s->cfg.path);
		rc = 78;
		goto out;
	}
	{
		int r = board_create(&s->board, &s->board_fd);
		/* Counting is not worth refusing to run jobs for. */
		if (r < 0)
			log_warn("no scoreboard (%s): kyud's own counters and /metrics are off",
				 strerror(-r));
	}
	ev_signal_init(&s->term_w, on_term, SIGTERM);
	s->term_w.data = s;
	ev_signal_start(s->loop, &s->term_w);
	ev_signal_init(&s->int_w, on_int, SIGINT);
	s->int_w.data = s;
	ev_signal_start(s->loop, &s->int_w);
	ev_signal_init(&s->hup_w, on_hup, SIGHUP);
	s->hup_w.data = s;
	ev_signal_start(s->loop, &s->hup_w);
	ev_init(&s->poll_w, on_poll);
	s->poll_w.data = s;
	ev_init(&s->kill_w, on_kill_deadline);
	s->kill_w.data = s;
	ev_init(&s->sweep_w, on_sweep);
	s->sweep_w.data = s;
	/* A dead worker's jobs come to us rather than to init, so that
	 * sweep_orphans can stop them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		log_warn("cannot become a child subreaper (%s): jobs of a worker that dies are "
			 "not stopped before their leases expire",
			 strerror(errno));

	log_info("starting %d worker(s) x %d slot(s), lease %d s", s->cfg.workers, s->cfg.slots,
		 s->cfg.lease);
	s->n_children = s->cfg.workers;
	for (int i = 0; i < s->n_children; i++) {
		init_child(s, i);
		spawn_worker(s, &s->children[i]);
	}
	spawn_metrics(s);
	arm_poll(s, jittered(s->cfg.poll_interval));

	ev_run(s->loop, 0);
	rc = s->exit_status;
out:
	sdnotify_free(&s->sdn);
	close_wake(s);
	if (s->metrics_fd >= 0)
		close(s->metrics_fd);
	if (s->board_fd >= 0)
		close(s->board_fd);
	board_unmap(s->board);
	close(s->cfg_fd);
	config_free(&s->cfg);
	free(s);
	return rc;
}
