/* Schedules: scan, plan, step (schedules.h). */
#include "schedules.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/cron.h"
#include "common/log.h"
#include "common/tz.h"
#include "common/utf8.h"

/* missed = all looks at most this many missed instants; beyond, the
 * period is treated as skip (an every-second schedule down for a day). */
#define SCHEDULES_COUNT_MAX 100000
#define HOLD_FIRST 10.0
#define HOLD_MAX 300.0

void schedules_init(struct schedules *s)
{
	memset(s, 0, sizeof(*s));
	s->poll = SCHEDULES_POLL;
}

void schedules_set_poll(struct schedules *s, double seconds, double now)
{
	s->poll = seconds > SCHEDULES_POLL ? seconds : SCHEDULES_POLL;
	if (s->scan_at > now + s->poll)
		s->scan_at = now + s->poll;
}

static void free_rows(struct schedules *s)
{
	for (int i = 0; i < s->n_rows; i++) {
		free(s->rows[i].name);
		free(s->rows[i].cron);
		free(s->rows[i].tz);
	}
	free(s->rows);
	s->rows = NULL;
	s->n_rows = s->next_row = 0;
}

void schedules_free(struct schedules *s)
{
	free_rows(s);
	for (int i = 0; i < s->n_holds; i++)
		free(s->holds[i].name);
	free(s->holds);
	free(s->sent_error);
	memset(s, 0, sizeof(*s));
}

static struct schedules_hold *find_hold(const struct schedules *s, const char *name)
{
	for (int i = 0; i < s->n_holds; i++)
		if (strcmp(s->holds[i].name, name) == 0)
			return &s->holds[i];
	return NULL;
}

static bool held(const struct schedules *s, const char *name, double now)
{
	const struct schedules_hold *h = find_hold(s, name);
	return h && h->until > now;
}

static void drop_hold(struct schedules *s, const char *name)
{
	struct schedules_hold *h = find_hold(s, name);
	if (!h)
		return;
	free(h->name);
	*h = s->holds[--s->n_holds];
}

static double add_hold(struct schedules *s, const char *name, double now)
{
	struct schedules_hold *h = find_hold(s, name);
	double wait;

	if (!h) {
		s->holds = xrealloc(s->holds, (size_t)(s->n_holds + 1) * sizeof(*s->holds));
		h = &s->holds[s->n_holds++];
		*h = (struct schedules_hold){ .name = xstrdup(name) };
	}
	wait = HOLD_FIRST;
	for (int i = 0; i < h->fails && wait < HOLD_MAX; i++)
		wait *= 2;
	if (wait > HOLD_MAX)
		wait = HOLD_MAX;
	h->fails++;
	h->until = now + wait;
	return wait;
}

/* The next row to step, skipping held ones; -1 when none is left. */
static int next_row(struct schedules *s, double now)
{
	while (s->next_row < s->n_rows && held(s, s->rows[s->next_row].name, now))
		s->next_row++;
	return s->next_row < s->n_rows ? s->next_row : -1;
}

bool schedules_ready(const struct schedules *s, double now)
{
	if (s->sent != SCHEDULES_NONE)
		return false;
	if (s->rebase)
		return true;
	for (int i = s->next_row; i < s->n_rows; i++)
		if (!held(s, s->rows[i].name, now))
			return true;
	return now >= s->scan_at;
}

double schedules_wake_time(const struct schedules *s, double now)
{
	double t = s->scan_at;

	/* A statement in flight: its reply wakes the loop. */
	if (s->sent != SCHEDULES_NONE)
		return 0;
	if (s->rebase)
		return now;
	for (int i = s->next_row; i < s->n_rows; i++) {
		const struct schedules_hold *h = find_hold(s, s->rows[i].name);
		double at = h && h->until > now ? h->until : now;
		if (at < t)
			t = at;
	}
	return t;
}

/* Read again soon, but not at once: a step that failed, or a
 * compare-and-set that matched nothing, must not turn into a busy loop
 * when the same thing happens again. */
