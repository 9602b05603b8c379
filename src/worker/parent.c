/* The supervisor, as a worker sees it: the worker's parent while it lives.
 * See parent.h. */
#include "parent.h"

#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"

void parent_init(struct parent *p, void (*on_gone)(void *ctx), void *ctx)
{
	p->pid = getppid();
	p->on_gone = on_gone;
	p->ctx = ctx;
}

void parent_send(const struct parent *p, uint32_t type, int64_t value)
{
	parent_send_found(p, type, value, 0);
}

void parent_send_found(const struct parent *p, uint32_t type, int64_t value, uint32_t found)
{
	struct msg m = { .type = type, .pad = found, .value = value };
	if (p->gone)
		return;
	/* A full socket means the supervisor is far behind; a lost hint is
	 * covered by its poll timer. */
	(void)proto_send_fd(PROTO_FD, &m, -1);
}

void parent_gone(struct parent *p)
{
	log_warn("supervisor went away; draining");
	p->gone = true;
	p->on_gone(p->ctx);
}

/* The supervisor's death closes our control socket, but that event can
 * wait behind a claim's reply in the same loop iteration, and an orphaned
 * worker must start nothing: ask the kernel before each claim and start. */
bool parent_alive(struct parent *p)
{
	char b;

	if (p->gone)
		return false;
	/* A dying process closes its descriptors before its children are
	 * re-parented, and under load the two can be far apart: the control
	 * socket's end (a zero-length read of SOCK_SEQPACKET, peeked so that
	 * a pending message stays for control.c) is the earlier sign. */
	if (getppid() != p->pid || recv(PROTO_FD, &b, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
		parent_gone(p);
	return !p->gone;
}

void parent_heard(struct parent *p, double now)
{
	p->heard_at = now;
	if (spell_end(&p->self_polling))
		log_notice("the supervisor answers again");
}
