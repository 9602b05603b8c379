/* Telling the other daemons that a limited slot is free (issue 29).
 *
 * A job that held a concurrency key or a slot of a queue with max_running
 * or a rate limit frees it when its result is recorded. This worker claims
 * again at once (claim.c), but the next job of that queue or key may be
 * one only another daemon can take (its own queues, or this one has no
 * room), and the other daemons would otherwise look again only at their
 * poll or a lease later. So once such a result is recorded, every other
 * live daemon of kyu_daemons that serves the job's queue gets the same
 * wake-up datagram `kyu submit` sends ("kyu:QUEUE", wake.h): at most one
 * claim there.
 *
 * The list of the other daemons is read from kyu_daemons when a slot was
 * freed and the list is older than a registry refresh interval (a
 * statement of its own, only while limited jobs end; none for a daemon
 * without them), so each end costs a send() per other daemon, no
 * statement. A daemon started since is heard of within that interval; a
 * datagram that is lost is what the poll is for.
 *
 * Who owns what: the queue names waiting to be announced and the peers'
 * sockets are this room's. */
#ifndef KYU_PEERS_H
#define KYU_PEERS_H

#include <stdbool.h>

#include "common/config.h"
#include "common/db.h"
#include "conn.h"
#include "stmt.h"
#include "store.h"

/* Other daemons addressed at most; queue names waiting at most (more:
 * every daemon is told "any queue"). */
#define PEERS_MAX 64
#define PEERS_PENDING_MAX 256

struct peer {
	int fd;       /* a UDP socket connected to its wake-up address */
	char *queues; /* kyu_daemons.queues: comma list, "" = every queue */
};

/* A freed slot: announced once its result is recorded. */
struct peer_end {
	uint64_t seq; /* the job's row */
	char *queue;
	bool recorded;
	double ended_at; /* monotonic */
};

struct peers {
	const struct kyu_config *cfg;
	struct conn *conn;
	const char *daemon; /* this daemon's id in kyu_daemons (the rows left out) */
	struct peer p[PEERS_MAX];
	int n;
	double read_at; /* monotonic; 0: never read */
	bool read_failed; /* the last read failed: not again before read_at + interval */
	struct peer_end pending[PEERS_PENDING_MAX];
	int n_pending;
	bool overflow; /* an end did not fit: tell every daemon "any queue" */
	unsigned long sent; /* datagrams sent, for the debug log */
};

void peers_init(struct peers *ps, const struct kyu_config *cfg, struct conn *conn,
		const char *daemon);
void peers_free(struct peers *ps);

/* The job of row seq, which held a limited slot of queue (or a key),
 * ended: its slot is free once its result is recorded. */
void peers_ended(struct peers *ps, uint64_t seq, const char *queue);
/* These results were recorded: announce the slots they freed (at once
 * with a fresh list, else after the list's read). */
void peers_recorded(struct peers *ps, const struct finish *f, int n);

/* The pump's row: reading the list of other daemons. */
bool peers_due(void *peers, struct stmt_turn *t);
bool peers_send(void *peers, struct stmt_turn *t, struct strbuf *sb);
void peers_reply(void *peers, const struct db_reply *r);

#endif
