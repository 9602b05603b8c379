/* Retention: the periodic delete of finished rows older than [kyud]
 * retention (store.c's cleanup, one batch per round trip, under a lock
 * that keeps two cleaners from doing the same work) and of kyu_minutes'
 * rows older than a week. A chore of the statement order, last in it: due
 * at start and every cleanup_every claims (claim.c asks), never while the
 * worker drains. Owns no row of a job: it deletes rows whose jobs are
 * over. */
#ifndef KYU_RETENTION_H
#define KYU_RETENTION_H

#include <stdbool.h>

#include "common/config.h"
#include "common/db.h"
#include "conn.h"
#include "jobs.h"
#include "record.h"
#include "stmt.h"

struct retention {
	const struct kyu_config *cfg;
	struct conn *conn;
	struct record *rec; /* whether kyu_minutes is counted (and so kept) */
	const struct jobs *jobs;
	bool wanted;   /* a delete is due (at start; every cleanup_every claims) */
	bool lockless; /* the server refused GET_LOCK: retention goes without it */
	bool minutes;  /* the round trip in flight ends with kyu_minutes' delete */
	bool names;    /* ... and then with filing queue names (names.h) */
};

/* Due at once. */
void retention_init(struct retention *ret, const struct kyu_config *cfg, struct conn *conn,
		    struct record *rec, const struct jobs *jobs);

/* Its row of the statement order (ctx: the retention). */
bool retention_due(void *retention, struct stmt_turn *t);
bool retention_send(void *retention, struct stmt_turn *t, struct strbuf *sb);
void retention_reply(void *retention, const struct db_reply *r);

#endif
