/* The wake-up listener: the UDP socket of [kyud] listen, where kyu and the
 * kyu_notify UDF send "kyu:QUEUE" datagrams. See listener.h. */
#include "listener.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "common/wake.h"

void listener_init(struct listener *l, struct ev_loop *loop, const struct kyu_config *cfg,
		   struct fanout *fan)
{
	memset(l, 0, sizeof(*l));
	l->loop = loop;
	l->cfg = cfg;
	l->fan = fan;
	l->fd = -1;
	fan->wake_bucket = &l->rl;
}

static void on_datagram(EV_P_ ev_io *io, int revents)
{
	struct listener *l = io->data;
	char buf[512], queue[WAKE_QUEUE_MAX + 1];
	bool wake = false, any = false, cancel = false, bad_now = false;
	(void)EV_A;
	(void)revents;

	/* Drain everything queued: a burst of hints becomes one wake. */
	for (int i = 0; i < 1024; i++) {
		ssize_t n = recv(l->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0)
			break;
		if (wake_is_cancel(buf, (size_t)n)) {
			cancel = any = wake = true;
			continue;
		}
		if (wake_parse(buf, (size_t)n, queue, sizeof(queue)) < 0) {
			l->hints_bad++;
			bad_now = true;
			continue;
		}
		/* "Any queue" is also what a changed schedule sends. */
		any |= !queue[0];
		if (queue[0] && l->cfg->n_queues) {
			bool ours = false;
			for (int q = 0; q < l->cfg->n_queues; q++)
				ours |= strcmp(queue, l->cfg->queues[q]) == 0;
			if (!ours)
				continue;
		}
		wake = true;
	}
	/* Anyone on the host can send junk: the first is said at once, the
	 * rest at most once a minute, counted. */
	if (bad_now &&
	    (l->hints_bad_said == 0 || mono_now() - l->bad_said_at >= LISTENER_BAD_LOG_GAP)) {
		log_notice("ignored %lu malformed wake-up datagram(s)",
			   l->hints_bad - l->hints_bad_said);
		l->hints_bad_said = l->hints_bad;
		l->bad_said_at = mono_now();
	}
	if (cancel)
		fanout_cancel(l->fan);
	if (any)
		fanout_schedules(l->fan);
	if (!wake)
		return;
	fanout_hinted(l->fan, ratelimit_allow(&l->rl, mono_now()));
}

void listener_close(struct listener *l)
{
	if (l->fd >= 0) {
		ev_io_stop(l->loop, &l->io);
		close(l->fd);
		l->fd = -1;
	}
}

void listener_set_rate(struct listener *l)
{
	ratelimit_init(&l->rl, l->cfg->wake_rate, mono_now());
}

int listener_open(struct listener *l)
{
	const struct kyu_config *cfg = l->cfg;
	char err[256];
	int fd;

	if (!cfg->listen || !*cfg->listen)
		return 0;
	fd = wake_socket(cfg->listen, true, err, sizeof(err));
	if (fd < 0) {
		log_err("%s", err);
		return fd;
	}
	listener_close(l);
	l->fd = fd;
	ev_io_init(&l->io, on_datagram, fd, EV_READ);
	l->io.data = l;
	ev_io_start(l->loop, &l->io);
	log_info("listening for wake-ups on udp %s", cfg->listen);
	return 0;
}
