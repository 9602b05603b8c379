/* The prefetch policy (how far ahead to claim) and the ring of held rows.
 * Held rows own heap strings: run under -DKYU_SANITIZE=ON to see that
 * pop moves them and prefetch_free frees what is still held. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/prefetch.h"
#include "check.h"

#define NEAR(a, b) (fabs((a) - (b)) < 1e-12)

static struct claimed row(uint64_t seq)
{
	struct claimed c;
	char id[32];

	memset(&c, 0, sizeof(c));
	snprintf(id, sizeof(id), "id-%llu", (unsigned long long)seq);
	c.seq = seq;
	c.token = 1000 + seq;
	c.id = xstrdup(id);
	c.queue = xstrdup("default");
	c.command = xstrdup("true");
	c.argv_json = NULL;
	c.env_json = xstrdup("{}");
	c.cwd = NULL;
	c.attempts = 1;
	c.max_attempts = 3;
	c.claimed_at = 100.0 + (double)seq;
	return c;
}

static bool cleared(const struct claimed *c)
{
	static const struct claimed zero;
	return memcmp(c, &zero, sizeof(zero)) == 0;
}

static void test_target(void)
{
	struct prefetch p;

	/* Nothing until a run is seen. */
	prefetch_init(&p, 8, 100, 30, 5);
	CHECK(p.avg_run == 0);
	CHECK(prefetch_target(&p) == 0);
	/* The first run is the average: 8 slots * 0.1 s / 0.03 s = 26.7. */
	prefetch_ran(&p, 0.03);
	CHECK(NEAR(p.avg_run, 0.03));
	CHECK(prefetch_target(&p) == 26);
	/* Then a moving average with weight 1/8: 0.03 + (0.07 - 0.03) / 8. */
	prefetch_ran(&p, 0.07);
	CHECK(NEAR(p.avg_run, 0.035));
	CHECK(prefetch_target(&p) == 22); /* 0.8 / 0.035 = 22.9 */
	prefetch_ran(&p, 0.035 - 8 * 0.005);
	CHECK(NEAR(p.avg_run, 0.03));
	/* Long jobs: less than one row ahead is none. */
	prefetch_ran(&p, 7.03);
	CHECK(NEAR(p.avg_run, 0.905));
	CHECK(prefetch_target(&p) == 0);
	prefetch_free(&p);

	/* Capped at max. */
	prefetch_init(&p, 8, 5, 30, 5);
	prefetch_ran(&p, 0.03);
	CHECK(prefetch_target(&p) == 5);
	prefetch_ran(&p, 0.000001);
	CHECK(prefetch_target(&p) == 5);
	prefetch_free(&p);
	prefetch_init(&p, 10, 5, 30, 5);
	prefetch_ran(&p, 0.07); /* 1 / 0.07 = 14.3 */
	CHECK(prefetch_target(&p) == 5);
	prefetch_free(&p);

	/* max 0: never ahead. */
	prefetch_init(&p, 8, 0, 30, 5);
	CHECK(prefetch_target(&p) == 0);
	prefetch_ran(&p, 0.0001);
	CHECK(prefetch_target(&p) == 0);
	prefetch_free(&p);
}

static void test_hold_limit(void)
{
	struct prefetch p;

	/* min(HOLD_LIMIT, (lease - fence_margin) / 2) */
	prefetch_init(&p, 4, 4, 30, 5);
	CHECK(NEAR(p.hold_limit, 1.0));
	prefetch_free(&p);
	prefetch_init(&p, 4, 4, 4, 2);
	CHECK(NEAR(p.hold_limit, 1.0));
	prefetch_free(&p);
	prefetch_init(&p, 4, 4, 3, 2);
	CHECK(NEAR(p.hold_limit, 0.5));
	prefetch_free(&p);
	prefetch_init(&p, 4, 4, 5, 2);
	CHECK(NEAR(p.hold_limit, 1.0));
	prefetch_free(&p);
	prefetch_init(&p, 4, 4, 2, 1);
	CHECK(NEAR(p.hold_limit, 0.5));
	prefetch_free(&p);
}

