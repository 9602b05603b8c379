#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "util.h"

static void add_queue_filter(struct db *db, struct strbuf *sb, const struct kyu_config *cfg)
{
	if (cfg->n_queues == 0)
		return;
	sb_adds(sb, " AND queue IN (");
	for (int i = 0; i < cfg->n_queues; i++) {
		if (i)
			sb_adds(sb, ",");
		db_quote(db, sb, cfg->queues[i], strlen(cfg->queues[i]));
	}
	sb_adds(sb, ")");
}

static char *dup_field(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static unsigned to_uint(const char *s)
{
	return s ? (unsigned)strtoul(s, NULL, 10) : 0;
}

static void add_min_due(struct db *db, struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_adds(sb, "SELECT MIN(due) FROM kyu_jobs");
	if (cfg->n_queues) {
		sb_adds(sb, " WHERE 1");
		add_queue_filter(db, sb, cfg);
	}
}

static void add_id_list(struct strbuf *sb, const uint64_t *v, int n)
{
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s%" PRIu64, i ? "," : "", v[i]);
}

/* Each row must still belong to the claim that took it; the seq list
 * before this finds the rows by primary key, this only filters them. */
static void add_owner_match(struct strbuf *sb, const uint64_t *seqs, const uint64_t *tokens, int n)
{
	sb_adds(sb, " AND owner = CASE seq");
	for (int i = 0; i < n; i++)
		sb_printf(sb, " WHEN %" PRIu64 " THEN %" PRIu64, seqs[i], tokens[i]);
	sb_adds(sb, " END");
}

bool store_finish_plain(const struct finish *f)
{
	return f->outcome == OUT_SUCCEEDED && f->output_len == 0 && !f->error;
}

/* One UPDATE for all plain successes among f, whatever their claim: the
 * common case under load costs one statement per batch. Returns how many
 * it covers (0: nothing appended). seqs and tokens have room for n. */
static int add_bulk_success(struct strbuf *sb, const struct finish *f, int n, uint64_t *seqs,
			    uint64_t *tokens)
{
	size_t start = sb->len;
	int count = 0;

	sb_adds(sb, "UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0, `signal` = NULL, "
		    "error = NULL, output = NULL, finished_at = NOW(6), "
		    "duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6, pid = CASE seq");
	for (int i = 0; i < n; i++) {
		if (!store_finish_plain(&f[i]))
			continue;
		sb_printf(sb, " WHEN %" PRIu64 " THEN %d", f[i].seq, f[i].pid);
		seqs[count] = f[i].seq;
		tokens[count++] = f[i].token;
	}
	if (count == 0) {
		sb->len = start;
		sb->buf[start] = '\0';
		return 0;
	}
	sb_adds(sb, " ELSE pid END, status = IF(status = 'cancelled', 'cancelled', 'succeeded') "
		    "WHERE seq IN (");
	add_id_list(sb, seqs, count);
	sb_adds(sb, ")");
	add_owner_match(sb, seqs, tokens, count);
	sb_adds(sb, " AND status IN ('running', 'cancelled')");
	return count;
}

int store_claim(struct db *db, const struct kyu_config *cfg, uint64_t token, const char *host, int n,
		struct claim_finish *fin, struct claimed **ret, int64_t *next_due_us, enum db_fail *fail)
{
	struct strbuf sb = { 0 };
	MYSQL_RES *res = NULL;
	MYSQL_ROW row;
	struct claimed *rows = NULL;
	uint64_t *seqs = NULL, *tokens = NULL;
	int count = -1, got, n_fin = 0;

	*ret = NULL;
	if (fin) {
		fin->done = false;
		fin->rejected = 0;
		seqs = xcalloc((size_t)fin->n + 1, sizeof(*seqs));
		tokens = xcalloc((size_t)fin->n + 1, sizeof(*tokens));
		/* Results first: their rows leave the due index before the
		 * claim scans it. */
		n_fin = add_bulk_success(&sb, fin->f, fin->n, seqs, tokens);
		if (n_fin)
			sb_adds(&sb, "; ");
	}
	/* Mark: one statement takes up to n due rows for this claim's token.
	 * `due` is the server-maintained due time (run_at while waiting, the
	 * lease while running), so expired leases are reclaimed by the same
	 * statement. */
	sb_adds(&sb, "UPDATE kyu_jobs ");
	if (cfg->claim != CLAIM_PLAIN) {
		sb_adds(&sb, "JOIN (SELECT seq FROM kyu_jobs WHERE due <= NOW(6)");
		add_queue_filter(db, &sb, cfg);
		sb_printf(&sb, " ORDER BY due, priority LIMIT %d FOR UPDATE%s) AS c USING (seq) ", n,
			  cfg->claim == CLAIM_SKIP_LOCKED ? " SKIP LOCKED" : "");
	}
	sb_printf(&sb,
		  "SET owner = %" PRIu64 ", lease_until = NOW(6) + INTERVAL %d SECOND, "
		  "attempts = attempts + 1, started_at = NOW(6), finished_at = NULL, duration = NULL, "
		  "pid = NULL, host = ",
		  token, cfg->lease);
	db_quote(db, &sb, host, strlen(host));
	sb_adds(&sb, ", status = 'running'");
	if (cfg->claim == CLAIM_PLAIN) {
		sb_adds(&sb, " WHERE due <= NOW(6)");
		add_queue_filter(db, &sb, cfg);
		sb_printf(&sb, " ORDER BY due, priority LIMIT %d", n);
	}
	/* Select, in the same round trip: what this token marked, and the
	 * next due time (which tells the supervisor how long everyone may
	 * sleep when the batch comes back short). The one-row derived table
	 * makes the SELECT return that time even when nothing was marked. */
	sb_printf(&sb,
		  "; SELECT j.seq, j.id, j.queue, j.command, j.argv, j.env, j.cwd, j.attempts, "
		  "j.tempfails, COALESCE(j.max_attempts, %d), COALESCE(j.time_limit, %d), d.next "
		  "FROM (SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), (",
		  cfg->max_attempts, cfg->time_limit);
	add_min_due(db, &sb, cfg);
	sb_printf(&sb,
		  ")) AS next) AS d LEFT JOIN kyu_jobs AS j ON j.owner = %" PRIu64
		  " AND j.status = 'running'",
		  token);
	if ((*fail = db_execs(db, &sb)) != DB_OK)
		goto out;
	if (n_fin) {
		fin->done = true;
		fin->rejected = n_fin - (int)db_affected(db);
		if ((*fail = db_next_result(db)) != DB_OK)
			goto out;
	}
	got = (int)db_affected(db);
	if ((*fail = db_next_result(db)) != DB_OK)
		goto out;
	res = mysql_store_result(db->my);
	if (!res) {
		snprintf(db->err, sizeof(db->err), "reading claimed rows: %s", mysql_error(db->my));
		*fail = DB_LOST;
		db_close(db);
		goto out;
	}
	*next_due_us = INT64_MIN;
	rows = xcalloc((size_t)(got > 0 ? got : 1), sizeof(*rows));
	count = 0;
	while ((row = mysql_fetch_row(res))) {
		struct claimed *c;
		if (got < n)
			*next_due_us = row[11] ? strtoll(row[11], NULL, 10) : INT64_MAX;
		if (!row[0] || count >= got)
			continue;
		c = &rows[count++];
		c->seq = strtoull(row[0], NULL, 10);
		c->id = dup_field(row[1]);
		c->queue = dup_field(row[2]);
		c->command = dup_field(row[3]);
		c->argv_json = dup_field(row[4]);
		c->env_json = dup_field(row[5]);
		c->cwd = dup_field(row[6]);
		c->attempts = to_uint(row[7]);
		c->tempfails = to_uint(row[8]);
		c->max_attempts = to_uint(row[9]);
		c->time_limit = to_uint(row[10]);
	}
	*ret = rows;
	rows = NULL;
out:
	if (res)
		mysql_free_result(res);
	free(rows);
	free(seqs);
	free(tokens);
	sb_free(&sb);
	return count;
}

void store_claimed_clear(struct claimed *c)
{
	free(c->id);
	free(c->queue);
	free(c->command);
	free(c->argv_json);
	free(c->env_json);
	free(c->cwd);
	memset(c, 0, sizeof(*c));
}

void store_claimed_free(struct claimed *rows, int n)
{
	if (!rows)
		return;
	for (int i = 0; i < n; i++)
		store_claimed_clear(&rows[i]);
	free(rows);
}

int64_t store_heartbeat(struct db *db, const struct kyu_config *cfg, const uint64_t *seqs,
			const uint64_t *tokens, const int *pids, int n, enum db_fail *fail)
{
	struct strbuf sb = { 0 };
	int64_t r = -1;
	bool any_pid = false;

	sb_printf(&sb, "UPDATE kyu_jobs SET lease_until = NOW(6) + INTERVAL %d SECOND", cfg->lease);
	/* The job's pid rides along with the first heartbeat after its start
	 * rather than costing a statement of its own. */
	for (int i = 0; i < n; i++) {
		if (!pids[i])
			continue;
		sb_printf(&sb, "%s WHEN %" PRIu64 " THEN %d", any_pid ? "" : ", pid = CASE seq", seqs[i],
			  pids[i]);
		any_pid = true;
	}
	if (any_pid)
		sb_adds(&sb, " ELSE pid END");
	sb_adds(&sb, " WHERE seq IN (");
	add_id_list(&sb, seqs, n);
	sb_adds(&sb, ")");
	add_owner_match(&sb, seqs, tokens, n);
	sb_adds(&sb, " AND status = 'running'");
	if ((*fail = db_execs(db, &sb)) == DB_OK)
		r = (int64_t)db_affected(db);
	sb_free(&sb);
	return r;
}

int store_inspect(struct db *db, const uint64_t *seqs, int n,
		  void (*cb)(void *arg, uint64_t seq, uint64_t owner, const char *status), void *arg,
		  enum db_fail *fail)
{
	struct strbuf sb = { 0 };
	MYSQL_RES *res;
	MYSQL_ROW row;
	int r = -1;

	sb_adds(&sb, "SELECT seq, COALESCE(owner, 0), status FROM kyu_jobs WHERE seq IN (");
	add_id_list(&sb, seqs, n);
	sb_adds(&sb, ")");
	if ((*fail = db_execs(db, &sb)) != DB_OK)
		goto out;
	res = mysql_store_result(db->my);
	if (!res) {
		*fail = DB_LOST;
		db_close(db);
		goto out;
	}
	while ((row = mysql_fetch_row(res)))
		cb(arg, strtoull(row[0], NULL, 10), strtoull(row[1], NULL, 10), row[2]);
	mysql_free_result(res);
	r = 0;
out:
	sb_free(&sb);
	return r;
}

/* Backoff for the next attempt, in SQL so that it uses the database clock:
 * base * 2^(attempts-1), capped, with "equal jitter" (half fixed, half
 * random) so that jobs failing together do not retry together. */
static void add_backoff(struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_printf(sb,
		  "NOW(6) + INTERVAL CAST(LEAST(%d, %d * POW(2, LEAST(attempts, 40) - 1)) "
		  "* (0.5 + RAND() * 0.5) * 1000000 AS UNSIGNED) MICROSECOND",
		  cfg->backoff_cap, cfg->backoff_base);
}

static enum db_fail finish_one(struct db *db, const struct kyu_config *cfg, const struct finish *f,
			       struct strbuf *sb, int *written, int *rejected)
{
	enum db_fail r;

	sb_reset(sb);
	sb_adds(sb, "UPDATE kyu_jobs SET lease_until = NULL, ");
	if (f->pid > 0)
		sb_printf(sb, "pid = %d, ", f->pid);
	if (f->outcome == OUT_RELEASE) {
		/* kyud interrupted the attempt itself: not the job's fault. */
		sb_adds(sb, "attempts = IF(attempts > 0, attempts - 1, 0), run_at = NOW(6), "
			    "started_at = NULL");
		/* A claimed job given back unstarted keeps its last error. */
		if (f->error) {
			sb_adds(sb, ", error = ");
			db_quote(db, sb, f->error, strlen(f->error));
		}
		sb_adds(sb, ", status = IF(status = 'cancelled', 'cancelled', 'waiting')");
	} else {
		if (f->exit_code >= 0)
			sb_printf(sb, "exit_code = %d, ", f->exit_code);
		else
			sb_adds(sb, "exit_code = NULL, ");
		if (f->signal > 0)
			sb_printf(sb, "`signal` = %d, ", f->signal);
		else
			sb_adds(sb, "`signal` = NULL, ");
		sb_adds(sb, "error = ");
		db_quote(db, sb, f->error, f->error ? strlen(f->error) : 0);
		sb_adds(sb, ", output = ");
		db_quote(db, sb, f->output_len ? f->output : NULL, f->output_len);
		sb_adds(sb, ", finished_at = NOW(6), "
			    "duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6, ");
		if (f->outcome == OUT_RETRY) {
			/* attempts keeps counting, so the backoff grows. */
			if (f->tempfail)
				sb_adds(sb, "tempfails = tempfails + 1, ");
			sb_adds(sb, "run_at = ");
			add_backoff(sb, cfg);
			sb_adds(sb, ", ");
		}
		/* Assigned last: MariaDB applies SET left to right, and the
		 * user's cancel must win over our result. */
		sb_printf(sb, "status = IF(status = 'cancelled', 'cancelled', '%s')",
			  f->outcome == OUT_SUCCEEDED ? "succeeded"
			  : f->outcome == OUT_RETRY   ? "waiting"
			  : f->outcome == OUT_FAILED  ? "failed"
						      : "cancelled");
	}
	sb_printf(sb,
		  " WHERE seq = %" PRIu64 " AND owner = %" PRIu64
		  " AND status IN ('running', 'cancelled')",
		  f->seq, f->token);
	if ((r = db_execs(db, sb)) != DB_OK)
		return r;
	if (db_affected(db) == 1)
		(*written)++;
	else
		(*rejected)++;
	return DB_OK;
}

int store_finish(struct db *db, const struct kyu_config *cfg, const struct finish *f, int n,
		 int *rejected, enum db_fail *fail)
{
	struct strbuf sb = { 0 };
	uint64_t *seqs = xcalloc((size_t)n, sizeof(*seqs)), *tokens = xcalloc((size_t)n, sizeof(*tokens));
	int written = 0, count = 0;

	*rejected = 0;
	*fail = DB_OK;
	count = add_bulk_success(&sb, f, n, seqs, tokens);
	if (count) {
		if ((*fail = db_execs(db, &sb)) != DB_OK)
			goto out;
		written += (int)db_affected(db);
		*rejected += count - (int)db_affected(db);
	}
	for (int i = 0; i < n; i++) {
		if (store_finish_plain(&f[i]))
			continue;
		if ((*fail = finish_one(db, cfg, &f[i], &sb, &written, rejected)) != DB_OK)
			goto out;
	}
out:
	free(seqs);
	free(tokens);
	sb_free(&sb);
	return *fail == DB_OK ? written : -1;
}

int64_t store_cleanup(struct db *db, const struct kyu_config *cfg, enum db_fail *fail)
{
	struct strbuf sb = { 0 };
	MYSQL_RES *res;
	MYSQL_ROW row;
	int64_t deleted = -1;
	bool locked;

	/* GET_LOCK with no wait: if another process is cleaning, skip. */
	sb_adds(&sb, "SELECT GET_LOCK(CONCAT('kyu_cleanup.', DATABASE()), 0)");
	if ((*fail = db_execs(db, &sb)) != DB_OK)
		goto out;
	res = mysql_store_result(db->my);
	if (!res) {
		*fail = DB_LOST;
		db_close(db);
		goto out;
	}
	row = mysql_fetch_row(res);
	locked = row && row[0] && strcmp(row[0], "1") == 0;
	mysql_free_result(res);
	if (!locked) {
		deleted = 0;
		goto out;
	}
	sb_reset(&sb);
	sb_printf(&sb,
		  "DELETE FROM kyu_jobs WHERE status IN ('succeeded', 'failed', 'cancelled') "
		  "AND updated_at < NOW(6) - INTERVAL %d SECOND LIMIT %d",
		  cfg->retention, cfg->cleanup_batch);
	*fail = db_execs(db, &sb);
	if (*fail == DB_OK)
		deleted = (int64_t)db_affected(db);
	if (db_connected(db)) {
		enum db_fail f2;
		sb_reset(&sb);
		sb_adds(&sb, "DO RELEASE_LOCK(CONCAT('kyu_cleanup.', DATABASE()))");
		f2 = db_execs(db, &sb);
		if (*fail == DB_OK)
			*fail = f2;
	}
out:
	sb_free(&sb);
	return *fail == DB_OK ? deleted : -1;
}
