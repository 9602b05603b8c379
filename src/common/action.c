#include "action.h"

#include <errno.h>
#include <mysqld_error.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "registry.h"
#include "wake.h"

struct action_def {
	const char *name;
	const char *done;
	const char *needs;
	/* The statement up to the quoted target. */
	const char *head;
	/* After the target. */
	const char *tail;
	/* Queue upserts: after the condition. */
	const char *tail2;
};

static const struct action_def defs[ACT_N] = {
	[ACT_CANCEL] = { "cancel", "cancelled", "waiting, blocked or running",
			 "UPDATE kyu_jobs SET status = 'cancelled' "
			 "WHERE status IN ('waiting', 'blocked', 'running') AND id = ",
			 "", NULL },
	[ACT_RETRY] = { "retry", "retrying", "failed or cancelled",
			"UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, "
			"tempfails = 0, error = NULL WHERE status IN ('failed', 'cancelled') AND id = ",
			"", NULL },
	/* Only a job that is not due yet: moving run_at of a due job would
	 * only put it behind others of the same priority. */
	[ACT_RUN_NOW] = { "run-now", "due now", "waiting and due later",
			  "UPDATE kyu_jobs SET run_at = NOW(6) "
			  "WHERE status = 'waiting' AND run_at > NOW(6) AND id = ",
			  "", NULL },
	/* Never a waiting or running row: that is what cancel is for, and a
	 * running job's worker still has to record its end. */
	[ACT_DELETE] = { "delete", "deleted", "succeeded, failed or cancelled",
			 "DELETE FROM kyu_jobs "
			 "WHERE status IN ('succeeded', 'failed', 'cancelled') AND id = ",
			 "", NULL },
	/* The queue actions: head, the name, tail (action_sql adds the
	 * condition that the queue exists in between, unless asked not to). */
	[ACT_PAUSE] = { "pause", "paused", NULL, "INSERT INTO kyu_queues (name, paused) SELECT ",
			", 1 ", " ON DUPLICATE KEY UPDATE paused = VALUES(paused)" },
	[ACT_RESUME] = { "resume", "resumed", NULL, "INSERT INTO kyu_queues (name, paused) SELECT ",
			 ", 0 ", " ON DUPLICATE KEY UPDATE paused = VALUES(paused)" },
	/* Every setting back to its default: the row goes. */
	[ACT_RESET] = { "reset", "settings removed", NULL, "DELETE FROM kyu_queues WHERE name = ", "", "" },
};

const char *action_name(enum action a)
{
	return a < ACT_N ? defs[a].name : "?";
}

