/* The server's clock watched with ours (src/worker/dbclock.c, issue 44.2). */
#include <stdint.h>

#include "worker/dbclock.h"
#include "check.h"

#define S 1000000LL

static void test_steady(void)
{
	struct dbclock c = { 0 };
	const int64_t t0 = 1795000000 * S;

	CHECK(!c.known);
	CHECK(dbclock_steady_for(&c, 10.0) == 0);
	/* The first reading: no step, steady from its reply. */
	CHECK(dbclock_read(&c, t0, 100.0, 100.01) == 0);
	CHECK(c.known);
	CHECK(dbclock_steady_for(&c, 130.01) > 29.99);
	/* 60 s later on both clocks; a 0.5 s round trip and 0.5 s off: no step. */
	CHECK(dbclock_read(&c, t0 + 60 * S + S / 2, 160.0, 160.5) == 0);
	CHECK(dbclock_steady_for(&c, 160.5) > 60.4);
	/* The prediction is the latest the server's clock can read: from the
	 * moment the statement was sent. */
	CHECK(dbclock_predict_us(&c, 170.0) == t0 + 60 * S + S / 2 + 10 * S);
	/* A slewed clock over a long idle spell (0.05 % of an hour): no step. */
	CHECK(dbclock_read(&c, t0 + 3660 * S + S / 2 + 1800000, 3760.0, 3760.01) == 0);
}

static void test_steps(void)
{
	struct dbclock c = { 0 };
	const int64_t t0 = 1795000000 * S;
	int64_t step;

	dbclock_read(&c, t0, 100.0, 100.01);
	/* +3600 s in 5 s: a step of about +3595 s. */
	step = dbclock_read(&c, t0 + 3605 * S, 105.0, 105.01);
	CHECK(step > 3594 * S && step < 3601 * S);
	CHECK(dbclock_steady_for(&c, 105.01) == 0);
	CHECK(dbclock_steady_for(&c, 111.01) > 5.99);
	/* Steady again from there. */
	CHECK(dbclock_read(&c, t0 + 3615 * S, 115.0, 115.01) == 0);
	CHECK(dbclock_steady_for(&c, 115.01) > 9.99);
	/* -3600 s: a backward step. */
	step = dbclock_read(&c, t0 + 20 * S, 120.0, 120.01);
	CHECK(step < -3599 * S && step > -3601 * S);
	/* A small one, beyond the tolerance: 3 s forward in 1 s. */
	dbclock_read(&c, t0 + 30 * S, 130.0, 130.01);
	step = dbclock_read(&c, t0 + 34 * S, 131.0, 131.01);
	CHECK(step > 2 * S && step < 4 * S);
	/* A long round trip explains a large difference: no step. */
	dbclock_read(&c, t0 + 40 * S, 140.0, 140.01);
	CHECK(dbclock_read(&c, t0 + 49 * S, 141.0, 149.5) == 0);
}

int main(void)
{
	test_steady();
	test_steps();
	return check_done("dbclock");
}
