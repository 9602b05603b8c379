/* The rule that kills a silent worker, over the pool's table of workers
 * (pool.h; each struct child carries its life, child.h).
 *
 * A worker reports at least four times per lease - fence_margin -
 * heartbeat (KYU_STATE, report.h); one silent that long is killed with its
 * jobs, and restarted by the pool: its leases are no longer renewed and
 * its own fencing timer cannot fire, so its jobs must stop (the supervisor
 * sweeps them once it is gone, as a subreaper) before another daemon may
 * claim them. This is what lease safety rests on when a worker's loop
 * stops, whether or not systemd watches us; sdnotify.h only reports what
 * this room decides. */
#ifndef KYU_LIVENESS_H
#define KYU_LIVENESS_H

#include <stdint.h>

#include <ev.h>

#include "child.h"
#include "common/config.h"

struct liveness {
	struct ev_loop *loop;
	struct child *children; /* the pool's table */
	const int *n;           /* its slots in use */
	double kill_after;      /* s: lease - fence_margin - heartbeat */
	uint64_t watchdog_us;   /* systemd's WATCHDOG_USEC; 0: none */
	ev_timer kill_w;
};

void liveness_init(struct liveness *l, struct ev_loop *loop, struct child *children, const int *n,
		   const struct kyu_config *cfg);
void liveness_free(struct liveness *l);
/* A new configuration is in force: its lease sets the limit (before the
 * workers are sent liveness_report_us()); the deadlines are armed again. */
void liveness_configure(struct liveness *l, const struct kyu_config *cfg);
/* systemd's watchdog interval, which may ask for reports more often. */
void liveness_set_watchdog(struct liveness *l, uint64_t watchdog_us);
/* The KYU_REPORT value for a worker: µs between reports, a quarter of the
 * silence that gets it killed (or of the watchdog's interval, if shorter). */
int64_t liveness_report_us(const struct liveness *l);

/* Worker c got a process, lost it, or reported (value: KYU_STATE's). */
void liveness_spawned(struct liveness *l, struct child *c);
void liveness_exited(struct liveness *l, struct child *c);
void liveness_report(struct liveness *l, struct child *c, int64_t value);

#endif
