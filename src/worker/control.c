/* The control channel: what the supervisor tells a worker. See control.h. */
#include "control.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"

/* For the supervisor's readiness, STATUS= and watchdog (report.h). Not
 * connected until conn.c's schema check: a connection whose set-up is
 * still being checked does not count. */
static int64_t worker_state(void *arg)
{
	const struct control *ctl = arg;
	const struct conn *c = ctl->r.conn;
	struct worker_state st = { .connected = c->usable && db_connected(c->db),
				   .running = (unsigned)ctl->r.jobs->n_running };

	if (!st.connected)
		st.db_error = db_error_code(c->db);
	return proto_state_pack(&st);
}

void control_drain(struct control *ctl, enum drain_how how)
{
	claim_drain(ctl->r.claim);
	daemonrow_drain(ctl->r.reg);
	jobs_drain(ctl->r.jobs, how);
}

void control_parent_gone(void *control)
{
	struct control *ctl = control;

	ev_io_stop(ctl->loop, &ctl->ctl_w);
	control_drain(ctl, DRAIN_GRACE);
}

static bool same(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool db_settings_changed(const struct kyu_config *a, const struct kyu_config *b)
{
	return !same(a->db_host, b->db_host) || a->db_port != b->db_port ||
	       !same(a->db_socket, b->db_socket) || !same(a->db_user, b->db_user) ||
	       !same(a->db_password, b->db_password) || !same(a->db_name, b->db_name) ||
	       a->db_connect_timeout != b->db_connect_timeout;
}

static void reload(struct control *ctl, int fd)
{
	struct kyu_config nc;
	char err[512];
	bool db_changed;
	int r;

	if (fd < 0) {
		log_err("reload without a configuration attached; keeping the old one");
		return;
	}
	/* The bytes the supervisor validated, not the file: every worker ends
	 * up on the same configuration whatever happens to the file. */
	r = config_load_fd(fd, ctl->cfg->path, &nc, err, sizeof(err));
	close(fd);
	if (r < 0) {
		log_err("reload failed, keeping old config: %s", err);
		return;
	}
	config_keep_restart_keys(&nc, ctl->cfg);
	db_changed = db_settings_changed(&nc, ctl->cfg);
	config_free(ctl->cfg);
	*ctl->cfg = nc;
	log_set_level((enum log_level)ctl->cfg->log_level);
	jobs_configure(ctl->r.jobs);
	lease_configure(ctl->r.lease, ctl->cfg);
	live_configure(ctl->r.live, ctl->cfg);
	/* New database settings apply from a new connection, opened once the
	 * statement in flight (if any) is back. */
	if (db_changed)
		ctl->r.conn->reconnect_wanted = true;
	scheduler_reload(ctl->r.sched);
	/* The queues or the wake-up address may have changed. */
	daemonrow_refresh(ctl->r.reg);
	claim_reload(ctl->r.claim);
}

static void on_ctl(EV_P_ ev_io *io, int revents)
{
	struct control *ctl = io->data;
	struct msg m;
	int fd;
	(void)EV_A;
	(void)revents;

	for (;;) {
		ssize_t n = proto_recv(PROTO_FD, &m, &fd);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			/* The supervisor is gone: finish what we hold, then exit. */
			if (!ctl->r.parent->gone)
				parent_gone(ctl->r.parent);
			return;
		}
		if ((size_t)n != sizeof(m) || m.type != KYU_RELOAD) {
			if (fd >= 0)
				close(fd);
			fd = -1;
		}
		if ((size_t)n != sizeof(m))
			continue;
		parent_heard(ctl->r.parent, mono_now());
		switch (m.type) {
		case KYU_POLLED:
			break;
		case KYU_WAKE:
			claim_wake(ctl->r.claim, m.value == KYU_WAKE_HINTED);
			conn_wake(ctl->r.conn);
			/* Still unreachable: answer, so that the supervisor's next
			 * hint is not held back waiting for this claim. */
			if (!db_connected(ctl->r.conn->db))
				parent_send(ctl->r.parent, KYU_IDLE, INT64_MAX);
			break;
		case KYU_STOP:
			control_drain(ctl, m.value == KYU_STOP_FINISH ? DRAIN_FINISH : DRAIN_GRACE);
			break;
		case KYU_STOP_NOW:
			control_drain(ctl, DRAIN_NOW);
			break;
		case KYU_RELOAD:
			reload(ctl, fd);
			break;
		case KYU_SCHEDULES:
			/* An any-queue wake-up: a schedule changed, (sql/notify.sql)
			 * an item of kyu_after_todo was made, or a drain was asked. */
			scheduler_wake(ctl->r.sched);
			settle_wake(ctl->r.settle);
			/* Or an operator's drain (kyu drain, kyu web). */
			daemonrow_hint(ctl->r.reg, mono_now());
			break;
		case KYU_CANCEL:
			lease_hurry(ctl->r.lease, mono_now());
			break;
		case KYU_REPORT:
			report_configure(&ctl->rep, m.value);
			break;
		}
	}
}

static void on_term(EV_P_ ev_signal *s, int revents)
{
	(void)EV_A;
	(void)revents;
	control_drain(s->data, DRAIN_GRACE);
}

void control_sync(struct control *ctl)
{
	uint64_t d = db_deadlocks(ctl->r.conn->db);

	if (ctl->bw) {
		board_add(ctl->bw, BC_DEADLOCKS, d - ctl->board_deadlocks);
		ctl->board_deadlocks = d;
		board_add(ctl->bw, BC_FENCES, ctl->r.lease->fenced - ctl->board_fences);
		ctl->board_fences = ctl->r.lease->fenced;
		board_set(ctl->bw, BG_RUNNING, (uint64_t)ctl->r.jobs->n_running);
	}
	report_check(&ctl->rep);
}

void control_init(struct control *ctl, struct ev_loop *loop, struct kyu_config *cfg,
		  const struct control_rooms *rooms, struct board_worker *bw)
{
	ctl->loop = loop;
	ctl->cfg = cfg;
	ctl->r = *rooms;
	ctl->bw = bw;
	ev_io_init(&ctl->ctl_w, on_ctl, PROTO_FD, EV_READ);
	ctl->ctl_w.data = ctl;
	ev_signal_init(&ctl->term_w, on_term, SIGTERM);
	ctl->term_w.data = ctl;
	report_init(&ctl->rep, loop, PROTO_FD, worker_state, ctl);
}

void control_start(struct control *ctl)
{
	ev_io_start(ctl->loop, &ctl->ctl_w);
	ev_signal_start(ctl->loop, &ctl->term_w);
}

void control_free(struct control *ctl)
{
	ev_signal_stop(ctl->loop, &ctl->term_w);
}
