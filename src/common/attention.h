/* What a queue needs from its operator, and the order that puts those
 * that need it most first: the dashboard's overview (kyu web,
 * /api/overview) and kyu queues list queues in this one order, with the
 * same words, so that a queue the page marks "stuck" is "stuck" in a
 * shell too. The order (docs/dashboard.md, "Order and pages"):
 *
 * 1. failing: at least ATTENTION_FAILING_MIN attempts failed in the last
 *    hour (for good or retried), and no fewer than the jobs that
 *    succeeded; most failed attempts first;
 * 2. stuck: due jobs, the oldest due for ATTENTION_STUCK_AGE or more;
 *    longest first;
 * 3. failed: some failed attempts; most first;
 * 4. busy: running or due jobs; most running first, then longest due;
 * 5. idle: the rest. Ties by name (bytes: the queue's collation is
 *    utf8mb4_bin).
 *
 * It is read for every queue, 10,000 and more, so the facts that order
 * are plain structs in a hash table, filled from the rows of the few
 * statements below (a dive per queue into an index, the running rows,
 * kyu_minutes' hour, kyu_queues' names): pure, no round trips here; the
 * callers run the statements their own way (kyu web under
 * max_statement_time). */
#ifndef KYU_ATTENTION_H
#define KYU_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>

#include "db_reply.h"
#include "minutes.h"
#include "util.h"

#define ATTENTION_FAILING_MIN 3
#define ATTENTION_STUCK_AGE 60.0 /* s */

enum attention { ATT_FAILING, ATT_STUCK, ATT_FAILED, ATT_BUSY, ATT_IDLE };

/* "failing", "stuck", "failed", "busy", "idle". */
const char *attention_name(enum attention a);

/* Per queue that has waiting jobs: its oldest due job's age (s, 0 when
 * none is due) and whether one is due. A loose scan of (status, queue,
 * due): one index dive per queue, not a read of its rows. */
#define ATTENTION_SQL_OLDEST                                                                       \
	"SELECT queue, GREATEST(0, COALESCE(TIMESTAMPDIFF(MICROSECOND, MIN(due), NOW(6)), "        \
	"0)) / 1000000 AS oldest_due_age, MIN(due) <= NOW(6) FROM kyu_jobs WHERE status IN "       \
	"('waiting', 'running') GROUP BY status, queue HAVING status = 'waiting'"
/* Per queue, its running jobs: few rows, never more than the slots. */
#define ATTENTION_SQL_RUNNING                                                                      \
	"SELECT queue, COUNT(*) AS running FROM kyu_jobs WHERE status = 'running' GROUP BY queue"
/* Per queue, the last hour's succeeded, failed and retried (kyu_minutes,
 * schema version 4 and later). ORDER BY NULL: the groups need no sort. */
#define ATTENTION_SQL_HOUR                                                                                     \
	"SELECT queue, SUM(succeeded), SUM(failed), SUM(retried) FROM kyu_minutes WHERE minute > " MINUTES_NOW \
	" - INTERVAL 60 MINUTE GROUP BY queue ORDER BY NULL"
/* The same for the queues with failed or retried attempts alone, without
 * succeeded (NULL): a reading of every row of the hour still, but one
 * that groups only those queues, where the statement above groups every
 * queue that ran a job (10,000 groups cost more than the read); then
 * attention_sql_succeeded for the queues that may be failing. */
#define ATTENTION_SQL_HOUR_FAILED                                                                    \
	"SELECT queue, NULL, SUM(failed), SUM(retried) FROM kyu_minutes WHERE minute > " MINUTES_NOW \
	" - INTERVAL 60 MINUTE AND (failed > 0 OR retried > 0) GROUP BY queue ORDER BY NULL"
/* The queues with settings. */
#define ATTENTION_SQL_SETTINGS "SELECT name FROM kyu_queues"

/* A queue, with what orders it. */
struct attention_queue {
	char *name;
	size_t len;
	long long running, succeeded, failed, retried;
	double age; /* the oldest due job's, s */
	/* succeeded and retried were read (the overview prints null when
	 * not: a schema without kyu_minutes). */
	bool succeeded_known, retried_known;
	bool waiting, due, blocked;
	/* Set by attention_sort: its attention, and its place within it. */
	enum attention att;
	double a, b;
};

struct attention_table {
	struct attention_queue *e;
	size_t n, cap;
	/* Open addressing: an index into e plus one, 0 for an empty slot. */
	size_t *slot, n_slots;
};

/* The queue's entry, added when new (nothing known of it). The pointer
 * holds until the next call. */
struct attention_queue *attention_get(struct attention_table *t, const char *name, size_t len);

/* Rows whose first column names a queue: those of ATTENTION_SQL_OLDEST
 * (age, due), ATTENTION_SQL_RUNNING (running; returns their sum), or
 * [queue, succeeded, failed, retried] (ATTENTION_SQL_HOUR's, and
 * ATTENTION_SQL_HOUR_FAILED's; a NULL leaves that figure as it was, and
 * not known), added to t; or only the queues named (any other rows). */
void attention_add_oldest(struct attention_table *t, const struct db_result *r);
long long attention_add_running(struct attention_table *t, const struct db_result *r);
void attention_add_hour(struct attention_table *t, const struct db_result *r);
void attention_add_names(struct attention_table *t, const struct db_result *r);

/* Into sb, the statement of the last hour's succeeded jobs (rows for
 * attention_add_hour) of the queues of t whose failed attempts make them
 * failing unless as many jobs succeeded; false (sb untouched) when there
 * is none. By key (the minutes named, with the queues) for a few queues,
 * else a read of the hour's rows. */
bool attention_sql_succeeded(struct strbuf *sb, const struct attention_table *t);

/* The queue's attention and its place in it (att, a, b). */
void attention_rank(struct attention_queue *q);
/* qsort comparisons of ranked entries: by attention, or by name. */
int attention_cmp(const void *a, const void *b);
int attention_cmp_name(const void *a, const void *b);
/* Rank every entry and sort t->e by attention or by name (a lookup after
 * it builds the hash index again). */
void attention_sort(struct attention_table *t, bool by_name);

void attention_free(struct attention_table *t);

#endif
