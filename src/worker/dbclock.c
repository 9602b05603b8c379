/* The database server's clock, watched with the worker's own monotonic clock
 *. See dbclock.h. */
#include "dbclock.h"

/* A steady clock drifts or is slewed by far less than this (NTP slews at
 * most 500 ppm). */
#define DBCLOCK_DRIFT 0.001

int64_t dbclock_read(struct dbclock *c, int64_t db_us, double sent, double got)
{
	int64_t step = 0;

	if (c->known) {
		/* The server read the earlier time somewhere between c->sent and
		 * c->got, the later one between sent and got: a steady clock moved
		 * at least sent - c->got and at most got - c->sent. */
		double moved = (double)(db_us - c->db_us) / 1e6;
		double slack = DBCLOCK_TOLERANCE + DBCLOCK_DRIFT * (got - c->sent);
		double lo = sent - c->got - slack, hi = got - c->sent + slack;

		if (moved > hi)
			step = (int64_t)((moved - (got - c->sent)) * 1e6);
		else if (moved < lo)
			step = (int64_t)((moved - (sent - c->got)) * 1e6);
	}
	/* The first reading counts as a step's: a step just before it cannot
	 * be told from a clock that was always there. */
	if (!c->known || step != 0)
		c->steady_since = got;
	c->known = true;
	c->db_us = db_us;
	c->sent = sent;
	c->got = got;
	return step;
}

int64_t dbclock_predict_us(const struct dbclock *c, double now)
{
	return c->db_us + (int64_t)((now - c->sent) * 1e6);
}

double dbclock_steady_for(const struct dbclock *c, double now)
{
	return c->known ? now - c->steady_since : 0;
}
