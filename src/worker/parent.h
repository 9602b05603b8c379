/* The supervisor, as a worker sees it: the worker's parent while it
 * lives. Messages to it (hints: a full socket loses one, which its poll
 * timer covers), whether it still lives (asked of the kernel before each
 * claim and start: an orphaned worker must start nothing), and when it
 * last said anything (a worker that hears nothing for long claims by
 * itself, claim.c).
 *
 * Why a room of its own, below the claim: the claim asks whether the
 * supervisor lives and tells it what it found, while the control channel
 * (control.c, above every room) reads its messages; what the worker does
 * when the supervisor goes (stop reading, drain) is control.c's, through
 * the gone hook. Owns no row of a job. */
#ifndef KYU_PARENT_H
#define KYU_PARENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/spell.h"

struct parent {
	pid_t pid;                 /* our parent while the supervisor lives */
	bool gone;                 /* it went away: nothing is sent to it any more */
	double heard_at;           /* monotonic: its last message */
	struct spell self_polling; /* claiming by itself (logged at its start and end) */
	/* It went away (control.c: stop reading it, drain). */
	void (*on_gone)(void *ctx);
	void *ctx;
};

/* The parent is the supervisor now (heard_at is the caller's to set,
 * when the worker is ready to listen). */
void parent_init(struct parent *p, void (*on_gone)(void *ctx), void *ctx);
/* A message (proto.h) to the supervisor, unless it is gone. */
void parent_send(const struct parent *p, uint32_t type, int64_t value);
/* The same, with what the claim found in the message's pad (KYU_IDLE:
 * jobs taken), so that the supervisor can tell wake-ups that found work
 * from those that did not (proto.h). */
void parent_send_found(const struct parent *p, uint32_t type, int64_t value, uint32_t found);
/* Whether it still lives; if not, it is gone from now on (on_gone). */
bool parent_alive(struct parent *p);
/* It went away: say so, then on_gone. */
void parent_gone(struct parent *p);
/* A message came from it. */
void parent_heard(struct parent *p, double now);

#endif