int action_parse(const char *name, enum action *ret)
{
	for (int i = 0; i < ACT_N; i++) {
		if (strcmp(name, defs[i].name) == 0) {
			*ret = (enum action)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool action_on_queue(enum action a)
{
	return a == ACT_PAUSE || a == ACT_RESUME || a == ACT_RESET;
}

const char *action_needs(enum action a)
{
	return a < ACT_N ? defs[a].needs : NULL;
}

const char *action_done(enum action a)
{
	return a < ACT_N ? defs[a].done : "?";
}

void action_sql(struct strbuf *sb, enum action a, const char *target)
{
	action_sql_create(sb, a, target, false);
}

void action_sql_create(struct strbuf *sb, enum action a, const char *target, bool create)
{
	if (a >= ACT_N)
		return;
	sb_adds(sb, defs[a].head);
	db_quotes(sb, target);
	sb_adds(sb, defs[a].tail);
	if (a != ACT_PAUSE && a != ACT_RESUME)
		return;
	/* A queue exists when it has jobs (the (queue, status) index answers)
	 * or settings. With found rows (db.c), an upsert that changes nothing
	 * still counts its row: 0 rows means that the queue does not exist,
	 * and a mistyped name leaves no row behind. */
	sb_adds(sb, "FROM DUAL");
	if (!create)
		action_queue_exists(sb, target);
	sb_adds(sb, defs[a].tail2);
}

void action_queue_exists(struct strbuf *sb, const char *queue)
{
	sb_adds(sb, " WHERE EXISTS (SELECT 1 FROM kyu_jobs WHERE queue = ");
	db_quotes(sb, queue);
	sb_adds(sb, ") OR EXISTS (SELECT 1 FROM kyu_queues WHERE name = ");
	db_quotes(sb, queue);
	sb_adds(sb, ")");
}

bool action_unique_taken(struct db *db, enum action a, const char *id, char *msg, size_t len)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r;
	bool ok = false;

	if (a != ACT_RETRY || db_error_code(db) != ER_DUP_ENTRY || !strstr(db_error(db), "kyu_jobs_unique_key"))
		return false;
	sb_adds(&sb, "SELECT j.unique_key, o.id, o.status FROM kyu_jobs AS j LEFT JOIN kyu_jobs AS o "
		     "ON o.unique_live = j.unique_key WHERE j.id = ");
	db_quotes(&sb, id);
	if (db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0 && reply->r[0].n_rows > 0 &&
	    db_cell(&reply->r[0], 0, 0)) {
		r = &reply->r[0];
		if (db_cell(r, 0, 1))
			snprintf(msg, len, "job '%s' cannot be retried: its unique key '%s' is held by job '%s' "
					   "(%s), which has not ended",
				 id, db_cell(r, 0, 0), db_cell(r, 0, 1), db_cell(r, 0, 2) ? db_cell(r, 0, 2) : "?");
		else
			snprintf(msg, len, "job '%s' cannot be retried: its unique key '%s' was held by another "
					   "job that had not ended (it has since: try again)",
				 id, db_cell(r, 0, 0));
		ok = true;
	}
	sb_free(&sb);
	return ok;
}

const char *action_wake_queue(enum action a, const char *target)
{
	switch (a) {
	case ACT_PAUSE:
		return NULL;
	case ACT_RESUME:
	case ACT_RESET:
		return target;
	default:
		return "";
	}
}

__attribute__((format(printf, 3, 4))) static void notef(action_note_fn *note, const void *ctx,
							       const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!note)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	note(ctx, msg);
}

/* Send msg to one address; 0 or -1. */
static int wake_one(const char *addr, const char *msg, size_t n, action_note_fn *note, const void *ctx)
{
	char err[256];
	int fd, r;

	fd = wake_socket(addr, false, err, sizeof(err));
	if (fd < 0) {
		notef(note, ctx, "%s", err);
		return -1;
	}
	r = send(fd, msg, n, 0) == (ssize_t)n ? 0 : -1;
	if (r < 0)
		notef(note, ctx, "send to %s: %s", addr, strerror(errno));
	close(fd);
	return r;
}

int action_wake(struct db *db, const char *listen, const char *path, const char *queue,
		action_note_fn *note, const void *ctx)
{
	char msg[sizeof(WAKE_PREFIX) + WAKE_QUEUE_MAX];
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	const struct db_result *r = NULL;
	int n, sent = 0, failed = 0;

	if (strlen(queue) > WAKE_QUEUE_MAX) {
		notef(note, ctx, "queue name longer than %d bytes", WAKE_QUEUE_MAX);
		return -1;
	}
	/* Copied first: queue may point into a reply the query below replaces
	 * (the dashboard's run-now passes a cell of its own last reply); from
	 * here on only the copy is read. */
	n = snprintf(msg, sizeof(msg), "%s%s", WAKE_PREFIX, queue);
	queue = msg + sizeof(WAKE_PREFIX) - 1;
	/* Every live daemon that serves the queue, as the triggers of
	 * sql/notify.sql pick them; "" (any queue) reaches them all. */
	if (*queue) {
		sb_adds(&sb, "SET @kyu_q = ");
		db_quotes(&sb, queue);
		sb_adds(&sb, "; ");
	}
	sb_adds(&sb, "SELECT DISTINCT d.wake_addr FROM kyu_daemons AS d WHERE d.wake_addr IS NOT NULL "
		     "AND " REGISTRY_LIVE("d"));
	if (*queue)
		sb_adds(&sb, " AND " REGISTRY_SERVES("d", "@kyu_q"));
	/* Without the table (an older schema), without the privilege to read
	 * it, or without a live row: the configured address, as before. */
	if (db && db_query(db, sb.buf, sb.len, &reply) == DB_OK && reply->n > 0)
		r = &reply->r[reply->n - 1];
	else if (db)
		notef(note, ctx, "cannot read kyu_daemons (%s); sending to [kyud] listen", db_error(db));
	for (size_t i = 0; r && i < r->n_rows; i++) {
		const char *addr = db_cell(r, i, 0);
		if (!addr)
			continue;
		if (wake_one(addr, msg, (size_t)n, note, ctx) == 0)
			sent++;
		else
			failed++;
	}
	sb_free(&sb);
	if (sent + failed > 0)
		return sent > 0 ? 0 : -1;
	if (!listen || !*listen) {
		notef(note, ctx, "no live daemon in kyu_daemons serves %s%s, and [kyud] listen is not set in %s",
		      *queue ? "queue " : "any queue", queue, path ? path : "the configuration");
		return -1;
	}
	return wake_one(listen, msg, (size_t)n, note, ctx);
}

static const char *const sched_names[ACT_SCHED_N] = { "enable", "disable", "run-now", "remove" };
static const char *const sched_done[ACT_SCHED_N] = { "enabled", "disabled", "enqueued", "removed" };

int action_schedule_parse(const char *name, enum action_schedule *ret)
{
	for (int i = 0; i < ACT_SCHED_N; i++) {
		if (strcmp(name, sched_names[i]) == 0) {
			*ret = (enum action_schedule)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *action_schedule_name(enum action_schedule a)
{
	return a < ACT_SCHED_N ? sched_names[a] : "?";
}

const char *action_schedule_done(enum action_schedule a)
{
	return a < ACT_SCHED_N ? sched_done[a] : "?";
}

void action_schedule_sql(struct strbuf *sb, enum action_schedule a, const char *name)
{
	switch (a) {
	case ACT_SCHED_RUN_NOW:
		/* A job from the template now, outside the instants: next_run
		 * and the overlap rule are left alone. */
		sb_adds(sb, "INSERT INTO kyu_jobs (id, queue, command, argv, env, cwd, priority, "
			    "max_attempts, time_limit, concurrency_key) SELECT CONCAT('cron:', name, "
			    "':now:', DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%fZ')), queue, "
			    "command, argv, env, cwd, priority, max_attempts, time_limit, "
			    "IF(overlap = 'queue', IFNULL(concurrency_key, CONCAT('cron:', name)), "
			    "concurrency_key) FROM kyu_schedules WHERE name = ");
		break;
	case ACT_SCHED_REMOVE:
		sb_adds(sb, "DELETE FROM kyu_schedules WHERE name = ");
		break;
	case ACT_SCHED_ENABLE:
	case ACT_SCHED_DISABLE:
		sb_printf(sb, "UPDATE kyu_schedules SET enabled = %d WHERE name = ", a == ACT_SCHED_ENABLE);
		break;
	default:
		return;
	}
	db_quotes(sb, name);
}
