/* Messages between the supervisor and its workers over a SOCK_SEQPACKET
 * socketpair (the worker's end is fd 3). One message per packet. */
#ifndef KYU_PROTO_H
#define KYU_PROTO_H

#include <stdint.h>

#define PROTO_FD 3

enum msg_type {
	/* supervisor -> worker */
	KYU_WAKE = 1,  /* acquire now if you have free slots */
	KYU_STOP,      /* stop acquiring; let jobs run for shutdown_grace */
	KYU_STOP_NOW,  /* stop acquiring; interrupt running jobs at once */
	KYU_RELOAD,    /* re-read the config file */
	/* worker -> supervisor */
	KYU_READY = 16, /* started; first connection attempt done */
	KYU_IDLE,       /* acquisition found less than asked; value = µs to next due */
	KYU_MORE,       /* acquisition was full: more work is likely waiting */
};

struct msg {
	uint32_t type;
	uint32_t pad;
	int64_t value;
};

#endif
