/* The daemon's row of kyu_daemons (common/registry.h), kept by worker 1:
 * refreshed every registry_interval() (at once after a connect or a
 * reload), deleted when the daemon stops. A chore of the statement order,
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
	char id[REGISTRY_ID_MAX];
	bool on;              /* this worker keeps the row */
	bool remove;          /* stopping: delete the row (once) */
	bool sending_remove;  /* the statement in flight deletes it */
	struct spell failing; /* writing the row fails (logged at its start and end) */
	double next;          /* monotonic: the next refresh (0: at once) */
};

/* daemon_id: the daemon's token; NULL (a worker started by hand): no row. */
void daemonrow_init(struct daemonrow *d, const struct kyu_config *cfg, int worker,
		    const char *daemon_id, const char *host, struct conn *conn,
		    const struct parent *parent, const struct jobs *jobs);
/* Refresh at once (a new connection; a reload may have changed the
 * queues or the wake-up address). */
void daemonrow_refresh(struct daemonrow *d);
/* kyud is stopping: delete the row (once). */
void daemonrow_drain(struct daemonrow *d);

/* Its row of the statement order (ctx: the daemonrow). */
bool daemonrow_due(void *daemonrow, struct stmt_turn *t);
bool daemonrow_send(void *daemonrow, struct stmt_turn *t, struct strbuf *sb);
void daemonrow_reply(void *daemonrow, const struct db_reply *r);
void daemonrow_unsent(void *daemonrow);
double daemonrow_when(void *daemonrow, double now);

#endif
