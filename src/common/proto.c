/* Messages between the supervisor and its workers over a SOCK_SEQPACKET
 * socketpair (the worker's end is fd 3). See proto.h. */
#include "proto.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A peer sends at most one descriptor; room for a few more lets us close
 * what a confused peer sends instead of having the kernel truncate. */
#define PROTO_MAX_FDS 4

ssize_t proto_send_fd(int sock, const struct msg *m, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	return sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
}

ssize_t proto_recv(int sock, struct msg *m, int *fd_out)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(PROTO_MAX_FDS * sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = m, .iov_len = sizeof(*m) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t n;

	if (fd_out)
		*fd_out = -1;
	n = recvmsg(sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		size_t nfds;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < nfds; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd_out && *fd_out < 0)
				*fd_out = fd;
			else
				close(fd);
		}
	}
	if (mh.msg_flags & MSG_TRUNC)
		return (ssize_t)sizeof(*m) + 1;
	return n;
}

int64_t proto_state_pack(const struct worker_state *st)
{
	uint64_t running = st->running > 0xffffff ? 0xffffff : st->running;
	uint64_t v = running | (st->connected ? 1ULL << 24 : 0) |
		     ((uint64_t)(st->db_error & 0x7fffffff) << 32);
	return (int64_t)v;
}

void proto_state_unpack(int64_t value, struct worker_state *st)
{
	uint64_t v = (uint64_t)value;

	st->running = (unsigned)(v & 0xffffff);
	st->connected = (v >> 24) & 1;
	st->db_error = (unsigned)((v >> 32) & 0x7fffffff);
}
