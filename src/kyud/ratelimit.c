/* A token bucket: at most `rate` events per second, in bursts of up to
 * `rate`. See ratelimit.h. */
#include "ratelimit.h"

void ratelimit_init(struct ratelimit *rl, double rate, double now)
{
	rl->rate = rate;
	rl->tokens = rate;
	rl->last = now;
}

bool ratelimit_allow(struct ratelimit *rl, double now)
{
	rl->tokens += (now - rl->last) * rl->rate;
	if (rl->tokens > rl->rate)
		rl->tokens = rl->rate;
	rl->last = now;
	if (rl->tokens < 1.0)
		return false;
	rl->tokens -= 1.0;
	return true;
}

void ratelimit_refund(struct ratelimit *rl)
{
	rl->tokens += 1.0;
	if (rl->tokens > rl->rate)
		rl->tokens = rl->rate;
}
