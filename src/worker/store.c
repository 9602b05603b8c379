/* Every statement kyud sends to kyu_jobs, built as text, and the reading of
 * their replies. See store.h. */
#include "store.h"

#include <inttypes.h>
#include <stdlib.h>

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

void store_release_build(struct strbuf *sb, uint64_t token)
{
	/* As a give-back (OUT_RELEASE): due again now, the attempt not
	 * counted; a row cancelled meanwhile stays cancelled. */
	sb_printf(
		sb,
		"UPDATE kyu_jobs SET lease_until = NULL, attempts = IF(attempts > 0, attempts - 1, 0), "
		"run_at = NOW(6), started_at = NULL, status = IF(status = 'cancelled', 'cancelled', "
		"'waiting') WHERE owner = %" PRIu64 " AND status IN ('running', 'cancelled')",
		token);
}

void store_heartbeat_build(struct strbuf *sb, const struct kyu_config *cfg, const uint64_t *seqs,
			   const uint64_t *tokens, const int *pids, int n)
{
	bool any_pid = false;

	sb_printf(sb, "UPDATE kyu_jobs SET lease_until = NOW(6) + INTERVAL %d SECOND", cfg->lease);
	/* The job's pid rides along with the first heartbeat after its start
	 * rather than costing a statement of its own. */
	for (int i = 0; i < n; i++) {
		if (!pids[i])
			continue;
		sb_printf(sb, "%s WHEN %" PRIu64 " THEN %d", any_pid ? "" : ", pid = CASE seq",
			  seqs[i], pids[i]);
		any_pid = true;
	}
	if (any_pid)
		sb_adds(sb, " ELSE pid END");
	sb_adds(sb, " WHERE seq IN (");
	add_id_list(sb, seqs, n);
	sb_adds(sb, ")");
	add_owner_match(sb, seqs, tokens, n);
	/* The server's clock rides along (lease.c watches it for steps). */
	sb_adds(sb,
		" AND status = 'running'; SELECT seq, COALESCE(owner, 0), status, "
		"TIMESTAMPDIFF(MICROSECOND, '1970-01-01', NOW(6)) FROM kyu_jobs WHERE seq IN (");
	add_id_list(sb, seqs, n);
	sb_adds(sb, ")");
}

int64_t store_heartbeat_read(const struct db_reply *r,
			     void (*cb)(void *arg, uint64_t seq, uint64_t owner,
					const char *status),
			     void *arg)
{
	const struct db_result *sel;

	if (r->fail != DB_OK || r->n < 2)
		return -1;
	sel = &r->r[1];
	for (size_t i = 0; i < sel->n_rows; i++)
		cb(arg, strtoull(db_cell(sel, i, 0), NULL, 10),
		   strtoull(db_cell(sel, i, 1), NULL, 10), db_cell(sel, i, 2));
	return (int64_t)r->r[0].affected;
}

int64_t store_heartbeat_now(const struct db_reply *r)
{
	const struct db_result *sel;

	if (r->fail != DB_OK || r->n < 2)
		return 0;
	sel = &r->r[1];
	if (sel->n_rows == 0 || sel->n_cols < 4 || !db_cell(sel, 0, 3))
		return 0;
	return strtoll(db_cell(sel, 0, 3), NULL, 10);
}

void store_live_build(struct strbuf *sb, const struct live_row *rows, int n)
{
	bool text = false, status = false;

	for (int i = 0; i < n; i++) {
		text |= rows[i].text != NULL;
		status |= rows[i].status;
	}
	sb_adds(sb, "UPDATE kyu_jobs SET ");
	if (text) {
		sb_adds(sb, "output = CASE seq");
		for (int i = 0; i < n; i++) {
			if (!rows[i].text)
				continue;
			sb_printf(sb, " WHEN %" PRIu64 " THEN ", rows[i].seq);
			db_quote(sb, rows[i].text, rows[i].len);
		}
		sb_adds(sb, " ELSE output END");
	}
	if (status) {
		sb_printf(sb, "%sprogress = CASE seq", text ? ", " : "");
		for (int i = 0; i < n; i++)
			if (rows[i].status)
				sb_printf(sb, " WHEN %" PRIu64 " THEN %d", rows[i].seq,
					  rows[i].progress);
		sb_adds(sb, " ELSE progress END, progress_note = CASE seq");
		for (int i = 0; i < n; i++) {
			if (!rows[i].status)
				continue;
			sb_printf(sb, " WHEN %" PRIu64 " THEN ", rows[i].seq);
			db_quotes(sb, rows[i].note);
		}
		sb_adds(sb, " ELSE progress_note END");
	}
	sb_adds(sb, " WHERE seq IN (");
	for (int i = 0; i < n; i++)
		sb_printf(sb, "%s%" PRIu64, i ? "," : "", rows[i].seq);
	sb_adds(sb, ") AND owner = CASE seq");
	for (int i = 0; i < n; i++)
		sb_printf(sb, " WHEN %" PRIu64 " THEN %" PRIu64, rows[i].seq, rows[i].token);
	/* Not a cancelled row: its process is being ended, and the result
	 * brings the whole output. */
	sb_adds(sb, " END AND status = 'running'");
}

