/* A worker's reports to the supervisor (KYU_STATE, proto.h): whether its
 * connection works and how many jobs run. The supervisor tells systemd
 * (sdnotify.h); a report sent from this loop's timer is also the proof
 * that the loop turns: a worker silent too long is killed with its jobs.
 *
 * What is sent when:
 * - a change of the connection (or of why it fails): at once, always
 *   (readiness waits for it);
 * - once the supervisor asked (KYU_REPORT, sent to every worker): any
 *   other change too, at most once per second, and every `every` seconds
 *   whatever changed, whatever the database does. */
#ifndef KYU_REPORT_H
#define KYU_REPORT_H

#include <stdbool.h>
#include <stdint.h>

#include <ev.h>

/* The worker's state now, as proto_state_pack() makes it. */
typedef int64_t report_state_fn(void *ctx);

struct report {
	struct ev_loop *loop;
	int fd;
	report_state_fn *state;
	void *ctx;
	ev_timer timer; /* the next periodic report, or a change held back */
	double every;   /* > 0: seconds between reports, changed or not */
	bool changes;   /* KYU_REPORT came: send every change */
	int64_t sent;   /* what the supervisor last got */
	double sent_at; /* monotonic */
};

void report_init(struct report *r, struct ev_loop *loop, int fd, report_state_fn *state, void *ctx);
/* KYU_REPORT's value: µs between reports, 0 for changes only. Sends the
 * state at once. */
void report_configure(struct report *r, int64_t every_us);
/* Send what changed, if it is time: run before the loop sleeps. */
void report_check(struct report *r);

#endif