static void rescan_soon(struct schedules *s, double now)
{
	if (next_row(s, now) < 0 && now + SCHEDULES_MIN_GAP < s->scan_at)
		s->scan_at = now + SCHEDULES_MIN_GAP;
}

void schedules_poke(struct schedules *s, double now)
{
	double at = s->last_scan + SCHEDULES_MIN_GAP;
	if (at < now)
		at = now;
	if (at < s->scan_at)
		s->scan_at = at;
}

void schedules_reset(struct schedules *s, double now)
{
	free_rows(s);
	s->sent = SCHEDULES_NONE;
	s->scan_at = now;
}

/* ---- planning ------------------------------------------------------------ */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int schedules_plan(const struct schedules_row *row, int64_t now_us, struct schedules_step *st,
		   char *err, size_t errlen)
{
	return schedules_plan_leap(row, now_us, 0, 0, st, err, errlen);
}

int schedules_plan_leap(const struct schedules_row *row, int64_t now_us, int64_t leap_from,
			int64_t leap_to, struct schedules_step *st, char *err, size_t errlen)
{
	struct cron c;
	struct tz *z = NULL;
	int64_t now = floor_div(now_us, 1000000), first_on_time, late_us, floor_t;
	bool leapt = leap_to > leap_from;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (row->runs_nothing) {
		snprintf(err, errlen, "neither command nor argv is set");
		return -1;
	}
	/* Checked like the cron expression: a schedule whose job every INSERT
	 * would refuse fires nothing, and says why in its row. */
	if (row->bad_what == SCHEDULES_BAD_ARGV) {
		snprintf(err, errlen, "argv is not a non-empty JSON array (of strings)");
		return -1;
	}
	if (row->bad_what == SCHEDULES_BAD_ENV) {
		snprintf(err, errlen, "env is not a JSON object (of strings)");
		return -1;
	}
	if (row->bad_next) {
		snprintf(err, errlen, "next_run holds no valid time (a zero date?)");
		return -1;
	}
	if (cron_parse(&c, row->cron, err, errlen) < 0 || cron_check(&c, err, errlen) < 0 ||
	    tz_open(&z, row->tz, err, errlen) < 0)
		return -1;
	if (!row->has_next) {
		/* A new or changed row starts with the first instant after
		 * now: what was before it is not missed. */
		rc = cron_next(&c, z, now, &st->next, err, errlen);
		goto out;
	}
	/* On time: fewer than grace seconds late (a daemon was up, only
	 * slow). Earlier instants were missed: nobody reached them. After a
	 * forward step of the clock, an instant before it is late by the time
	 * that really passed, and one it jumped over was reached by nobody:
	 * missed, however close to now. */
	late_us = now_us - row->next_run * 1000000;
	if (leapt && row->next_run <= leap_from)
		late_us -= (leap_to - leap_from) * 1000000;
	if (!(leapt && row->next_run > leap_from && row->next_run <= leap_to) &&
	    late_us < row->grace * 1000000) {
		st->fire = true;
		st->instant = row->next_run;
		rc = cron_next(&c, z, row->next_run, &st->next, err, errlen);
		goto out;
	}
	/* The first instant that can still be on time: within grace, and
	 * after what a step jumped over. */
	floor_t = now - row->grace;
	if (leapt && leap_to > floor_t)
		floor_t = leap_to;
	if (cron_next(&c, z, floor_t, &first_on_time, err, errlen) < 0)
		goto out;
	switch (row->missed) {
	case 'o':
		/* One job stands for the whole missed period. */
		st->merged = true;
		st->fire = true;
		st->instant = row->next_run;
		st->next = first_on_time;
		break;
	case 'a': {
		/* Each missed instant fires, oldest first; of more than
		 * SCHEDULES_ALL_MAX only the last ones. */
		int64_t ring[SCHEDULES_ALL_MAX], t = row->next_run, n = 0;
		while (t < first_on_time && n < SCHEDULES_COUNT_MAX) {
			ring[n % SCHEDULES_ALL_MAX] = t;
			n++;
			if (cron_next(&c, z, t, &t, err, errlen) < 0)
				goto out;
		}
		if (t < first_on_time) {
			st->next = first_on_time;
			st->skipped = n;
			st->skipped_more = true;
		} else if (n <= SCHEDULES_ALL_MAX) {
			st->fire = true;
			st->instant = row->next_run;
			if (cron_next(&c, z, row->next_run, &st->next, err, errlen) < 0)
				goto out;
		} else {
			st->next = ring[n % SCHEDULES_ALL_MAX];
			st->skipped = n - SCHEDULES_ALL_MAX;
		}
		break;
	}
	default: {
		int64_t t = row->next_run, n = 0;
		while (t < first_on_time && n < SCHEDULES_COUNT_MAX) {
			n++;
			if (cron_next(&c, z, t, &t, err, errlen) < 0)
				goto out;
		}
		st->next = first_on_time;
		st->skipped = n;
		st->skipped_more = t < first_on_time;
		break;
	}
	}
	rc = 0;
out:
	tz_free(z);
	return rc;
}