size_t store_live_room(size_t len)
{
	/* Its seq three times and its token, and the words around them;
	 * its progress and note (at most 255 bytes, escaped). */
	return 2 * len + 128 + 64 + (size_t)2 * 255;
}

int store_retention_failed(const struct kyu_config *cfg)
{
	/* Never shorter than retention: a failed job's id is held at least
	 * as long as a succeeded one's (kyu_jobs(7), "Retention and
	 * at-most-once submission"). */
	return cfg->retention_failed > cfg->retention ? cfg->retention_failed : cfg->retention;
}

void store_cleanup_build_lock(struct strbuf *sb, const struct kyu_config *cfg, bool lock)
{
	/* GET_LOCK with no wait: if another session is cleaning, skip. The
	 * variable is a constant for the DELETE, so without the lock it
	 * reads no rows. The lock only saves work: both DELETEs are
	 * idempotent (a row another session deleted first is simply not
	 * found), so two cleaners at once (GET_LOCK is node-local on Galera)
	 * or one without the lock (a server that refuses GET_LOCK) do no
	 * harm. Without it the statements keep their places, so the reply
	 * reads the same. */
	if (lock)
		sb_adds(sb, "SET @kyu_cleanup = GET_LOCK(CONCAT('kyu_cleanup.', DATABASE()), 0); ");
	else
		sb_adds(sb, "SET @kyu_cleanup = 1; ");
	/* Failures are kept longer than successes, for whoever looks at
	 * them days later: two ranges of kyu_jobs_finished (status,
	 * updated_at), each with its own cutoff. */
	sb_printf(
		sb,
		"DELETE FROM kyu_jobs WHERE @kyu_cleanup = 1 "
		"AND (status = 'succeeded' AND updated_at < NOW(6) - INTERVAL %d SECOND "
		"OR status IN ('failed', 'cancelled') AND updated_at < NOW(6) - INTERVAL %d SECOND) "
		/* Never a row a dependent that has not ended may still read
		   * (its result, its output): it goes after the last of them.
		   * Whatever has_downstream says: a dependent inserted just now
		   * has its edge before kyu_settle marks the upstream. One dive
		   * into kyu_after's primary key per row. */
		"AND NOT EXISTS (SELECT 1 FROM kyu_after AS e "
		"JOIN kyu_jobs AS d ON d.seq = e.down_seq WHERE e.up_seq = kyu_jobs.seq "
		"AND d.status IN ('blocked', 'waiting', 'running')) LIMIT %d; "
		/* Start records older than their queue's rate_period (or of
		   * a queue no longer rated) count for nothing any more. */
		"DELETE s FROM kyu_queue_starts AS s LEFT JOIN kyu_queues AS q ON q.name = s.queue "
		"WHERE @kyu_cleanup = 1 AND (q.rate_period IS NULL OR "
		"s.at < NOW(6) - INTERVAL q.rate_period SECOND); ",
		cfg->retention, store_retention_failed(cfg), cfg->cleanup_batch);
	sb_adds(sb,
		lock ? "DO IF(@kyu_cleanup = 1, RELEASE_LOCK(CONCAT('kyu_cleanup.', DATABASE())), 0)"
		     : "DO 0");
}

void store_cleanup_build(struct strbuf *sb, const struct kyu_config *cfg)
{
	store_cleanup_build_lock(sb, cfg, true);
}

bool store_cleanup_lock_refused(const struct db_reply *r)
{
	return r->fail == DB_ERROR && r->n == 1 && r->r[0].err_no != 0;
}

int64_t store_cleanup_read(const struct db_reply *r)
{
	if (r->fail != DB_OK || r->n < STORE_CLEANUP_STMTS)
		return -1;
	return (int64_t)r->r[1].affected;
}
