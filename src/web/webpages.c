/* The dashboard's pages but the overview and the job lists (kyu web). See
 * webpages.h. */
#include "webpages.h"

#include <errno.h>
#include <mysqld_error.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/capture.h"
#include "common/lock_sql.h"
#include "common/util.h"
#include "webjson.h"

/* A page of rows: the first WEBPAGES_PAGE of r (the statement asked for one
 * more, to know whether there is a next page) and the next page's cursor,
 * made of the last row's cursor columns. */
static json_t *page_json(const struct db_result *r, const char *const *numeric, int t_col,
			 int seq_col)
{
	json_t *next = json_null();

	if (r->n_rows > WEBPAGES_PAGE) {
		const char *seq = db_cell(r, WEBPAGES_PAGE - 1, (unsigned)seq_col);
		const char *t = t_col >= 0 ? db_cell(r, WEBPAGES_PAGE - 1, (unsigned)t_col) : NULL;
		char buf[128];
		if (t_col >= 0)
			snprintf(buf, sizeof(buf), "%s,%s", t ? t : "", seq ? seq : "0");
		else
			snprintf(buf, sizeof(buf), "%s", seq ? seq : "0");
		json_decref(next);
		next = json_string(buf);
	}
	return json_pack("{s:o, s:o}", "rows", webjson_rows(r, WEBPAGES_PAGE, numeric), "next",
			 next);
}

int webpages_parse_cursor(const char *s, char *time, size_t timelen, unsigned long long *seq)
{
	const char *comma = s ? strrchr(s, ',') : NULL;
	int64_t v;
	size_t n;

	if (!comma)
		return -EINVAL;
	n = (size_t)(comma - s);
	/* "2026-11-24 06:35:00.123456": digits, '-', ' ', ':', '.' only. */
	if (n == 0 || n >= timelen || strspn(s, "0123456789-: .") != n)
		return -EINVAL;
	if (parse_i64(comma + 1, 0, INT64_MAX, &v) < 0)
		return -EINVAL;
	memcpy(time, s, n);
	time[n] = '\0';
	*seq = (unsigned long long)v;
	return 0;
}

/* Not seq nor owner: BIGINT UNSIGNED identifiers, sent as strings whatever
 * their value, so that a client never sees one rounded or its type change. */
static const char *const job_num_cols[] = {
	"pid",        "attempts",       "max_attempts", "tempfails",  "priority",
	"time_limit", "exit_code",      "signal",       "duration",   "cpu_user",
	"cpu_sys",    "max_rss",        "running_for",  "lease_left", "after_left",
	"after_bad",  "has_downstream", "progress",     "key_slot",   NULL
};

/* A read of kyu_jobs that names the status channel's columns (schema
 * version 6, kyu_jobs(7)): sql as built with them (status true), else,
 * on a schema without them, as built without. */
static int read_status_cols(struct webdb *d,
			    void (*build)(struct strbuf *sb, bool status, const void *arg),
			    const void *arg, const struct db_result **r)
{
	struct strbuf sb = { 0 };
	int rc;

	build(&sb, true, arg);
	rc = webdb_read(d, sb.buf, sb.len, r);
	if (rc < 0 && d->db && db_error_code(d->db) == ER_BAD_FIELD_ERROR) {
		sb_reset(&sb);
		build(&sb, false, arg);
		rc = webdb_read(d, sb.buf, sb.len, r);
	}
	sb_free(&sb);
	return rc;
}

struct running_arg {
	int64_t seq;
};

