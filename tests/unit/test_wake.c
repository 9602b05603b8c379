#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/wake.h"
#include "check.h"

/* One helper makes both ends: the supervisor's bound socket and kyu's
 * connected one, and a hint sent on the latter arrives on the former. */
static void check_sockets(void)
{
	char err[256], buf[64], addr[64];
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int l, c;

	l = wake_socket("127.0.0.1:0x", true, err, sizeof(err));
	CHECK(l == -EINVAL && strstr(err, "'127.0.0.1:0x'") != NULL);
	l = wake_socket("localhost:7711", true, err, sizeof(err));
	CHECK(l == -EINVAL && strstr(err, "numeric address is required") != NULL);
	/* Port 0 is refused by the syntax (1..65535): bind a known-free one by
	 * asking the kernel first. */
	c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sin = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	CHECK(bind(c, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	CHECK(getsockname(c, (struct sockaddr *)&sin, &len) == 0);
	close(c);
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(sin.sin_port));
	l = wake_socket(addr, true, err, sizeof(err));
	CHECK(l >= 0);
	c = wake_socket(addr, false, err, sizeof(err));
	CHECK(c >= 0);
	if (l < 0 || c < 0)
		return;
	CHECK(send(c, "kyu:mail", 8, 0) == 8);
	/* Up to 10 s: loopback delivers at once, but a loaded machine may not. */
	for (int i = 0; i < 1000 && recv(l, buf, sizeof(buf), MSG_PEEK) < 0 && errno == EAGAIN; i++)
		usleep(10000);
	CHECK(recv(l, buf, sizeof(buf), 0) == 8 && memcmp(buf, "kyu:mail", 8) == 0);
	/* The listening one never blocks the supervisor. */
	CHECK(recv(l, buf, sizeof(buf), 0) < 0 && errno == EAGAIN);
	close(l);
	close(c);
}

int main(void)
{
	char q[WAKE_QUEUE_MAX + 1];
	char long_q[4 + 300];

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
	memset(long_q + 4, 'q', 257);
	CHECK(wake_parse(long_q, 4 + 257, q, sizeof(q)) < 0);
	CHECK(wake_parse(long_q, 4 + 256, q, sizeof(q)) == 0);

	/* The cancel hint: no queue wake-up can be one (a control character),
	 * and it is nothing else. */
	CHECK(wake_is_cancel("kyu:\x18", 5));
	CHECK(wake_is_cancel("kyu:\x18\n", 6));
	CHECK(wake_parse("kyu:\x18", 5, q, sizeof(q)) < 0);
	CHECK(!wake_is_cancel("kyu:", 4));
	CHECK(!wake_is_cancel("kyu:\x18x", 6));
	CHECK(!wake_is_cancel("kyu:\x18\n\n", 7));
	CHECK(!wake_is_cancel("kyu", 3));

	check_sockets();
	return check_done("wake");
}
