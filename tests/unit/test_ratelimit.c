#include "check.h"
#include "kyud/ratelimit.h"

int main(void)
{
	struct ratelimit rl;
	int allowed = 0;

	/* A burst of 10 at rate 10/s, then one per 0.1 s. */
	ratelimit_init(&rl, 10, 100.0);
	for (int i = 0; i < 100; i++)
		allowed += ratelimit_allow(&rl, 100.0);
	CHECK(allowed == 10);
	CHECK(!ratelimit_allow(&rl, 100.05));
	CHECK(ratelimit_allow(&rl, 100.2));
	/* A long quiet spell refills the bucket to the rate, not beyond. */
	allowed = 0;
	for (int i = 0; i < 100; i++)
		allowed += ratelimit_allow(&rl, 1000.0);
	CHECK(allowed == 10);
	/* A refunded token can be spent again; refunds never overfill. */
	ratelimit_init(&rl, 2, 500.0);
	CHECK(ratelimit_allow(&rl, 500.0));
	CHECK(ratelimit_allow(&rl, 500.0));
	CHECK(!ratelimit_allow(&rl, 500.0));
	ratelimit_refund(&rl);
	CHECK(ratelimit_allow(&rl, 500.0));
	CHECK(!ratelimit_allow(&rl, 500.0));
	for (int i = 0; i < 10; i++)
		ratelimit_refund(&rl);
	allowed = 0;
	for (int i = 0; i < 10; i++)
		allowed += ratelimit_allow(&rl, 500.0);
	CHECK(allowed == 2);
	return check_done("ratelimit");
}
