/* The supervisor: the master process of kyud and its libev loop. See sup.h. */
#include "sup.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "child.h"
#include "fanout.h"
#include "listener.h"
#include "metricsproc.h"
#include "pool.h"
#include "sdnotify.h"
#include "sweep.h"
#include "watchproc.h"

struct sup {
	/* The configuration in force (each room reads it through a pointer
	 * to this one), and the sealed memfd of the bytes it was parsed
	 * from, for the children. */
	struct kyu_config cfg;
	int cfg_fd;
	struct ev_loop *loop;
	ev_signal term_w, int_w, hup_w;
	ev_timer kill_w; /* the stop's deadline */
	bool stopping;
	bool drain_only;     /* stopping for kyu_daemons.drain: no deadline until a TERM */
	int exit_status;     /* of the supervisor, once stopped */
	struct sdnotify sdn; /* what systemd is told */
	struct pool pool;
	struct fanout fan;
	struct listener lis;
	struct metricsproc mp;
	struct watchproc wp;
	struct sweep sweep;
};

static void on_child_msg(EV_P_ ev_io *io, int revents);
static void begin_drain(struct sup *s);
static void on_child_exit(EV_P_ ev_child *w, int revents);
static void on_restart(EV_P_ ev_timer *t, int revents);

static const struct child_ops ops = {
	.msg = on_child_msg,
	.exit = on_child_exit,
	.restart = on_restart,
};

/* Worker slots up to n (0-based, exclusive); their processes are started
 * by the pool. */
static void add_slots(struct sup *s, int n)
{
	for (int i = s->pool.n; i < n; i++)
		child_init(&s->pool.children[i], s, &ops, i + 1, false);
	if (n > s->pool.n)
		s->pool.n = n;
}

static bool all_exited(const struct sup *s)
{
	return pool_all_exited(&s->pool) && s->mp.child.pid == 0 && s->wp.child.pid == 0;
}

static void stopped_if_all_exited(struct sup *s)
{
	if (all_exited(s)) {
		log_notice("stopped");
		ev_break(s->loop, EVBREAK_ALL);
	}
}

/* ---- the children's events, each to the room that owns the child -------- */

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
		if (c->watcher) {
			watchproc_msg(&s->wp, &m);
		} else if (m.type == KYU_STATE) {
			if (!c->metrics)
				pool_report(&s->pool, c, m.value);
		} else if (m.type == KYU_DRAIN) {
			begin_drain(s);
		} else {
			fanout_msg(&s->fan, c, &m);
		}
	}
}

static void on_restart(EV_P_ ev_timer *t, int revents)
{
	struct child *c = t->data;
	struct sup *s = c->s;
	(void)EV_A;
	(void)revents;
	if (c->metrics)
		metricsproc_spawn(&s->mp, s->cfg_fd, s->pool.board_fd);
	else if (c->watcher)
		watchproc_spawn(&s->wp, s->cfg_fd);
	else
		pool_restart(&s->pool, c, s->cfg_fd);
}

static void begin_stop(struct sup *s, bool now);

static void on_child_exit(EV_P_ ev_child *w, int revents)
{
	struct child *c = w->data;
	struct sup *s = c->s;
	int st = w->rstatus;
	double ran = mono_now() - c->started;
	char how[96];
	(void)revents;

	child_reaped(EV_A_ c);
	if (!c->metrics && !c->watcher)
		pool_reaped(&s->pool, c);
	describe_wait_status(st, how, sizeof(how));
	{
		int killed = sweep_now(&s->sweep);
		if (killed > 0)
			log_warn("worker %d (pid %d) left %d job process(es) running: killed them; "
				 "their jobs run again when their leases expire",
				 c->index, (int)w->rpid, killed);
	}

	if (c->watcher) {
		bool refused;
		if (watchproc_exited(&s->wp, w->rpid, st, how, ran, s->cfg_fd, &refused))
			stopped_if_all_exited(s);
		if (refused) {
			s->exit_status = EX_CONFIG;
			begin_stop(s, false);
		}
		return;
	}
	if (c->metrics) {
		if (metricsproc_exited(&s->mp, w->rpid, how, ran, s->cfg_fd, s->pool.board_fd))
			stopped_if_all_exited(s);
		return;
	}
	switch (pool_exited(&s->pool, c, w->rpid, st, how, ran)) {
	case POOL_EXIT_GONE:
		if (s->stopping)
			stopped_if_all_exited(s);
		break;
	case POOL_EXIT_REFUSED:
		s->exit_status = EX_CONFIG;
		begin_stop(s, false);
		break;
	case POOL_EXIT_RESTARTING:
		break;
	}
}

