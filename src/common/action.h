/* What an operator does to a job, a queue or a schedule: cancel, retry,
 * run now, delete, pause, resume, reset; enable, disable, run now, remove. Each is one statement, the one kyu(1) documents;
 * the kyu tool and the dashboard (kyu web) both build it here, so that
 * the two cannot drift apart. */
#ifndef KYU_ACTIONS_H
#define KYU_ACTIONS_H

#include <stdbool.h>

#include "db.h"
#include "util.h"

enum action {
	ACT_CANCEL,  /* a waiting, blocked or running job */
	ACT_RETRY,   /* a failed or cancelled job: due again now, attempts reset */
	ACT_RUN_NOW, /* a waiting job due later: due now */
	ACT_DELETE,  /* a finished job's row */
	ACT_PAUSE,   /* a queue: no new starts */
	ACT_RESUME,  /* a queue: starts again */
	ACT_RESET,   /* a queue: its settings (kyu_queues row) removed */
	ACT_N,
};

/* "cancel", "retry", "run-now", "delete", "pause", "resume", "reset". */
const char *action_name(enum action a);
/* -EINVAL for a name that is none of those. */
int action_parse(const char *name, enum action *ret);
/* true: the target is a queue's name; false: a job's id. */
bool action_on_queue(enum action a);
/* For messages when the statement changed no row: the statuses the job
 * must have ("waiting or running"); NULL for the queue actions, which
 * change no row only when the queue does not exist (pause, resume: no job
 * and no settings) or has no settings (reset). */
const char *action_needs(enum action a);
/* What happened, for the tool's output: "cancelled", "retrying", ... */
const char *action_done(enum action a);
/* What a job action's caller sends after it, in a round trip of its own
 * (its reply is the action's business, not this one's): the dependents
 * of the job it ended, deleted or re-opened move on now rather than at
 * kyud's next claim (kyu_jobs(7), "Workflows"). A failure of it changes
 * nothing that happened: kyud settles the same items later. */
#define ACTION_SETTLE_SQL "CALL kyu_settle(1000)"

/* After a job action's statement failed on db: when it was a retry
 * refused because the job's unique_key is held by another job that has
 * not ended (the unique index kyu_jobs_unique_key: a raw error 1062
 * otherwise), write into msg which key and which job hold it (a round
 * trip of its own) and return true; false for any other failure. */
bool action_unique_taken(struct db *db, enum action a, const char *id, char *msg, size_t len);

/* Append the statement, with target quoted, to sb. */
void action_sql(struct strbuf *sb, enum action a, const char *target);
/* The same; with create, pause and resume also make the settings of a
 * queue that has no job yet (kyu pause --create). */
void action_sql_create(struct strbuf *sb, enum action a, const char *target, bool create);
/* Append " WHERE " and the condition that queue exists: it has jobs or a
 * row of settings (the upserts of kyu_queues select their row under it). */
void action_queue_exists(struct strbuf *sb, const char *queue);

/* Which daemons hear of a done action (kyu_jobs(7), "Wake-ups"): the
 * queue of the wake-up, "" for any queue, NULL for none. After a job's
 * action, every daemon: what it freed may be due in any queue (its
 * dependents, its concurrency key), and the job a retry or run-now made
 * due is due at once; after a queue's resume or reset, the daemons that
 * serve it (target); after a pause, none, since nothing can start for
 * it. */
const char *action_wake_queue(enum action a, const char *target);

/* Each problem action_wake meets, in words ("send to ADDR: why"). */
typedef void action_note_fn(const void *ctx, const char *msg);
/* Send the wake-up "kyu:QUEUE" (wake.h) to every live daemon of
 * kyu_daemons that serves queue ("": all of them; it also makes kyud read
 * kyu_schedules again), or, when there is none or the table cannot be
 * read, to listen ([kyud] listen of the configuration at path; NULL or
 * "": none). 0 when one send succeeded, else -1; note (may be NULL) hears
 * why. The kyu tool and the dashboard send what an action asks for. */
int action_wake(struct db *db, const char *listen, const char *path, const char *queue,
		action_note_fn *note, const void *ctx);

/* What an operator does to a schedule (kyu schedule, the dashboard's
 * Schedules page): an enum of its own, since "run-now" names a job's
 * action too and the kyu tool reads job actions as commands. */
enum action_schedule {
	ACT_SCHED_ENABLE,
	ACT_SCHED_DISABLE,
	ACT_SCHED_RUN_NOW, /* a job from the row now, outside its instants */
	ACT_SCHED_REMOVE,
	ACT_SCHED_N,
};

/* "enable", "disable", "run-now", "remove"; -EINVAL for another name. */
int action_schedule_parse(const char *name, enum action_schedule *ret);
const char *action_schedule_name(enum action_schedule a);
/* "enabled", "disabled", "enqueued", "removed". */
const char *action_schedule_done(enum action_schedule a);
/* Append the statement on the schedule named name to sb. It changes no
 * row when there is no such schedule. After run-now, the job is the row
 * of LAST_INSERT_ID() (seq). */
void action_schedule_sql(struct strbuf *sb, enum action_schedule a, const char *name);

#endif
