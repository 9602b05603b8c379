/* kyu_minutes: the jobs that ended, counted per minute, queue and worker
 * (kyu_jobs(7), "kyu_minutes"), so that the last hour's figures cost a few
 * rows per minute to read rather than an index entry per job.
 *
 * A worker adds each batch of results to its rows in the round trip that
 * records them: one INSERT ... SELECT ... ON DUPLICATE KEY UPDATE, sent
 * last, that reads the batch's rows again by primary key and counts the
 * ones whose result was applied: still owned by the attempt's claim, in
 * the status the result gave them. A result rejected because its row
 * passed to another claim is not counted, nor is one the user cancelled.
 *
 * What the round trip does not settle stays pending: results recorded by
 * a round trip that failed before its count (a claim that failed after the
 * results riding along) are counted with the next batch. Results sent in
 * a round trip whose reply was lost may have been recorded (and counted)
 * already: they are counted only if their row changed after the new
 * session began (DB_SESSION_START). Pure: statements and replies only.
 * Used by kyud's workers (src/worker), which count, and kyu web
 * (src/web), which reads the counts. */
#ifndef KYU_MINUTES_H
#define KYU_MINUTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attempt.h"
#include "db.h"
#include "util.h"

/* The current minute of the database's clock, in UTC: what rows are
 * written for and read back by. */
#define MINUTES_NOW "(UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND)"
/* How long rows are kept: the retention delete removes older ones. */
#define MINUTES_KEEP_DAYS 7
/* A count that failed (no table, no privilege) turns counting off for
 * this long, then it is tried again. */
#define MINUTES_RETRY 60.0

struct minutes_row {
	uint64_t seq, token;
	bool unsure; /* recorded by a round trip whose reply was lost, perhaps */
};

/* Recorded results not counted yet. */
struct minutes_pending {
	struct minutes_row *rows;
	int n, cap;
};

/* Who counts: the daemon's token and the worker's number. */
struct minutes_writer {
	const char *daemon;
	int worker;
};

/* Append "; " and the count of pending rows and of f[0..n) to sb (kyud's
 * own give-backs, OUT_RELEASE, never count). Returns false, appending
 * nothing, when there is nothing to count. */
bool minutes_count_build(struct strbuf *sb, const struct minutes_writer *wr,
			 const struct minutes_pending *p, const struct finish *f, int n);

/* At most how long minutes_count_build makes the count of p and n
 * results. */
size_t minutes_count_room(const struct minutes_pending *p, int n);

enum minutes_outcome {
	MINUTES_DONE,    /* counted */
	MINUTES_NOT_RUN, /* a statement before it failed, or the reply was lost */
	MINUTES_FAILED,  /* the count itself failed: err says why */
};

/* A reply of n_body statements followed by the count: *body gets the
 * reply as if the body had been sent alone (the count's failure is not
 * the body's), and the count's outcome is returned. */
enum minutes_outcome minutes_split(const struct db_reply *r, int n_body, struct db_reply *body);

/* Keep f[0..n) pending (recorded, not counted), except give-backs. */
void minutes_keep(struct minutes_pending *p, const struct finish *f, int n);
/* Every pending row forgotten. */
void minutes_clear(struct minutes_pending *p);
void minutes_free(struct minutes_pending *p);

/* Append "; " and the delete of up to batch rows older than
 * MINUTES_KEEP_DAYS, for the retention cleanup (store_cleanup_build),
 * which it follows: it deletes only while @kyu_cleanup says the cleanup
 * lock was had. */
void minutes_cleanup_build(struct strbuf *sb, int batch);

/* The last hour per queue and minute: columns queue, ago (minutes before
 * the current one, 0 to 59), succeeded, failed, retried. */
#define MINUTES_HOUR_SQL                                                                           \
	"SELECT queue, TIMESTAMPDIFF(MINUTE, minute, " MINUTES_NOW ") AS ago, SUM(succeeded), "    \
	"SUM(failed), SUM(retried) FROM kyu_minutes WHERE minute > " MINUTES_NOW                   \
	" - INTERVAL 60 MINUTE GROUP BY minute, queue"

#endif
