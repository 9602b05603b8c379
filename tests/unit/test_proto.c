#include <errno.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/proto.h"
#include "check.h"

/* True when fd is an open descriptor. */
static int is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

int main(void)
{
	struct msg m = { .type = KYU_RELOAD, .value = 42 }, got;
	int sv[2], pfd[2], fd;

	CHECK(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
	CHECK(pipe2(pfd, O_CLOEXEC) == 0);

	/* Nothing waiting: EAGAIN, not a block. */
	CHECK(proto_recv(sv[1], &got, &fd) < 0 && errno == EAGAIN && fd == -1);

	/* A message with a descriptor: the receiver's copy works and is
	 * close-on-exec; the sender keeps its own. */
	CHECK(proto_send_fd(sv[0], &m, pfd[1]) == (ssize_t)sizeof(m));
	CHECK(proto_recv(sv[1], &got, &fd) == (ssize_t)sizeof(got));
	CHECK(got.type == KYU_RELOAD && got.value == 42);
	CHECK(fd >= 0 && fd != pfd[1] && (fcntl(fd, F_GETFD) & FD_CLOEXEC));
	CHECK(is_open(pfd[1]));
	if (fd >= 0) {
		char c = 0;
		CHECK(write(fd, "x", 1) == 1 && read(pfd[0], &c, 1) == 1 && c == 'x');
		close(fd);
	}

	/* Without one. */
	m.type = KYU_WAKE;
	CHECK(proto_send_fd(sv[0], &m, -1) == (ssize_t)sizeof(m));
	CHECK(proto_recv(sv[1], &got, &fd) == (ssize_t)sizeof(got) && got.type == KYU_WAKE &&
	      fd == -1);

	/* A descriptor the receiver does not want is closed, not leaked: the
	 * pipe's write end then has no copy left but the sender's. */
	CHECK(proto_send_fd(sv[0], &m, pfd[1]) == (ssize_t)sizeof(m));
	CHECK(proto_recv(sv[1], &got, NULL) == (ssize_t)sizeof(got));
	close(pfd[1]);
	{
		char c;
		CHECK(read(pfd[0], &c, 1) == 0); /* EOF: every write end is closed */
	}

	/* A packet of another size is not a message. */
	CHECK(send(sv[0], "xy", 2, 0) == 2);
	CHECK(proto_recv(sv[1], &got, &fd) == 2 && fd == -1);
	{
		char big[64] = { 0 };
		CHECK(send(sv[0], big, sizeof(big), 0) == (ssize_t)sizeof(big));
		CHECK(proto_recv(sv[1], &got, &fd) == (ssize_t)sizeof(got) + 1);
	}

	/* EOF once the peer is gone. */
	close(sv[0]);
	CHECK(proto_recv(sv[1], &got, &fd) == 0);
	close(sv[1]);
	close(pfd[0]);

	/* A worker's state survives the 64-bit value; counts beyond the field
	 * saturate instead of wrapping into the connected bit. */
	{
		struct worker_state in = { .connected = true, .running = 1024, .db_error = 2002 }, out;
		proto_state_unpack(proto_state_pack(&in), &out);
		CHECK(out.connected && out.running == 1024 && out.db_error == 2002);
		in = (struct worker_state){ .running = 1u << 25, .db_error = 0xffffffffu };
		proto_state_unpack(proto_state_pack(&in), &out);
		CHECK(!out.connected && out.running == 0xffffff && out.db_error == 0x7fffffff);
		CHECK(proto_state_pack(&in) >= 0);
		in = (struct worker_state){ 0 };
		CHECK(proto_state_pack(&in) == 0);
	}
	return check_done("proto");
}