/* ---- TERM, INT: stop ------------------------------------------------------ */

static void on_kill_deadline(EV_P_ ev_timer *t, int revents)
{
	struct sup *s = t->data;
	(void)EV_A;
	(void)revents;
	pool_kill(&s->pool);
	metricsproc_kill(&s->mp);
	watchproc_kill(&s->wp);
}

/* What every stop does first: no more wake-ups, nothing new started. */
static void stop_intake(struct sup *s)
{
	s->stopping = true;
	sdnotify_stopping(&s->sdn);
	fanout_stop(&s->fan);
	listener_close(&s->lis);
}

static void begin_stop(struct sup *s, bool now)
{
	if (!s->stopping || s->drain_only) {
		if (!s->stopping)
			stop_intake(s);
		/* A TERM during an operator's drain: from now on a stop like
		 * any other, with its grace and its deadline. */
		s->drain_only = false;
		log_notice("stopping%s", now ? " (interrupting running jobs)" : "");
		ev_timer_set(&s->kill_w,
			     (now ? 0 : s->cfg.shutdown_grace) + config_max_kill_grace(&s->cfg) +
				     15.0,
			     0.);
		ev_timer_start(s->loop, &s->kill_w);
	}
	pool_stop(&s->pool, now);
	metricsproc_stop(&s->mp);
	watchproc_stop(&s->wp);
	stopped_if_all_exited(s);
}

/* kyu_daemons.drain, read by worker 1: stop as TERM does, but let the
 * running jobs finish however long they take (their time limits bound
 * them), and exit 0. No deadline: a TERM or INT still stops it sooner. */
static void begin_drain(struct sup *s)
{
	if (s->stopping)
		return;
	stop_intake(s);
	s->drain_only = true;
	log_notice("draining (kyu_daemons.drain is set): no new claims; the running jobs finish, "
		   "then kyud exits");
	pool_drain(&s->pool);
	metricsproc_stop(&s->mp);
	watchproc_stop(&s->wp);
	stopped_if_all_exited(s);
}

static void on_term(EV_P_ ev_signal *w, int revents)
{
	struct sup *s = w->data;
	(void)EV_A;
	(void)revents;
	/* A second TERM while stopping means "now"; the first after an
	 * operator's drain gives the jobs the grace. */
	begin_stop(s, s->stopping && !s->drain_only);
}

static void on_int(EV_P_ ev_signal *w, int revents)
{
	(void)EV_A;
	(void)revents;
	begin_stop(w->data, true);
}

/* ---- HUP: reload ---------------------------------------------------------- */

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
	pool_configure(&s->pool);
	if (listen_changed) {
		listener_close(&s->lis);
		if (listener_open(&s->lis) < 0)
			log_err("wake-ups are off until the next reload; polling continues");
	}
	if (metrics_changed && metricsproc_bind(&s->mp) < 0)
		log_err("metrics are off until the next reload");
	metricsproc_replace(&s->mp, s->cfg_fd, s->pool.board_fd);
	watchproc_replace(&s->wp, s->cfg_fd);
	add_slots(s, s->cfg.workers);
	pool_reload(&s->pool, s->cfg_fd);
	log_set_level((enum log_level)s->cfg.log_level);
	listener_set_rate(&s->lis);
	log_notice("reloaded %s", s->cfg.path);
	sdnotify_reloaded(&s->sdn, &s->cfg);
	fanout_wake(&s->fan);
}