/* ---- statements ---------------------------------------------------------- */

static void fmt_utc(char *buf, size_t len, int64_t t, bool iso)
{
	time_t tt = (time_t)t;
	struct tm tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S", &tm);
}

static void add_utc(struct strbuf *sb, int64_t t)
{
	char buf[32];
	fmt_utc(buf, sizeof(buf), t, false);
	sb_printf(sb, "'%s'", buf);
}

void schedules_job_id(struct strbuf *sb, const char *name, int64_t instant)
{
	char buf[32];
	fmt_utc(buf, sizeof(buf), instant, true);
	sb_printf(sb, "cron:%s:%s", name, buf);
}

void schedules_scan_build(struct strbuf *sb)
{
	/* Instants are read and written as UTC: UTC_TIMESTAMP and
	 * TIMESTAMPDIFF ignore the session's time zone. One statement (the
	 * idle daemon's whole cost once a minute): the clock and the earliest
	 * future next_run in every row, joined to the due rows, or to one row
	 * of NULLs when none is due. */
	sb_printf(
		sb,
		"SELECT c.now_us, c.next_in, s.name, s.cron, s.timezone, s.next_run, s.missed, "
		"s.grace, s.nothing, s.raw_next FROM (SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', "
		"UTC_TIMESTAMP(6)) AS now_us, (SELECT TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), "
		"MIN(next_run)) FROM kyu_schedules WHERE enabled = 1 AND error IS NULL AND "
		"next_run > UTC_TIMESTAMP(6)) AS next_in) AS c LEFT JOIN (SELECT name, cron, "
		"timezone, TIMESTAMPDIFF(SECOND, '1970-01-01', next_run) AS next_run, missed, grace, "
		"CASE WHEN command IS NULL AND argv IS NULL THEN 1 WHEN argv IS NOT NULL AND "
		"(JSON_VALID(argv) IS NOT TRUE OR JSON_TYPE(argv) <> 'ARRAY' OR JSON_LENGTH(argv) = 0) "
		"THEN 2 WHEN env IS NOT NULL AND (JSON_VALID(env) IS NOT TRUE OR "
		"JSON_TYPE(env) <> 'OBJECT') THEN 3 ELSE 0 END AS nothing, "
		"next_run IS NOT NULL AS raw_next "
		"FROM kyu_schedules WHERE enabled = 1 "
		"AND error IS NULL AND (next_run IS NULL OR next_run <= UTC_TIMESTAMP(6)) "
		"ORDER BY next_run LIMIT %d) AS s ON TRUE",
		SCHEDULES_BATCH);
}

/* The compare-and-set: the row still holds the next_run (and the
 * expression and zone) this daemon planned from. */
