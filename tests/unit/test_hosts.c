/* The host lists of [database] host and replica (hosts.c). */
#include <errno.h>

#include "common/hosts.h"
#include "check.h"

static void test_lists(void)
{
	struct host_port h[HOSTS_MAX];
	int n = -1;

	CHECK(hosts_parse("", 3306, h, HOSTS_MAX, &n) == 0 && n == 0);
	CHECK(hosts_parse(NULL, 3306, h, HOSTS_MAX, &n) == 0 && n == 0);

	CHECK(hosts_parse("db1", 3306, h, HOSTS_MAX, &n) == 0 && n == 1);
	CHECK_STR(h[0].name, "db1");
	CHECK(h[0].port == 3306);

	/* Order kept, ports optional, blanks around entries ignored. */
	CHECK(hosts_parse(" node1:4401 ,node2, 10.0.0.3:4403", 3307, h, HOSTS_MAX, &n) == 0 && n == 3);
	CHECK_STR(h[0].name, "node1");
	CHECK(h[0].port == 4401);
	CHECK_STR(h[1].name, "node2");
	CHECK(h[1].port == 3307);
	CHECK_STR(h[2].name, "10.0.0.3");
	CHECK(h[2].port == 4403);

	/* IPv6: a port needs brackets; a bare address has none. */
	CHECK(hosts_parse("[::1]:4405,::1,[fe80::2]", 3306, h, HOSTS_MAX, &n) == 0 && n == 3);
	CHECK_STR(h[0].name, "::1");
	CHECK(h[0].port == 4405);
	CHECK_STR(h[1].name, "::1");
	CHECK(h[1].port == 3306);
	CHECK_STR(h[2].name, "fe80::2");
	CHECK(h[2].port == 3306);
}

static void test_refused(void)
{
	struct host_port h[HOSTS_MAX];
	static const char *const bad[] = {
		"a,,b", "a,", ",a", " , ", "a:", "a:0", "a:65536", "a:x", "a:33x", "[::1", "[::1]x", "[]:3306", ":3306",
	};
	int n;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = hosts_parse(bad[i], 3306, h, HOSTS_MAX, &n);
		CHECK(rc == -EINVAL);
		if (rc != -EINVAL)
			fprintf(stderr, "  accepted: \"%s\"\n", bad[i]);
	}
	CHECK(hosts_parse("a,b,c", 3306, h, 2, &n) == -E2BIG);
	CHECK(hosts_parse("a,b", 3306, h, 2, &n) == 0 && n == 2);
}

int main(void)
{
	test_lists();
	test_refused();
	return check_done("hosts");
}
