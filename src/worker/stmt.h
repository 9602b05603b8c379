/* What a row of the worker's statement order is made of (pump.c holds the
 * order itself). A worker has one connection and sends one statement at a
 * time on it; which one goes next is decided by walking the rows in
 * priority order and sending the first that is due. Each room of the
 * worker (conn.c, claim.c, record.c, the chores) provides the columns of
 * its own rows; this header is below all of them so that none of them
 * needs to know the order, nor the order any room's struct.
 *
 * Header only: two types that the rooms and pump.c share. A row of the
 * order owns nothing; what a statement carries of a job's row is owned by
 * the room whose statement it is (claim.c, record.c, lease.c, live.c). */
#ifndef KYU_STMT_H
#define KYU_STMT_H

#include <stdbool.h>

#include "common/db.h"
#include "common/util.h"

/* One walk of the order, while the connection is idle. */
struct stmt_turn {
	double now; /* monotonic, read once per walk */
	/* Rows to claim now (0: no claim): set by the claim pacing row, read
	 * by the rows after it, so that the supervisor's liveness is asked
	 * once per walk. */
	int want;
};

/* One row. ctx is the room's struct, handed to each column. */
struct stmt_row {
	/* What the statement does, as the logs say it ("acquiring jobs"). */
	const char *name;
	void *ctx;
	/* Whether the statement is due now. A row without send is a moment,
	 * not a statement: its due acts on what the rows after it read (a
	 * recheck falls due, the claim is sized) and returns false. */
	bool (*due)(void *ctx, struct stmt_turn *t);
	/* Build the statement into sb; false (sb left empty) when there is
	 * nothing to send after all. The row was due either way: the walk
	 * ends there. Everything the reply needs is set before it returns (a
	 * reply can complete inside db_send). */
	bool (*send)(void *ctx, struct stmt_turn *t, struct strbuf *sb);
	/* The statement's reply; called once, with the row no longer in
	 * flight. */
	void (*on_reply)(void *ctx, const struct db_reply *r);
	/* db_send refused what send built (logged already); NULL: nothing to
	 * undo. */
	void (*unsent)(void *ctx);
	/* When the row falls due next (monotonic; 0: nothing foreseen), for
	 * the loop's tick while the connection is idle; NULL: never by time
	 * alone. */
	double (*when)(void *ctx, double now);
	/* A stopping worker does not exit while this row is in flight: its
	 * reply records results or gives rows back (or deletes the daemon's
	 * row). */
	bool exit_waits;
};

#endif