static void add_cas(struct strbuf *sb, const struct schedules_row *row)
{
	sb_adds(sb, " WHERE s.name = ");
	db_quotes(sb, row->name);
	if (row->has_next) {
		sb_adds(sb, " AND s.next_run = ");
		add_utc(sb, row->next_run);
	} else {
		sb_adds(sb, " AND s.next_run IS NULL");
	}
	sb_adds(sb, " AND s.cron = ");
	db_quotes(sb, row->cron);
	sb_adds(sb, " AND s.timezone = ");
	db_quotes(sb, row->tz);
	sb_adds(sb, " AND s.enabled = 1 AND s.error IS NULL");
}

void schedules_step_build(struct strbuf *sb, const char *name, const struct schedules_row *row,
			  const struct schedules_step *st)
{
	struct strbuf id = { 0 };

	if (!st->fire) {
		sb_adds(sb, "UPDATE kyu_schedules s SET s.next_run = ");
		add_utc(sb, st->next);
		add_cas(sb, row);
		return;
	}
	schedules_job_id(&id, name, st->instant);
	/* MariaDB assigns left to right: last_run sees the new last_job.
	 * The overlap rule reads the previous job by its primary key. */
	sb_adds(sb, "START TRANSACTION; UPDATE kyu_schedules s SET s.last_job = IF(CASE s.overlap "
		    "WHEN 'allow' THEN 1 "
		    "WHEN 'skip' THEN NOT EXISTS (SELECT 1 FROM kyu_jobs p WHERE p.id = s.last_job "
		    "AND p.status IN ('waiting', 'running')) "
		    "ELSE NOT EXISTS (SELECT 1 FROM kyu_jobs p WHERE p.id = s.last_job "
		    "AND p.status = 'waiting') END, ");
	db_quote(sb, id.buf, id.len);
	sb_adds(sb, ", s.last_job), s.last_run = IF(s.last_job <=> ");
	db_quote(sb, id.buf, id.len);
	sb_adds(sb, ", ");
	add_utc(sb, st->instant);
	sb_adds(sb, ", s.last_run), s.next_run = ");
	add_utc(sb, st->next);
	add_cas(sb, row);
	/* The job only if this transaction moved next_run and the overlap
	 * rule let it; an id that exists already (the instant fired before,
	 * its row still kept) is left alone, and counts as no insert (with
	 * CLIENT_FOUND_ROWS the duplicate-key update alone would count 1). */
	sb_adds(sb, "; SET @kyu_cas = ROW_COUNT(); "
		    "INSERT INTO kyu_jobs (id, queue, command, argv, env, cwd, priority, "
		    "max_attempts, time_limit, concurrency_key) SELECT ");
	db_quote(sb, id.buf, id.len);
	sb_adds(sb, ", s.queue, s.command, s.argv, s.env, s.cwd, s.priority, s.max_attempts, "
		    "s.time_limit, IF(s.overlap = 'queue', IFNULL(s.concurrency_key, "
		    "CONCAT('cron:', s.name)), s.concurrency_key) FROM kyu_schedules s "
		    "WHERE s.name = ");
	db_quotes(sb, row->name);
	sb_adds(sb, " AND @kyu_cas = 1 AND s.last_job <=> ");
	db_quote(sb, id.buf, id.len);
	sb_adds(sb, " AND NOT EXISTS (SELECT 1 FROM kyu_jobs d WHERE d.id = ");
	db_quote(sb, id.buf, id.len);
	sb_adds(sb, ") ON DUPLICATE KEY UPDATE seq = seq; COMMIT");
	sb_free(&id);
}

/* After the clock stepped back: every next_run that lies ahead is
 * computed again from the clock (NULL: the first instant after now,
 * schedules_plan), or the schedule would wait out the step. */
void schedules_rebase_build(struct strbuf *sb)
{
	sb_adds(sb, "UPDATE kyu_schedules SET next_run = NULL WHERE enabled = 1 AND error IS NULL "
		    "AND next_run > UTC_TIMESTAMP(6)");
}

