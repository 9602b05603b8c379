/* A worker's reports to the supervisor (KYU_STATE, proto.h). See report.h. */
#include "report.h"

#include <errno.h>

#include "common/proto.h"
#include "common/util.h"

/* STATUS= is worth updating about once a second; a busy worker's job count
 * changes thousands of times a second. */
#define REPORT_GAP 1.0

static void arm(struct report *r, double after)
{
	ev_timer_stop(r->loop, &r->timer);
	ev_timer_set(&r->timer, after, 0.);
	ev_timer_start(r->loop, &r->timer);
}

static void send_state(struct report *r, int64_t v, double now)
{
	struct msg m = { .type = KYU_STATE, .value = v };

	if (proto_send_fd(r->fd, &m, -1) < 0) {
		/* A full socket: the supervisor is far behind; try again a
		 * little later rather than at every turn of the loop. Any other
		 * error: it is gone, and the worker drains on its own. */
		if (errno == EAGAIN)
			arm(r, REPORT_GAP);
		else
			ev_timer_stop(r->loop, &r->timer);
		return;
	}
	r->sent = v;
	r->sent_at = now;
	if (r->every > 0)
		arm(r, r->every);
	else
		ev_timer_stop(r->loop, &r->timer);
}

/* Due: the periodic report, or a change that was held back. Either way
 * the state now goes, changed or not. */
static void on_timer(EV_P_ ev_timer *t, int revents)
{
	struct report *r = t->data;
	(void)EV_A;
	(void)revents;
	send_state(r, r->state(r->ctx), mono_now());
}

void report_init(struct report *r, struct ev_loop *loop, int fd, report_state_fn *state, void *ctx)
{
	*r = (struct report){ .loop = loop, .fd = fd, .state = state, .ctx = ctx, .sent_at = -1e9 };
	/* The supervisor starts from "not connected, nothing running": sent
	 * stays the packing of that until something else is. */
	r->sent = proto_state_pack(&(struct worker_state){ 0 });
	ev_init(&r->timer, on_timer);
	r->timer.data = r;
}

void report_configure(struct report *r, int64_t every_us)
{
	r->changes = true;
	r->every = every_us > 0 ? (double)every_us / 1e6 : 0;
	send_state(r, r->state(r->ctx), mono_now());
}

void report_check(struct report *r)
{
	int64_t v = r->state(r->ctx);
	struct worker_state now_st, sent_st;
	double now, wait;

	if (v == r->sent)
		return;
	proto_state_unpack(v, &now_st);
	proto_state_unpack(r->sent, &sent_st);
	now = mono_now();
	/* The first failed attempt is a change too (from "not yet tried"):
	 * the supervisor says it waits for the database, and why. */
	if (now_st.connected != sent_st.connected ||
	    (!now_st.connected && now_st.db_error != sent_st.db_error)) {
		send_state(r, v, now);
		return;
	}
	if (!r->changes)
		return;
	wait = r->sent_at + REPORT_GAP - now;
	if (wait <= 0) {
		send_state(r, v, now);
		return;
	}
	/* Held back: the timer sends it, unless it fires sooner anyway. */
	if (!ev_is_active(&r->timer) || ev_timer_remaining(r->loop, &r->timer) > wait)
		arm(r, wait);
}