/* ---- start ---------------------------------------------------------------- */

int sup_main(struct kyu_config *cfg, int cfg_fd)
{
	struct sup *s = xcalloc(1, sizeof(*s));
	int rc = 0;

	log_set_role("sup");
	s->cfg = *cfg;
	memset(cfg, 0, sizeof(*cfg));
	s->cfg_fd = cfg_fd;
	s->loop = EV_DEFAULT;
	pool_init(&s->pool, s->loop, &s->cfg, &s->sdn);
	fanout_init(&s->fan, s->loop, &s->cfg, &s->pool, &s->sdn);
	listener_init(&s->lis, s->loop, &s->cfg, &s->fan);
	metricsproc_init(&s->mp, s->loop, &s->cfg);
	child_init(&s->mp.child, s, &ops, 0, true);
	watchproc_init(&s->wp, s->loop, &s->cfg, &s->fan);
	child_init(&s->wp.child, s, &ops, 0, false);
	s->wp.child.watcher = true;
	sweep_init(&s->sweep, s->loop, &s->pool, &s->mp, &s->wp.child);
	sdnotify_init(&s->sdn, s->loop, &s->cfg, s->pool.children, &s->pool.n);
	liveness_set_watchdog(&s->pool.live, s->sdn.watchdog_us);
	srandom((unsigned)getpid() ^ (unsigned)time(NULL));
	signal(SIGPIPE, SIG_IGN);

	if (pool_find_exe(&s->pool) < 0) {
		rc = 1;
		goto out;
	}
	metricsproc_find_exe(&s->mp, s->pool.exe);
	pool_make_id(&s->pool);
	s->wp.exe = s->pool.exe;
	s->wp.id = s->pool.id;
	listener_set_rate(&s->lis);
	if (listener_open(&s->lis) < 0) {
		/* The address is the configuration's: restarting will not make
		 * it bindable (systemd's RestartPreventExitStatus=78). */
		log_err("[kyud] listen = '%s' in %s cannot be used: fix it, or leave it empty to turn "
			"wake-ups off",
			s->cfg.listen, s->cfg.path);
		rc = 78;
		goto out;
	}
	if (metricsproc_bind(&s->mp) < 0) {
		log_err("[kyud] metrics = '%s' in %s cannot be used: fix it, or leave it empty to turn "
			"metrics off",
			s->cfg.metrics, s->cfg.path);
		rc = 78;
		goto out;
	}
	pool_create_board(&s->pool);
	ev_signal_init(&s->term_w, on_term, SIGTERM);
	s->term_w.data = s;
	ev_signal_start(s->loop, &s->term_w);
	ev_signal_init(&s->int_w, on_int, SIGINT);
	s->int_w.data = s;
	ev_signal_start(s->loop, &s->int_w);
	ev_signal_init(&s->hup_w, on_hup, SIGHUP);
	s->hup_w.data = s;
	ev_signal_start(s->loop, &s->hup_w);
	ev_init(&s->kill_w, on_kill_deadline);
	s->kill_w.data = s;
	sweep_subreaper();

	log_info("starting %d worker(s) x %d slot(s), lease %d s", s->cfg.workers, s->cfg.slots,
		 s->cfg.lease);
	add_slots(s, s->cfg.workers);
	pool_start(&s->pool, s->cfg_fd);
	metricsproc_spawn(&s->mp, s->cfg_fd, s->pool.board_fd);
	s->wp.board_fd = s->pool.board_fd;
	watchproc_spawn(&s->wp, s->cfg_fd);
	fanout_start(&s->fan);

	ev_run(s->loop, 0);
	rc = s->exit_status;
out:
	sdnotify_free(&s->sdn);
	listener_close(&s->lis);
	metricsproc_close(&s->mp);
	pool_free(&s->pool);
	close(s->cfg_fd);
	config_free(&s->cfg);
	free(s);
	return rc;
}