static void test_rate(void)
{
	struct prefetch p;

	/* hold limit 1 s: at most what the last ends' rate starts in 0.5 s. */
	prefetch_init(&p, 8, 256, 30, 5);
	prefetch_ran(&p, 0.001); /* alone: 8 * 0.1 / 0.001 = 800, capped at 256 */
	CHECK(prefetch_target(&p) == 256);
	/* Fewer than two ends: no rate yet, the target alone. */
	CHECK(prefetch_room(&p) == 256);
	prefetch_ended(&p, 100.0);
	CHECK(prefetch_room(&p) == 256);
	/* 11 ends 10 ms apart: 100 a second, 50 in half a second. */
	for (int i = 1; i <= 10; i++)
		prefetch_ended(&p, 100.0 + i * 0.01);
	CHECK(prefetch_room(&p) == 50);
	/* Ends at once (one reap of several): no rate from them. */
	prefetch_free(&p);
	prefetch_init(&p, 8, 256, 30, 5);
	prefetch_ran(&p, 0.001);
	prefetch_ended(&p, 7.0);
	prefetch_ended(&p, 7.0);
	CHECK(prefetch_room(&p) == 256);
	/* The ring keeps the last 32: 40 ends, the first 8 slow, then 1 ms
	 * apart: the rate is that of the last 32 (1,000 a second). */
	for (int i = 0; i < 8; i++)
		prefetch_ended(&p, 10.0 + i);
	for (int i = 0; i < 32; i++)
		prefetch_ended(&p, 20.0 + i * 0.001);
	CHECK(p.n_ends == 32);
	CHECK(prefetch_room(&p) == 256); /* 500 > 256 */
	/* Slow ends: 2 a second, one ahead. */
	for (int i = 0; i < 32; i++)
		prefetch_ended(&p, 30.0 + i * 0.5);
	CHECK(prefetch_room(&p) == 1);
	/* A long average bounds it below the rate's. */
	for (int i = 0; i < 32; i++)
		prefetch_ended(&p, 50.0 + i * 0.001);
	prefetch_ran(&p, 3.0);
	CHECK(prefetch_room(&p) == prefetch_target(&p));
	CHECK(prefetch_target(&p) < 256);
	prefetch_free(&p);

	/* The quiet spell after the ends does not matter: a rate, not a count. */
	prefetch_init(&p, 1, 16, 10, 2);
	prefetch_ran(&p, 0.002);
	for (int i = 0; i < 40; i++)
		prefetch_ended(&p, 5.0 + i * 0.002);
	CHECK(prefetch_room(&p) == 16);
	prefetch_free(&p);
}

static void test_gave_back(void)
{
	struct prefetch p;

	/* A give-back raises the average to the hold limit ... */
	prefetch_init(&p, 50, 100, 30, 5);
	prefetch_ran(&p, 0.01);
	CHECK(prefetch_target(&p) == 100); /* 5 / 0.01 = 500, capped */
	prefetch_gave_back(&p);
	CHECK(NEAR(p.avg_run, 1.0));
	CHECK(prefetch_target(&p) == 5); /* 5 / 1.0 */
	/* ... and short jobs pull it down again. */
	for (int i = 0; i < 100; i++)
		prefetch_ran(&p, 0.01);
	CHECK(p.avg_run < 0.011);
	CHECK(prefetch_target(&p) == 100);
	prefetch_free(&p);

	/* Never lowers it. */
	prefetch_init(&p, 50, 100, 30, 5);
	prefetch_ran(&p, 3.0);
	prefetch_gave_back(&p);
	CHECK(NEAR(p.avg_run, 3.0));
	prefetch_free(&p);

	/* The limit from a short lease. */
	prefetch_init(&p, 50, 100, 3, 2);
	prefetch_ran(&p, 0.1);
	prefetch_gave_back(&p);
	CHECK(NEAR(p.avg_run, 0.5));
	CHECK(prefetch_target(&p) == 10);
	prefetch_free(&p);
}