static void running_sql(struct strbuf *sb, bool status, const void *arg)
{
	const struct running_arg *a = arg;

	sb_adds(sb, WEBDB_STMT_LIMIT
		"SELECT seq, id, queue, host, pid, attempts, max_attempts, started_at, "
		"ROUND(TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1000000, 1) AS running_for, "
		"ROUND(TIMESTAMPDIFF(MICROSECOND, NOW(6), lease_until) / 1000000, 1) AS lease_left, "
		"LEFT(COALESCE(command, argv), 200) AS what, ");
	if (status)
		sb_adds(sb, "progress, progress_note, ");
	sb_adds(sb,
		/* The end of this attempt's live tail, without its
		 * first line; not an earlier attempt's output, which
		 * the row holds until kyud first writes one. */
		"IF(output LIKE CONCAT('" CAPTURE_LIVE_PREFIX "', attempts, ':%'), "
		"RIGHT(SUBSTRING(output, LOCATE(_binary '\\n', output) + 1), 600), NULL) "
		"AS output_tail FROM kyu_jobs WHERE status = 'running'");
	if (a->seq)
		sb_printf(sb, " AND seq < %lld", (long long)a->seq);
	sb_printf(sb, " ORDER BY seq DESC LIMIT %d", WEBPAGES_PAGE + 1);
}

/* Running jobs, newest claim first: status = 'running' is a prefix of two
 * indexes, and there are never more running rows than slots. */
unsigned webpages_running(struct webdb *d, const char *before, json_t **out)
{
	const struct db_result *r;
	struct running_arg a = { 0 };

	if (before && parse_i64(before, 1, INT64_MAX, &a.seq) < 0)
		return webjson_error(out, 400, "running: before: not a row number: '%s'", before);
	if (read_status_cols(d, running_sql, &a, &r) < 0)
		return webdb_failed(d, out, "running");
	*out = page_json(r, job_num_cols, -1, 0);
	return 200;
}

/* How many attempts a job's page lists, the newest: a job retried for
 * days may have thousands. And how much of each one's output tail. */
#define JOB_ATTEMPTS 100
#define JOB_ATTEMPT_TAIL 2000

static const char *const attempt_num_cols[] = { "attempt", "pid",      "exit_code",
						"signal",  "duration", "cpu_user",
						"cpu_sys", "max_rss",  NULL };

/* The attempts of the job of row seq (kyu_jobs(7), "Attempts"), oldest
 * first: *out gets {"rows": the newest JOB_ATTEMPTS, "more": whether there
 * are older ones}, or stays NULL on a schema without kyu_attempts or for
 * an account that may not read it (the page works without). 0 or -1. */
static int job_attempts(struct webdb *d, unsigned long long seq, json_t **out)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	json_t *rows;
	bool more;
	unsigned e;
	int rc = 0;

	*out = NULL;
	/* Newest first on the index (job_seq, seq), then turned around. */
	sb_printf(
		&sb,
		WEBDB_STMT_LIMIT
		"SELECT seq, attempt, outcome, daemon, host, pid, started_at, finished_at, "
		"TIMESTAMPDIFF(MICROSECOND, started_at, finished_at) / 1000000 AS duration, exit_code, "
		"`signal`, error, cpu_user, cpu_sys, max_rss, RIGHT(output_tail, %d) AS output_tail "
		"FROM kyu_attempts WHERE job_seq = %llu ORDER BY seq DESC LIMIT %d",
		JOB_ATTEMPT_TAIL, seq, JOB_ATTEMPTS + 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0) {
		e = db_connected(d->db) ? db_error_code(d->db) : 0;
		rc = e == ER_NO_SUCH_TABLE || e == ER_TABLEACCESS_DENIED_ERROR ? 0 : -1;
		goto cleanup;
	}
	more = r->n_rows > JOB_ATTEMPTS;
	rows = webjson_rows(r, JOB_ATTEMPTS, attempt_num_cols);
	for (size_t i = 0, n = json_array_size(rows); i < n / 2; i++) {
		json_t *a = json_incref(json_array_get(rows, i));
		json_array_set(rows, i, json_array_get(rows, n - 1 - i));
		json_array_set_new(rows, n - 1 - i, a);
	}
	*out = json_pack("{s:o, s:b}", "rows", rows, "more", more);
cleanup:
	sb_free(&sb);
	return rc;
}

struct job_arg {
	const char *id;
	bool workflows;
};

