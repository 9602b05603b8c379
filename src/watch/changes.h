/* The short poll: where the server writes no binary log (or kyud may not
 * read it), the watcher asks once every [kyud] wake_poll seconds whether
 * anything became due, with one statement that the server answers from
 * the ends of four indexes ("Select tables optimized away": a few
 * microseconds, however many rows there are), and wakes the daemon only
 * when an answer moved:
 *   - the newest change to a waiting job (kyu_jobs_finished is on
 *     status, updated_at): an INSERT, an SQL retry, an earlier run_at, a
 *     blocked job released, committed since the last look, whenever its
 *     statement ran;
 *   - the earliest due time (kyu_jobs_due), when it moved to a moment
 *     already past: a row committed late whose run_at is older than the
 *     others, a lease that expired;
 *   - the newest change to a cancelled job: a cancel hint;
 *   - the newest change to kyu_queues (kyu_queues_updated): a resume, a
 *     raised limit.
 * What it cannot see, the fallback poll ([kyud] poll_interval) still
 * finds: notes/DESIGN.md, "Wake-ups without a plugin: the watcher". */
#ifndef KYU_CHANGES_H
#define KYU_CHANGES_H

#include <stdbool.h>

#define CHANGES_SQL                                                                                \
	"SELECT (SELECT MAX(updated_at) FROM kyu_jobs WHERE status = 'waiting'), "                 \
	"(SELECT MIN(due) FROM kyu_jobs), "                                                        \
	"(SELECT MAX(updated_at) FROM kyu_jobs WHERE status = 'cancelled'), "                      \
	"(SELECT MAX(updated_at) FROM kyu_queues), NOW(6)"
#define CHANGES_COLS 5

struct changes {
	bool primed; /* an answer was seen since the connection was made */
	char last[CHANGES_COLS - 1][32];
};

/* Forget the last answer (a new connection: the first answer wakes). */
void changes_reset(struct changes *c);
/* The hints (follow.h's FOLLOW_*) that an answer to CHANGES_SQL gives;
 * cells[i] NULL for SQL NULL. */
unsigned changes_compare(struct changes *c, const char *const cells[CHANGES_COLS]);

#endif
