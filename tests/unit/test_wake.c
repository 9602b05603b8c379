#include "check.h"
#include "wake.h"

int main(void)
{
	char q[WAKE_QUEUE_MAX + 1];
	char long_q[128];
	struct rate_limit rl;
	int allowed = 0;

	CHECK(wake_parse("kyu:", 4, q, sizeof(q)) == 0);
	CHECK_STR(q, "");
	CHECK(wake_parse("kyu:mail", 8, q, sizeof(q)) == 0);
	CHECK_STR(q, "mail");
	CHECK(wake_parse("kyu:mail\n", 9, q, sizeof(q)) == 0);
	CHECK_STR(q, "mail");
	CHECK(wake_parse("kyu", 3, q, sizeof(q)) < 0);
	CHECK(wake_parse("KYU:mail", 8, q, sizeof(q)) < 0);
	CHECK(wake_parse("kyu:ma\0il", 9, q, sizeof(q)) < 0);
	CHECK(wake_parse("kyu:a\tb", 7, q, sizeof(q)) < 0);
	CHECK(wake_parse("", 0, q, sizeof(q)) < 0);
	memcpy(long_q, "kyu:", 4);
	memset(long_q + 4, 'q', 65);
	CHECK(wake_parse(long_q, 4 + 65, q, sizeof(q)) < 0);
	CHECK(wake_parse(long_q, 4 + 64, q, sizeof(q)) == 0);

	/* Token bucket: a burst of 10 at rate 10/s, then one per 0.1 s. */
	rate_init(&rl, 10, 100.0);
	for (int i = 0; i < 100; i++)
		allowed += rate_allow(&rl, 100.0);
	CHECK(allowed == 10);
	CHECK(!rate_allow(&rl, 100.05));
	CHECK(rate_allow(&rl, 100.2));
	return check_done("wake");
}