static void job_sql(struct strbuf *sb, bool status, const void *arg)
{
	const struct job_arg *a = arg;

	sb_adds(sb, WEBDB_STMT_LIMIT
		"SELECT seq, id, queue, status, priority, command, argv, env, cwd, "
		"run_at, due, attempts, max_attempts, tempfails, time_limit, exit_code, "
		"`signal`, error, started_at, finished_at, duration, cpu_user, cpu_sys, max_rss, "
		"host, pid, owner, lease_until, concurrency_key, created_at, updated_at, "
		"output, NOW(6) AS db_now, " WEBPAGES_ZONE " AS db_zone");
	/* Schema version 5 (kyu_jobs(7), "Workflows"). */
	if (a->workflows)
		sb_adds(sb, ", after, after_policy, batch, after_batch, after_left, after_bad, "
			    "cancelled_by, has_downstream");
	/* Schema version 6 (kyu_jobs(7), "The status channel", "Unique
	 * keys", "Trace context", "Per-key limits"). */
	if (status)
		sb_adds(sb, ", progress, progress_note, result, unique_key, traceparent, key_slot");
	sb_adds(sb, " FROM kyu_jobs WHERE id = ");
	db_quotes(sb, a->id);
}

/* Every column of one job, and its attempts. */
unsigned webpages_job(struct webdb *d, const char *id, bool workflows, json_t **out)
{
	const struct db_result *r;
	struct job_arg a = { id, workflows };
	unsigned st;

	if (!id || !*id)
		return webjson_error(out, 400, "job: id: missing");
	if (read_status_cols(d, job_sql, &a, &r) < 0) {
		st = webdb_failed(d, out, "job");
	} else if (r->n_rows == 0) {
		st = webjson_error(out, 404, "no job with id '%s'", id);
	} else {
		json_t *rows = webjson_rows(r, 1, job_num_cols);
		const char *status = db_cell(r, 0, 3), *attempts = db_cell(r, 0, 11);
		/* Whether output is this attempt's live tail (kyud.8, "Live
		 * output") rather than an earlier attempt's. */
		bool live = status && strcmp(status, "running") == 0 && attempts &&
			    capture_is_live(db_cell(r, 0, 31), r->lens[31],
					    (unsigned)strtoul(attempts, NULL, 10));
		json_t *job = json_array_get(rows, 0), *tries;
		unsigned long long seq = strtoull(db_cell(r, 0, 0) ?: "0", NULL, 10);
		/* The clock and zone its times are read in: for "3 min ago"
		 * and the zone shown beside each, not columns of the job. */
		*out = json_pack("{s:O, s:b, s:O, s:O}", "job", job, "live", live, "now",
				 json_object_get(job, "db_now"), "zone",
				 json_object_get(job, "db_zone"));
		json_object_del(job, "db_now");
		json_object_del(job, "db_zone");
		json_decref(rows);
		st = 200;
		if (job_attempts(d, seq, &tries) < 0) {
			json_decref(*out);
			st = webdb_failed(d, out, "job");
		} else if (tries) {
			json_object_set_new(*out, "attempts", tries);
		}
	}
	return st;
}

