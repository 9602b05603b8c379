/* A token bucket: at most `rate` events per second, in bursts of up to
 * `rate`. The caller passes the time, so tests need no clock. */
#ifndef KYU_RATELIMIT_H
#define KYU_RATELIMIT_H

#include <stdbool.h>

struct ratelimit {
	double rate, tokens, last;
};

/* A full bucket at time now. */
void ratelimit_init(struct ratelimit *rl, double rate, double now);
/* True (and one token taken) when an event at time now is within the rate. */
bool ratelimit_allow(struct ratelimit *rl, double now);
/* An event that turned out worth its token gives it back (never beyond a
 * full bucket). */
void ratelimit_refund(struct ratelimit *rl);

#endif
