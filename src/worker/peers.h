/* Telling the other daemons that a limited slot is free.
 *
 * A job that held a concurrency key or a slot of a queue with max_running
 * or a rate limit frees it when its result is recorded. This worker claims
 * again at once (claim.c) and usually takes the next job itself. When its
 * claim took nothing of that queue or key (the next job is one only
 * another daemon takes: its own queues, or this one has no room), or when
 * no claim follows within PEERS_DECIDE s (a draining worker, a full one),
 * every other live daemon of kyu_daemons that serves the job's queue gets
 * the wake-up datagram `kyu submit` sends ("kyu:QUEUE", wake.h): at most
 * one claim there. A slot this worker took again costs the others nothing.
 *
 * The list of the other daemons is read from kyu_daemons when something
 * is to be announced and the list is older than a registry refresh
 * interval (a statement of its own, so at most one per interval), so an
 * announcement costs a send() per other daemon, no statement. A daemon
 * started since is heard of within that interval; a datagram that is lost
 * is what the poll is for.
 *
 * Who owns what: the ends waiting to be announced and the peers' sockets
 * are this room's. */
#ifndef KYU_PEERS_H
#define KYU_PEERS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/config.h"
#include "common/db.h"
#include "conn.h"
#include "stmt.h"
#include "store.h"

/* Other daemons addressed at most; ends waiting at most (more: every
 * daemon is told "any queue"). */
#define PEERS_MAX 64
#define PEERS_PENDING_MAX 256
/* A recorded end that no claim has answered for this long is announced. */
#define PEERS_DECIDE 0.02

struct peer {
	int fd;       /* a UDP socket connected to its wake-up address */
	char *queues; /* kyu_daemons.queues: comma list, "" = every queue */
};

/* A freed slot, from the job's end until it is announced or taken here. */
struct peer_end {
	uint64_t seq; /* the job's row */
	char *queue;
	double ended_at;    /* monotonic */
	double recorded_at; /* monotonic; 0: its result is not recorded yet */
	bool announce;      /* no claim here took its slot: tell the others */
};

struct peers {
	const struct kyu_config *cfg;
	struct conn *conn;
	const char *daemon; /* this daemon's id in kyu_daemons (the rows left out) */
	struct peer p[PEERS_MAX];
	int n;
	double read_at; /* monotonic; 0: never read */
	struct peer_end pending[PEERS_PENDING_MAX];
	int n_pending;
	bool overflow;      /* an end did not fit: tell every daemon "any queue" */
	unsigned long sent; /* datagrams sent */
};

void peers_init(struct peers *ps, const struct kyu_config *cfg, struct conn *conn,
		const char *daemon);
void peers_free(struct peers *ps);

/* The job of row seq, of queue, which held a limited slot or a key,
 * ended: its slot is free once its result is recorded. */
void peers_ended(struct peers *ps, uint64_t seq, const char *queue);
/* These results were recorded. now: announce their slots at once (no
 * claim will follow: the worker drains). */
void peers_recorded(struct peers *ps, const struct finish *f, int n, bool now);
/* A claim sent after those results took these rows: a recorded end of
 * whose queue one was taken here was taken here (for a key, its next job
 * is nearly always of the same queue; if not, and this daemon went on
 * with the queue, its next claims take it); the others are announced. */
void peers_claimed(struct peers *ps, const struct claimed *rows, int got);

/* The pump's row: reading the list of other daemons (and the moment a
 * recorded end has waited PEERS_DECIDE for a claim). */
bool peers_due(void *peers, struct stmt_turn *t);
bool peers_send(void *peers, struct stmt_turn *t, struct strbuf *sb);
void peers_reply(void *peers, const struct db_reply *r);
double peers_when(void *peers, double now);

#endif