/* Schedules by name (the primary key), a page at a time. */
unsigned webpages_schedules(struct webdb *d, const char *after, const char *from, json_t **out)
{
	static const char *const num[] = { "enabled", "grace", NULL };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	bool exists = false;
	unsigned st;

	if (webdb_has_table(d, "kyu_schedules", &exists) < 0)
		return webdb_failed(d, out, "schedules");
	if (!exists)
		return (*out = json_pack("{s:b, s:[], s:n}", "exists", 0, "rows", "next"), 200);
	sb_adds(&sb, WEBDB_STMT_LIMIT
		"SELECT name, cron, timezone, queue, enabled, missed, overlap, grace, "
		"next_run, last_run, last_job, error, "
		"LEFT(COALESCE(command, argv), 200) AS what FROM kyu_schedules");
	if (after || from) {
		/* from: the page that starts at a schedule (a job's link). */
		sb_adds(&sb, after ? " WHERE name > " : " WHERE name >= ");
		db_quotes(&sb, after ? after : from);
	}
	sb_printf(&sb, " ORDER BY name LIMIT %d", WEBPAGES_PAGE + 1);
	if (webdb_read(d, sb.buf, sb.len, &r) < 0) {
		st = webdb_failed(d, out, "schedules");
	} else {
		*out = page_json(r, num, -1, 0);
		json_object_set_new(*out, "exists", json_true());
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* The locks, as kyu locks lists them (lock.c). */
unsigned webpages_locks(struct webdb *d, json_t **out)
{
	static const char *const num[] = { "slot", "pid", NULL };
	struct strbuf sb = { 0 };
	const struct db_result *r;
	bool exists = false;
	unsigned st;

	if (webdb_has_table(d, "kyu_locks", &exists) < 0)
		return webdb_failed(d, out, "locks");
	if (!exists)
		return (*out = json_pack("{s:b, s:[]}", "exists", 0, "rows"), 200);
	sb_adds(&sb, WEBDB_STMT_LIMIT);
	lock_sql_list(&sb, NULL);
	sb_adds(&sb, " LIMIT 1000");
	if (webdb_read(d, sb.buf, sb.len, &r) < 0) {
		st = webdb_failed(d, out, "locks");
	} else {
		*out = json_pack("{s:b, s:o}", "exists", 1, "rows", webjson_rows(r, 1000, num));
		st = 200;
	}
	sb_free(&sb);
	return st;
}

/* The daemons: their registry rows when the schema has kyu_daemons
 * (version 3), else the hosts of the running jobs (a daemon with nothing
 * running is then not seen). */
unsigned webpages_daemons(struct webdb *d, json_t **out)
{
	/* Slots, running and drain from schema version 9; without them (an
	 * older schema) the rest. */
	static const char beats[] = WEBDB_STMT_LIMIT
		"SELECT id, host, pid, wake_addr, queues, version, started, last_seen, "
		"ROUND(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(6)) / 1000000, 1) AS seen_ago, "
		"live_until > NOW(6) AS live, slots, running, drain, drain_by FROM kyu_daemons "
		"ORDER BY last_seen DESC LIMIT 1000";
	static const char beats8[] = WEBDB_STMT_LIMIT
		"SELECT id, host, pid, wake_addr, queues, version, started, last_seen, "
		"ROUND(TIMESTAMPDIFF(MICROSECOND, last_seen, NOW(6)) / 1000000, 1) AS seen_ago, "
		"live_until > NOW(6) AS live FROM kyu_daemons ORDER BY last_seen DESC LIMIT 1000";
	static const char hosts[] = WEBDB_STMT_LIMIT
		"SELECT host, COUNT(*) AS running, MIN(started_at) AS oldest_start, "
		"MAX(lease_until) AS last_lease FROM kyu_jobs WHERE status = 'running' "
		"GROUP BY host ORDER BY host LIMIT 1000";
	static const char *const num[] = { "pid", "running", "slots", "seen_ago", "live", NULL };
	const struct db_result *r;
	bool exists = false;

	if (webdb_has_table(d, "kyu_daemons", &exists) < 0)
		return webdb_failed(d, out, "daemons");
	if (!exists) {
		if (webdb_read(d, hosts, sizeof(hosts) - 1, &r) < 0)
			return webdb_failed(d, out, "daemons");
	} else if (webdb_read(d, beats, sizeof(beats) - 1, &r) < 0) {
		if (db_error_code(d->db) != ER_BAD_FIELD_ERROR ||
		    webdb_read(d, beats8, sizeof(beats8) - 1, &r) < 0)
			return webdb_failed(d, out, "daemons");
	}
	*out = json_pack("{s:s, s:o}", "source", exists ? "kyu_daemons" : "running jobs", "rows",
			 webjson_rows(r, 1000, num));
	return 200;
}