void schedules_mark_build(struct strbuf *sb, const struct schedules_row *row, const char *error)
{
	sb_adds(sb, "UPDATE kyu_schedules s SET s.error = ");
	db_quotes(sb, error);
	sb_adds(sb, ", s.next_run = NULL WHERE s.name = ");
	db_quotes(sb, row->name);
	sb_adds(sb, " AND s.cron = ");
	db_quotes(sb, row->cron);
	sb_adds(sb, " AND s.timezone = ");
	db_quotes(sb, row->tz);
	sb_adds(sb, " AND s.enabled = 1 AND s.error IS NULL");
}

bool schedules_build(struct schedules *s, struct strbuf *sb, double now)
{
	int i = next_row(s, now);
	char err[512];

	free(s->sent_error);
	s->sent_error = NULL;
	if (s->rebase) {
		s->rebase = false;
		s->sent = SCHEDULES_REBASE;
		schedules_rebase_build(sb);
		return false;
	}
	if (i < 0) {
		free_rows(s);
		s->sent = SCHEDULES_SCAN;
		s->last_scan = now;
		s->scan_at = now + s->poll;
		schedules_scan_build(sb);
		return false;
	}
	s->next_row++;
	s->sent_row = i;
	/* The database clock now: the scan's reading plus the time since. */
	if (schedules_plan_leap(&s->rows[i], s->db_now_us + (int64_t)((now - s->scanned) * 1e6),
				floor_div(s->leap_from, 1000000), floor_div(s->leap_to, 1000000),
				&s->sent_step, err, sizeof(err)) < 0) {
		s->sent = SCHEDULES_MARK;
		/* It quotes the row's text, cut by bytes: whole characters
		 * only, or a strict utf8mb4 server refuses it (utf8.h). */
		utf8_fix(err);
		s->sent_error = xstrdup(err);
		schedules_mark_build(sb, &s->rows[i], err);
		return false;
	}
	s->sent = SCHEDULES_STEP;
	schedules_step_build(sb, s->rows[i].name, &s->rows[i], &s->sent_step);
	return s->sent_step.fire;
}

/* ---- replies -------------------------------------------------------------- */

static char *dup_cell(const char *v)
{
	return xstrdup(v ? v : "");
}

/* The scan's reading of the clock (sent at last_scan): a step is logged
 * and changes what is missed (forward) or what is next (backward). */
static void clock_read(struct schedules *s, double now)
{
	double since = s->clock.known ? now - s->clock.got : 0;
	int64_t step = dbclock_read(&s->clock, s->db_now_us, s->last_scan, now);

	if (step > 0) {
		s->leap_from = s->db_now_us - step;
		s->leap_to = s->db_now_us;
		log_warn(
			"the database clock moved %+.1f s in %.1f s (by this worker's clock): the "
			"schedules' instants it jumped over count as missed (each schedule's missed "
			"policy applies to them)",
			(double)step / 1e6, since);
	} else if (step < 0) {
		s->leap_from = s->leap_to = 0;
		s->rebase = true;
		log_warn(
			"the database clock moved %+.1f s in %.1f s (by this worker's clock): the "
			"schedules' next runs that lie ahead are computed again from the clock now "
			"(an instant whose job exists already is not enqueued again)",
			(double)step / 1e6, since);
	}
}

