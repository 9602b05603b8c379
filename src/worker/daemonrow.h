/* The daemon's row of kyu_daemons (common/registry.h), kept by worker 1:
 * refreshed every registry_interval() (at once after a connect or a
 * reload), deleted when the daemon stops. The row says how many job slots
 * the daemon has and how many jobs it runs (every worker's, from the
 * scoreboard); its refresh reads whether an operator asked the daemon to
 * drain (kyu_daemons.drain), and then tells the supervisor, which drains
 * every worker: no new claims, the running jobs finish, exit 0. While
 * such a drain lets this worker's jobs finish, the row is still
 * refreshed, so that it shows the drain and what runs; it is deleted when
 * they have ended. A chore of the statement order,
 * after the leases: a refresh never waits for a lock, so nothing behind
 * it waits either. A stopping worker does not exit while the delete is in
 * flight, unless the connection is gone (the row then expires by itself).
 *
 * Why apart from registry.c: that module, in common/, builds the
 * statements and reads their replies for kyud and kyu alike; this one
 * holds the worker's side (when, and what to say about failures, once
 * per spell). Owns no row of a job. */
#ifndef KYU_DAEMONROW_H
#define KYU_DAEMONROW_H

#include <stdbool.h>

#include "common/board.h"
#include "common/config.h"
#include "common/db.h"
#include "common/registry.h"
#include "common/spell.h"
#include "conn.h"
#include "jobs.h"
#include "parent.h"
#include "stmt.h"

struct daemonrow {
	const struct kyu_config *cfg;
	const char *host;
	struct conn *conn;
	const struct parent *parent; /* the supervisor's pid is in the row */
	const struct jobs *jobs;
	const struct board *board; /* every worker's running jobs (NULL: this one's) */
	char id[REGISTRY_ID_MAX];
	bool on;               /* this worker keeps the row */
	bool remove;           /* stopping: delete the row (once) */
	bool sending_remove;   /* the statement in flight deletes it */
	bool drain_told;       /* the supervisor was told of kyu_daemons.drain */
	bool old;              /* the schema is older than version 9: the row without
			       * slots, running and drain (until the next connection) */
	struct spell old_said; /* said once per spell */
	struct spell failing;  /* writing the row fails (logged at its start and end) */
	double next;           /* monotonic: the next refresh (0: at once) */
	double sent_at;        /* monotonic: the last refresh sent */
};

/* An any-queue wake-up (a drain asked, a schedule changed) brings the
 * refresh forward, at most this often (s): wake-ups may come in floods. */
#define DAEMONROW_HINT_GAP 1.0

/* daemon_id: the daemon's token; NULL (a worker started by hand): no row. */
void daemonrow_init(struct daemonrow *d, const struct kyu_config *cfg, int worker,
		    const char *daemon_id, const char *host, struct conn *conn,
		    const struct parent *parent, const struct jobs *jobs,
		    const struct board *board);
/* Refresh at once (a new connection; a reload may have changed the
 * queues or the wake-up address). */
void daemonrow_refresh(struct daemonrow *d);
/* An any-queue wake-up: refresh soon (within DAEMONROW_HINT_GAP of the
 * last one), so that a drain an operator asked for is read now, not
 * within a refresh interval. */
void daemonrow_hint(struct daemonrow *d, double now);
/* kyud is stopping: delete the row (once; a drain that lets the jobs
 * finish: once this worker's have ended). */
void daemonrow_drain(struct daemonrow *d);

/* Its row of the statement order (ctx: the daemonrow). */
bool daemonrow_due(void *daemonrow, struct stmt_turn *t);
bool daemonrow_send(void *daemonrow, struct stmt_turn *t, struct strbuf *sb);
void daemonrow_reply(void *daemonrow, const struct db_reply *r);
void daemonrow_unsent(void *daemonrow);
double daemonrow_when(void *daemonrow, double now);

#endif
