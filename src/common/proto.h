/* Messages between the supervisor and its workers over a SOCK_SEQPACKET
 * socketpair (the worker's end is fd 3). One message per packet; a
 * KYU_RELOAD carries the new configuration as a descriptor (SCM_RIGHTS).
 * Used by kyud's supervisor (src/kyud) and workers (src/worker), and by
 * kyud-metrics (src/metrics), which the supervisor talks to the same
 * way. */
#ifndef KYU_PROTO_H
#define KYU_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "attr.h"

#define PROTO_FD 3
/* A worker starts with the configuration it must use on this descriptor:
 * a sealed memfd holding the bytes the supervisor validated (passed as
 * --config-fd 4). */
#define PROTO_CONFIG_FD 4

enum msg_type {
	/* supervisor -> worker */
	KYU_WAKE = 1,  /* acquire now if you have free slots; value KYU_WAKE_HINTED: a
			* wake-up datagram asked for it */
	KYU_STOP,      /* stop acquiring; let jobs run for shutdown_grace (value
			* KYU_STOP_FINISH: until they end, for a drain) */
	KYU_STOP_NOW,  /* stop acquiring; interrupt running jobs at once */
	KYU_RELOAD,    /* apply the configuration in the attached descriptor */
	KYU_SCHEDULES, /* a schedule may have changed: read kyu_schedules again */
	KYU_REPORT,    /* send KYU_STATE when it changes (at most once a second), and
			* every value µs when value > 0: the proof that the loop turns */
	KYU_POLLED,    /* the supervisor's poll timer fired (it woke one worker): a
			* worker that hears nothing for long claims by itself */
	KYU_CANCEL,    /* a running job may have been cancelled: renew leases now */
	/* worker -> supervisor */
	KYU_READY = 16, /* started; first connection attempt done */
	KYU_IDLE,       /* acquisition found less than asked; value = µs to next due,
			 * pad = the jobs it took */
	KYU_MORE,       /* acquisition was full: more work is likely waiting */
	KYU_STATE,      /* value = proto_state_pack(): sent from a timer of the worker's
			 * loop, so its arrival also says that the loop turns */
	KYU_DRAIN,      /* worker 1 read kyu_daemons.drain set: drain the daemon */
	/* watcher -> supervisor */
	KYU_HINT = 32, /* value: what changed, KYU_HINT_* bits (watch/follow.h) */
};

/* The bits of KYU_HINT's value: a committed change made a job due in a
 * queue this daemon serves; a running job may have been cancelled; a
 * schedule may have changed. */
#define KYU_HINT_WAKE 1
#define KYU_HINT_CANCEL 2
#define KYU_HINT_SCHEDULES 4

#define KYU_WAKE_HINTED 1
/* KYU_STOP's value for a drain: no shutdown_grace, the jobs run to their
 * end (their time limits still hold). */
#define KYU_STOP_FINISH 1

struct msg {
	uint32_t type;
	uint32_t pad;
	int64_t value;
};

/* What a worker reports in KYU_STATE. */
struct worker_state {
	bool connected;    /* to the database, and the connection checked */
	unsigned running;  /* jobs running (at most 2^24 - 1 counted) */
	unsigned db_error; /* the connection's last error number while not connected
			    * (MariaDB's, or DB_ERR_NO_ANSWER), else 0; 31 bits */
};

/* Bits 0-23 running, bit 24 connected, bits 32-62 db_error: a number, so
 * that nothing a server wrote (nor a password) crosses the channel. */
int64_t proto_state_pack(const struct worker_state *st);
void proto_state_unpack(int64_t value, struct worker_state *st);

/* Send one message without blocking (MSG_DONTWAIT, no SIGPIPE), with the
 * descriptor fd attached when fd >= 0 (the receiver gets its own copy; the
 * caller keeps fd). Returns as send(2). A full socket drops the message:
 * the supervisor's poll timer covers a lost hint. */
ssize_t proto_send_fd(int sock, const struct msg *m, int fd);

/* Receive one message without blocking, as recv(2) does: the packet's
 * length (anything but sizeof(*m) is not a message; a longer packet is
 * reported as sizeof(*m) + 1), 0 at EOF, or -1 with errno (EAGAIN: none
 * waiting). A descriptor that came with it is stored in *fd_out
 * (close-on-exec; the caller closes it), else *fd_out = -1; with fd_out
 * NULL, or beyond the first, received descriptors are closed. */
KYU_MUSTCHECK ssize_t proto_recv(int sock, struct msg *m, int *fd_out);

#endif