static void read_scan(struct schedules *s, const struct db_reply *r, double now)
{
	const struct db_result *rows = &r->r[0];
	const char *next_in;

	free_rows(s);
	s->stepped = false;
	s->cas_lost = false;
	if (rows->n_rows > 0 && rows->n_cols >= 10) {
		s->rows = xcalloc(rows->n_rows, sizeof(*s->rows));
		for (size_t i = 0; i < rows->n_rows; i++) {
			struct schedules_row *row;
			const char *next = db_cell(rows, i, 5), *g = db_cell(rows, i, 7),
				   *m = db_cell(rows, i, 6), *none = db_cell(rows, i, 8),
				   *raw = db_cell(rows, i, 9);
			bool nul = false;
			if (!db_cell(rows, i, 2))
				continue; /* the one row of NULLs: nothing due */
			/* A NUL byte in a key column cannot be quoted back into
			 * the compare-and-set: such a row is never matched. */
			for (unsigned k = 2; k <= 4; k++)
				nul |= db_cell(rows, i, k) &&
				       strlen(db_cell(rows, i, k)) !=
					       rows->lens[i * rows->n_cols + k];
			if (nul) {
				log_debug("schedule %s: a NUL byte in its name, cron or timezone; "
					  "cannot be fired",
					  db_cell(rows, i, 2));
				continue;
			}
			row = &s->rows[s->n_rows++];
			row->name = dup_cell(db_cell(rows, i, 2));
			row->cron = dup_cell(db_cell(rows, i, 3));
			row->tz = dup_cell(db_cell(rows, i, 4));
			row->has_next = next != NULL;
			row->next_run = next ? strtoll(next, NULL, 10) : 0;
			row->missed = 'o';
			if (m && *m)
				row->missed = *m;
			row->grace = g ? strtoll(g, NULL, 10) : 60;
			row->runs_nothing = none && strcmp(none, "1") == 0;
			row->bad_what = none && strcmp(none, "2") == 0   ? SCHEDULES_BAD_ARGV
					: none && strcmp(none, "3") == 0 ? SCHEDULES_BAD_ENV
									 : 0;
			/* A zero date: not NULL, yet no time. */
			row->bad_next = !next && raw && strcmp(raw, "1") == 0;
		}
	}
	s->db_now_us =
		rows->n_rows && db_cell(rows, 0, 0) ? strtoll(db_cell(rows, 0, 0), NULL, 10) : 0;
	if (s->db_now_us > 0)
		clock_read(s, now);
	s->scanned = now;
	next_in = rows->n_rows && rows->n_cols >= 10 ? db_cell(rows, 0, 1) : NULL;
	/* Sleep until the earliest future next_run (its first microsecond
	 * is reached, not just approached), or the fallback period; due rows are
	 * stepped first, and a scan follows them. */
	if (next_in) {
		double in = (double)strtoll(next_in, NULL, 10) / 1e6 + 0.001;
		if (in < 0.001)
			in = 0.001;
		if (now + in < s->scan_at)
			s->scan_at = now + in;
	}
	/* A hold outlives its row's trouble only while the row is still due:
	 * fixed, fired by another daemon, disabled or deleted, it goes. Held
	 * rows that are due wait for their hold (schedules_wake_time). */
	for (int i = 0; i < s->n_holds;) {
		bool due = false;
		for (int k = 0; k < s->n_rows && !due; k++)
			due = strcmp(s->rows[k].name, s->holds[i].name) == 0;
		if (due) {
			i++;
			continue;
		}
		free(s->holds[i].name);
		s->holds[i] = s->holds[--s->n_holds];
	}
}

static void log_step(const struct schedules *s, const struct schedules_row *row,
		     const struct db_reply *r)
{
	const struct schedules_step *st = &s->sent_step;
	char at[32], next[32];

	fmt_utc(next, sizeof(next), st->next, true);
	if (st->skipped > 0) {
		char from[32];
		fmt_utc(from, sizeof(from), row->next_run, true);
		log_notice("schedule %s: %s%" PRId64
			   " missed instant(s) from %s skipped (missed = %s)"
			   "; next run %s",
			   row->name, st->skipped_more ? "more than " : "", st->skipped, from,
			   row->missed == 'a' ? "all, more than 100" : "skip", next);
	}
	if (st->merged) {
		char from[32];
		fmt_utc(from, sizeof(from), row->next_run, true);
		log_notice("schedule %s: missed instants from %s: one job for them (missed = once)",
			   row->name, from);
	}
	if (!st->fire) {
		if (!row->has_next)
			log_info("schedule %s: next run %s", row->name, next);
		return;
	}
	fmt_utc(at, sizeof(at), st->instant, true);
	if (r->n >= 4 && r->r[3].affected > 0)
		log_info("schedule %s: enqueued job cron:%s:%s; next run %s", row->name, row->name,
			 at, next);
	else
		log_info("schedule %s: no job for %s: its previous job is still waiting or running "
			 "(overlap), or the job exists already; next run %s",
			 row->name, at, next);
}