static void test_ring(void)
{
	struct prefetch p;
	struct claimed c, out;
	char *id;
	uint64_t next_in = 1, next_out = 1;

	prefetch_init(&p, 2, 1, 30, 5); /* room for slots + max = 3 */
	CHECK(p.cap == 3);
	CHECK(p.n == 0);
	CHECK(prefetch_expiry(&p) == 0);
	memset(&out, 0x5a, sizeof(out));
	CHECK(!prefetch_pop(&p, &out));

	/* Push moves: c is cleared. */
	for (; next_in <= 3; next_in++) {
		c = row(next_in);
		CHECK(prefetch_push(&p, &c));
		CHECK(cleared(&c));
	}
	CHECK(p.n == 3);
	/* The oldest decides the expiry. */
	CHECK(NEAR(prefetch_expiry(&p), 101.0 + 1.0));

	/* Full: false, c left as it was. */
	c = row(next_in);
	id = c.id;
	CHECK(!prefetch_push(&p, &c));
	CHECK(c.seq == 4);
	CHECK(c.id == id);
	CHECK_STR(c.id, "id-4");
	CHECK(c.token == 1004);
	CHECK(p.n == 3);

	/* Pop moves the oldest and clears its place. */
	CHECK(prefetch_pop(&p, &out));
	CHECK(out.seq == next_out);
	CHECK_STR(out.id, "id-1");
	CHECK_STR(out.command, "true");
	CHECK(out.argv_json == NULL);
	CHECK(out.claimed_at == 101.0);
	CHECK(cleared(&p.ring[0]));
	CHECK(p.n == 2);
	CHECK(p.head == 1);
	store_claimed_clear(&out);
	next_out++;
	CHECK(NEAR(prefetch_expiry(&p), 102.0 + 1.0));

	/* Now it fits: it goes where the popped one was (wrap-around). */
	CHECK(prefetch_push(&p, &c));
	CHECK(cleared(&c));
	CHECK(p.ring[0].seq == 4);
	next_in++;

	/* Many rounds around the ring, in order, at every fill level: two
	 * pops, three pushes (the last of which finds it full). */
	for (int round = 0; round < 40; round++) {
		int n = p.n;
		if (round % 5 < 2) {
			CHECK(prefetch_pop(&p, &out) == (n > 0));
			if (n > 0) {
				CHECK(out.seq == next_out);
				CHECK(out.token == 1000 + next_out);
				CHECK(out.claimed_at == 100.0 + (double)next_out);
				store_claimed_clear(&out);
				next_out++;
			}
		} else {
			c = row(next_in);
			CHECK(prefetch_push(&p, &c) == (n < p.cap));
			if (n < p.cap) {
				CHECK(cleared(&c));
				next_in++;
			} else {
				CHECK(c.seq == next_in);
				store_claimed_clear(&c);
			}
		}
		CHECK(p.n == (int)(next_in - next_out));
		CHECK(p.head >= 0 && p.head < p.cap);
		if (p.n)
			CHECK(NEAR(prefetch_expiry(&p), 100.0 + (double)next_out + 1.0));
	}
	while (prefetch_pop(&p, &out)) {
		CHECK(out.seq == next_out);
		store_claimed_clear(&out);
		next_out++;
	}
	CHECK(next_out == next_in);
	CHECK(p.n == 0);
	CHECK(prefetch_expiry(&p) == 0);
	for (int i = 0; i < p.cap; i++)
		CHECK(cleared(&p.ring[i]));
	prefetch_free(&p);
	CHECK(p.ring == NULL);
}

static void test_free_held(void)
{
	struct prefetch p;
	struct claimed c, out;

	/* Rows still held at the end are freed with the ring (ASan/LSan
	 * would report a leak otherwise), including after wrapping. */
	prefetch_init(&p, 2, 2, 30, 5);
	for (uint64_t s = 1; s <= 4; s++) {
		c = row(s);
		CHECK(prefetch_push(&p, &c));
	}
	CHECK(prefetch_pop(&p, &out));
	store_claimed_clear(&out);
	CHECK(prefetch_pop(&p, &out));
	store_claimed_clear(&out);
	c = row(5);
	CHECK(prefetch_push(&p, &c));
	CHECK(p.n == 3);
	prefetch_free(&p);
	CHECK(p.ring == NULL);
	CHECK(p.n == 0);
}

int main(void)
{
	test_target();
	test_hold_limit();
	test_rate();
	test_gave_back();
	test_ring();
	test_free_held();
	return check_done("prefetch");
}
