/* What an operator does to a job, a queue or a schedule: cancel, retry,
 * run now, delete, pause, resume, reset; enable, disable, run now, remove. Each is one statement, the one kyu(1) documents;
 * the kyu tool and the dashboard (kyu web) both build it here, so that
 * the two cannot drift apart. */
#ifndef KYU_ACTIONS_H
#define KYU_ACTIONS_H

#include <stdbool.h>

#include "attr.h"
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
KYU_MUSTCHECK int action_parse(const char *name, enum action *ret);
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
 * due is due at once; after a cancel, the cancel hint (WAKE_CANCEL, wake.h),
 * which every daemon takes for that wake-up and also stops the job's
 * process now if it runs; after a queue's resume or reset, the daemons that
 * serve it (target); after a pause, none, since nothing can start for
 * it. */
const char *action_wake_queue(enum action a, const char *target);

/* Each problem action_wake meets, in words ("send to ADDR: why"). */
typedef void action_note_fn(const void *ctx, const char *msg);
/* Send the wake-up "kyu:QUEUE" (wake.h) to every live daemon of
 * kyu_daemons that serves queue ("": all of them; it also makes kyud read
 * kyu_schedules again; WAKE_CANCEL: the cancel hint, to all of them), or, when there is none or the table cannot be
 * read, to listen ([kyud] listen of the configuration at path; NULL or
 * "": none). 0 when one send succeeded, else -1; note (may be NULL) hears
 * why. The kyu tool and the dashboard send what an action asks for. */
int action_wake(struct db *db, const char *listen, const char *path, const char *queue,
		action_note_fn *note, const void *ctx);

/* Bulk actions: cancel, retry or delete every job a filter matches (kyu
 * cancel|retry|delete with options; the dashboard's "... all matching"),
 * under the same rules as one job (the statuses each applies to), in
 * batches of ACTION_BATCH rows, each one statement and so one transaction
 * of its own: a million rows never hold one long transaction. The walk
 * goes by seq (within each queue, the queues by name, when the filter
 * names none: the index (queue, status) then reads only the rows of the
 * batch), up to the highest seq the count saw, so that it ends whatever
 * is submitted meanwhile and never touches a row twice. */
#define ACTION_BATCH 1000

/* Which jobs (NULL or 0: any). Every condition must hold. */
struct action_filter {
	const char *queue;
	/* One of the statuses the action applies to, or "retrying" (waiting
	 * after a failed attempt; cancel only). NULL: all of them. */
	const char *status;
	/* updated_at (when the row last changed; a finished job's end) in
	 * [since, until), database time: "YYYY-MM-DD[ hh:mm[:ss]]" (or T). */
	const char *since;
	const char *until;
	const char *search;   /* anywhere in id, command, argv, error or output */
	const char *error;    /* anywhere in error */
	long long older_than; /* > 0: updated_at more than this many seconds ago */
	/* The cause (cause.h) the first line of error folds to, exactly:
	 * the server narrows the rows by cause_like's pattern, and the walk
	 * and the count fold each candidate's CAUSE_LINE_SQL and keep those
	 * whose fold is this text. */
	const char *cause;
};

/* Whether a may be done in bulk: cancel, retry, delete. */
bool action_bulk(enum action a);
/* No condition at all: a bulk action refuses it (never every job by
 * accident). */
bool action_filter_empty(const struct action_filter *f);
/* 0, or -EINVAL with why in err, naming the field and its value: a status
 * the action does not apply to, a time that is not one, an empty text. */
KYU_MUSTCHECK int action_filter_check(enum action a, const struct action_filter *f, char *err,
				      size_t len);

/* Runs one statement (read_prefix, when set, is already in front of a
 * read) and hands its last result: 0, or -1 when it failed (the caller's
 * connection says why). */
typedef int action_run_fn(void *ctx, const char *sql, size_t len, const struct db_result **res);

/* With a cause, each read of the walk and the count hands CAUSE_LINE_SQL
 * too, and the count reads the candidates in pages of this many rows. */
#define ACTION_CAUSE_PAGE 5000

/* Where a bulk action is: its position and what it did so far. */
struct action_walk {
	enum action a;
	const struct action_filter *f; /* borrowed */
	/* Put before each read ("SET STATEMENT max_statement_time = 5 FOR ",
	 * the dashboard's bound), or NULL. */
	const char *read_prefix;
	unsigned long long upto; /* the count's highest seq: none above it is touched */
	/* The position: rows of queue (f->queue, or the queue being walked;
	 * in_queue false: none yet) up to seq last are behind. */
	char queue[256];
	bool in_queue;
	unsigned long long last;
	bool over;
	long long done; /* rows changed so far */
};

/* The rows a matches now: *n and the highest seq (0: none). Returns 0 or
 * -1 (run failed). */
int action_bulk_count(enum action a, const struct action_filter *f, const char *read_prefix,
		      action_run_fn *run, void *ctx, long long *n, unsigned long long *upto);
/* A walk over the rows of the count that saw upto. */
void action_walk_init(struct action_walk *w, enum action a, const struct action_filter *f,
		      unsigned long long upto);
/* One batch: the seqs of the next ACTION_BATCH matching rows (a read),
 * then the action on those rows (one statement, which checks the status
 * and the filter again: a row that changed meanwhile is left alone).
 * *changed (may be NULL): the rows it changed. Returns 1 when a batch was
 * sent (more may follow), 0 when the walk is over, -1 when a statement
 * failed (the walk stays where it was). */
int action_walk_step(struct action_walk *w, action_run_fn *run, void *ctx, long long *changed);

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
KYU_MUSTCHECK int action_schedule_parse(const char *name, enum action_schedule *ret);
const char *action_schedule_name(enum action_schedule a);
/* "enabled", "disabled", "enqueued", "removed". */
const char *action_schedule_done(enum action_schedule a);
/* Append the statement on the schedule named name to sb. It changes no
 * row when there is no such schedule. After run-now, the job is the row
 * of LAST_INSERT_ID() (seq). */
void action_schedule_sql(struct strbuf *sb, enum action_schedule a, const char *name);

#endif