void schedules_read(struct schedules *s, const struct db_reply *r, double now)
{
	enum schedules_sent sent = s->sent;
	const struct schedules_row *row =
		sent == SCHEDULES_STEP || sent == SCHEDULES_MARK ? &s->rows[s->sent_row] : NULL;

	s->sent = SCHEDULES_NONE;
	if (r->fail == DB_LOST || r->fail == DB_RETRY) {
		/* Whatever happened, the next scan reads what is true now. */
		s->stepped = true;
		if (sent == SCHEDULES_REBASE)
			s->rebase = true;
		if (sent == SCHEDULES_SCAN)
			s->scan_at = now + (r->fail == DB_RETRY ? SCHEDULES_MIN_GAP : 1.0);
		else
			rescan_soon(s, now);
		return;
	}
	if (r->fail != DB_OK) {
		if (sent == SCHEDULES_SCAN) {
			/* Once per spell: a missing table or grant fails the
			 * same way every fallback period until it is fixed. */
			if (spell_begin(&s->scan_failing))
				log_err("reading kyu_schedules failed: %s (is sql/schema.sql loaded, "
					"and SELECT, UPDATE on it granted?); trying again every %.0f s",
					r->err, s->poll);
			s->scan_at = now + s->poll;
		} else if (sent == SCHEDULES_REBASE) {
			/* Not tried again: the schedules keep their next runs, late
			 * by the step, as before a step was seen. */
			log_warn(
				"computing the schedules' next runs again after the clock moved back "
				"failed: %s",
				r->err);
		} else if (row) {
			double wait = add_hold(s, row->name, now);
			log_warn("schedule %s: %s failed: %s; trying again in %.0f s", row->name,
				 sent == SCHEDULES_MARK ? "recording its error"
							: "enqueueing its job",
				 r->err, wait);
			rescan_soon(s, now);
		}
		return;
	}
	switch (sent) {
	case SCHEDULES_SCAN:
		if (spell_end(&s->scan_failing))
			log_notice("reading kyu_schedules works again");
		if (r->n >= 1)
			read_scan(s, r, now);
		break;
	case SCHEDULES_STEP: {
		int at = s->sent_step.fire ? 1 : 0;
		int cas = r->n > at ? (int)r->r[at].affected : 0;
		s->stepped = true;
		drop_hold(s, row->name);
		if (cas == 0) {
			log_debug("schedule %s: changed by another daemon or by hand; read again",
				  row->name);
			s->cas_lost = true;
			break;
		}
		if (s->sent_step.fire && r->n >= 4 && r->r[3].affected > 0) {
			s->fired++;
			s->fired_new = true;
		}
		log_step(s, row, r);
		break;
	}
	case SCHEDULES_REBASE:
		s->stepped = true;
		log_notice(
			"%llu schedule(s) whose next run lay ahead of the clock: next run computed "
			"again from the clock now",
			r->n >= 1 ? (unsigned long long)r->r[0].affected : 0ULL);
		break;
	case SCHEDULES_MARK:
		s->stepped = true;
		if (r->n >= 1 && r->r[0].affected > 0)
			log_warn(
				"schedule %s: %s (kyu_schedules.error is set; changing the row clears "
				"it)",
				row->name, s->sent_error);
		break;
	case SCHEDULES_NONE:
		break;
	}
	/* Every due row stepped: read again at once when something moved
	 * (a caught-up schedule may be due again, another daemon may have
	 * moved a row), else the scan's timer stands. */
	if (sent != SCHEDULES_SCAN && next_row(s, now) < 0 && s->stepped) {
		if (s->cas_lost)
			rescan_soon(s, now);
		else
			s->scan_at = now;
	}
}
