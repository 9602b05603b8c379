#include "store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void add_queue_filter(struct strbuf *sb, const struct kyu_config *cfg)
{
	if (cfg->n_queues == 0)
		return;
	sb_adds(sb, " AND queue IN (");
	for (int i = 0; i < cfg->n_queues; i++) {
		if (i)
			sb_adds(sb, ",");
		sql_quotes(sb, cfg->queues[i]);
	}
	sb_adds(sb, ")");
}

static char *dup_field(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* A text column with a NUL byte would be cut short by every C string
 * function on the way to exec: such a row is refused, not run shortened. */
static void check_nul(struct claimed *c, const struct db_result *r, size_t row, unsigned col,
		      const char *name)
{
	const char *v = db_cell(r, row, col);
	const char *z;
	char msg[128];

	if (c->bad || !v)
		return;
	z = memchr(v, 0, r->lens[row * r->n_cols + col]);
	if (!z)
		return;
	snprintf(msg, sizeof(msg), "%s contains a NUL byte (at byte %zu): refused", name, (size_t)(z - v));
	c->bad = xstrdup(msg);
}

/* Columns are INT UNSIGNED; a row may hold any value of that range. */
static unsigned to_uint(const char *s)
{
	unsigned long long v = s ? strtoull(s, NULL, 10) : 0;
	return v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

static void add_min_due(struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_adds(sb, "SELECT MIN(due) FROM kyu_jobs");
	if (cfg->n_queues) {
		sb_adds(sb, " WHERE 1");
		add_queue_filter(sb, cfg);
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

/* One UPDATE for the plain successes among f, whatever their claim: the
 * common case under load costs one statement per batch. Returns how many
 * it covers (0: nothing appended). */
static int add_bulk_success(struct strbuf *sb, const struct finish *f, int n)
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
		count++;
	}
	if (count == 0) {
		sb->len = start;
		if (sb->buf)
			sb->buf[start] = '\0';
		return 0;
	}
	sb_adds(sb, " ELSE pid END, status = IF(status = 'cancelled', 'cancelled', 'succeeded') "
		    "WHERE seq IN (");
	for (int i = 0, k = 0; i < n; i++)
		if (store_finish_plain(&f[i]))
			sb_printf(sb, "%s%" PRIu64, k++ ? "," : "", f[i].seq);
	sb_adds(sb, ") AND owner = CASE seq");
	for (int i = 0; i < n; i++)
		if (store_finish_plain(&f[i]))
			sb_printf(sb, " WHEN %" PRIu64 " THEN %" PRIu64, f[i].seq, f[i].token);
	sb_adds(sb, " END AND status IN ('running', 'cancelled')");
	return count;
}

void store_claim_build(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
		       const char *host, int n, const struct finish *fin, int n_fin)
{
	/* Results first: their rows leave the due index before the claim
	 * scans it. */
	if (n_fin > 0 && add_bulk_success(sb, fin, n_fin))
		sb_adds(sb, "; ");
	/* Mark: one statement takes up to n due rows for this claim's token.
	 * `due` is the server-maintained due time (run_at while waiting, the
	 * lease while running), so expired leases are reclaimed by the same
	 * statement. */
	sb_adds(sb, "UPDATE kyu_jobs ");
	if (cfg->claim != CLAIM_PLAIN) {
		sb_adds(sb, "JOIN (SELECT seq FROM kyu_jobs WHERE due <= NOW(6)");
		add_queue_filter(sb, cfg);
		sb_printf(sb, " ORDER BY due, priority LIMIT %d FOR UPDATE%s) AS c USING (seq) ", n,
			  cfg->claim == CLAIM_SKIP_LOCKED ? " SKIP LOCKED" : "");
	}
	sb_printf(sb,
		  "SET owner = %" PRIu64 ", lease_until = NOW(6) + INTERVAL %d SECOND, "
		  "attempts = LEAST(attempts, 4294967294) + 1, started_at = NOW(6), finished_at = NULL, duration = NULL, "
		  "pid = NULL, host = ",
		  token, cfg->lease);
	sql_quotes(sb, host);
	sb_adds(sb, ", status = 'running'");
	if (cfg->claim == CLAIM_PLAIN) {
		sb_adds(sb, " WHERE due <= NOW(6)");
		add_queue_filter(sb, cfg);
		sb_printf(sb, " ORDER BY due, priority LIMIT %d", n);
	}
	/* Select, in the same round trip: what this token marked, and the
	 * next due time (which tells the supervisor how long everyone may
	 * sleep when the batch comes back short). The one-row derived table
	 * makes the SELECT return that time even when nothing was marked. */
	sb_printf(sb,
		  "; SELECT j.seq, j.id, j.queue, j.command, j.argv, j.env, j.cwd, j.attempts, "
		  "j.tempfails, COALESCE(j.max_attempts, %d), COALESCE(j.time_limit, %d), d.next "
		  "FROM (SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), (",
		  cfg->max_attempts, cfg->time_limit);
	add_min_due(sb, cfg);
	sb_printf(sb,
		  ")) AS next) AS d LEFT JOIN kyu_jobs AS j ON j.owner = %" PRIu64
		  " AND j.status = 'running'",
		  token);
}

void store_claim_read(const struct db_reply *r, int n, int n_fin, uint64_t token, double claimed_at,
		      struct claim_reply *out)
{
	const int fin_stmts = n_fin > 0 ? 1 : 0;
	const struct db_result *sel;
	int marked;

	memset(out, 0, sizeof(*out));
	out->next_due_us = INT64_MIN;
	if (fin_stmts && r->n >= 1 && r->r[0].err_no == 0) {
		out->fin_done = true;
		out->fin_rejected = n_fin - (int)r->r[0].affected;
	}
	out->fail = r->fail;
	if (r->fail != DB_OK || r->n < fin_stmts + 2) {
		if (out->fail == DB_OK)
			out->fail = DB_ERROR;
		out->got = -1;
		return;
	}
	marked = (int)r->r[fin_stmts].affected;
	sel = &r->r[fin_stmts + 1];
	out->rows = xcalloc((size_t)(marked > 0 ? marked : 1), sizeof(*out->rows));
	for (size_t i = 0; i < sel->n_rows; i++) {
		struct claimed *c;
		if (marked < n && i == 0) {
			const char *next = db_cell(sel, i, 11);
			out->next_due_us = next ? strtoll(next, NULL, 10) : INT64_MAX;
		}
		if (!db_cell(sel, i, 0) || out->got >= marked)
			continue;
		c = &out->rows[out->got++];
		c->seq = strtoull(db_cell(sel, i, 0), NULL, 10);
		c->token = token;
		c->claimed_at = claimed_at;
		c->id = dup_field(db_cell(sel, i, 1));
		c->queue = dup_field(db_cell(sel, i, 2));
		c->command = dup_field(db_cell(sel, i, 3));
		c->argv_json = dup_field(db_cell(sel, i, 4));
		c->env_json = dup_field(db_cell(sel, i, 5));
		c->cwd = dup_field(db_cell(sel, i, 6));
		c->attempts = to_uint(db_cell(sel, i, 7));
		c->tempfails = to_uint(db_cell(sel, i, 8));
		c->max_attempts = to_uint(db_cell(sel, i, 9));
		c->time_limit = to_uint(db_cell(sel, i, 10));
		check_nul(c, sel, i, 1, "id");
		check_nul(c, sel, i, 2, "queue");
		check_nul(c, sel, i, 3, "command");
		check_nul(c, sel, i, 4, "argv");
		check_nul(c, sel, i, 5, "env");
		check_nul(c, sel, i, 6, "cwd");
	}
}

void store_claimed_clear(struct claimed *c)
{
	free(c->id);
	free(c->queue);
	free(c->command);
	free(c->argv_json);
	free(c->env_json);
	free(c->cwd);
	free(c->bad);
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
		sb_printf(sb, "%s WHEN %" PRIu64 " THEN %d", any_pid ? "" : ", pid = CASE seq", seqs[i],
			  pids[i]);
		any_pid = true;
	}
	if (any_pid)
		sb_adds(sb, " ELSE pid END");
	sb_adds(sb, " WHERE seq IN (");
	add_id_list(sb, seqs, n);
	sb_adds(sb, ")");
	add_owner_match(sb, seqs, tokens, n);
	sb_adds(sb, " AND status = 'running'; SELECT seq, COALESCE(owner, 0), status FROM kyu_jobs "
		    "WHERE seq IN (");
	add_id_list(sb, seqs, n);
	sb_adds(sb, ")");
}

int64_t store_heartbeat_read(const struct db_reply *r,
			     void (*cb)(void *arg, uint64_t seq, uint64_t owner, const char *status),
			     void *arg)
{
	const struct db_result *sel;

	if (r->fail != DB_OK || r->n < 2)
		return -1;
	sel = &r->r[1];
	for (size_t i = 0; i < sel->n_rows; i++)
		cb(arg, strtoull(db_cell(sel, i, 0), NULL, 10), strtoull(db_cell(sel, i, 1), NULL, 10),
		   db_cell(sel, i, 2));
	return (int64_t)r->r[0].affected;
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

#define CUT_MARK "\n[kyu: output cut to fit the server's max_allowed_packet]\n"

/* Room one finish_one statement needs besides its output (escaping may
 * double every byte of the texts). */
static size_t finish_overhead(const struct finish *f)
{
	return 1024 + 2 * (f->error ? strlen(f->error) : 0);
}

static void finish_one(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f,
		       size_t max_len)
{
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
			sql_quotes(sb, f->error);
		}
		sb_adds(sb, ", status = IF(status = 'cancelled', 'cancelled', 'waiting')");
	} else {
		size_t out_len = f->output_len;
		bool cut = false;

		if (f->exit_code >= 0)
			sb_printf(sb, "exit_code = %d, ", f->exit_code);
		else
			sb_adds(sb, "exit_code = NULL, ");
		if (f->signal > 0)
			sb_printf(sb, "`signal` = %d, ", f->signal);
		else
			sb_adds(sb, "`signal` = NULL, ");
		sb_adds(sb, "error = ");
		sql_quotes(sb, f->error);
		sb_adds(sb, ", output = ");
		/* The server refuses (and drops the connection on) a statement
		 * larger than its max_allowed_packet; a job's output is cut to
		 * fit instead, whatever output_limit says. */
		if (out_len && 2 * out_len + finish_overhead(f) > max_len) {
			size_t room = max_len > finish_overhead(f) + 2 * sizeof(CUT_MARK)
					      ? (max_len - finish_overhead(f)) / 2 - sizeof(CUT_MARK)
					      : 0;
			out_len = room < out_len ? room : out_len;
			cut = true;
		}
		if (cut) {
			sb_adds(sb, "CONCAT(");
			sql_quote(sb, f->output, out_len);
			sb_adds(sb, ", ");
			sql_quotes(sb, CUT_MARK);
			sb_adds(sb, ")");
		} else {
			sql_quote(sb, out_len ? f->output : NULL, out_len);
		}
		sb_adds(sb, ", finished_at = NOW(6), "
			    "duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6, ");
		if (f->outcome == OUT_RETRY) {
			/* attempts keeps counting, so the backoff grows. */
			if (f->tempfail)
				sb_adds(sb, "tempfails = LEAST(tempfails, 4294967294) + 1, ");
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
}

int store_finish_build(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f, int n,
		       size_t max_len, int *n_stmts)
{
	int count = 0, plain;

	*n_stmts = 0;
	/* Plain successes are all in front: their one UPDATE covers them. */
	while (count < n && store_finish_plain(&f[count]))
		count++;
	if (count) {
		add_bulk_success(sb, f, count);
		(*n_stmts)++;
	}
	plain = count;
	for (; count < n; count++) {
		size_t before = sb->len;
		if (store_finish_plain(&f[count]))
			break;
		if (*n_stmts)
			sb_adds(sb, "; ");
		/* Output is cut only when it would not fit alone; a result that
		 * does not fit behind the others goes first in the next round
		 * trip instead. */
		finish_one(sb, cfg, &f[count], max_len);
		if (sb->len > max_len && *n_stmts) {
			sb->len = before;
			sb->buf[before] = '\0';
			if (count > plain)
				break;
			/* Right behind the plain successes, which may be there
			 * every time: cut to the room they leave, so that it is
			 * recorded all the same. */
			sb_adds(sb, "; ");
			finish_one(sb, cfg, &f[count], max_len > before + 2 ? max_len - before - 2 : 0);
			if (sb->len > max_len) {
				sb->len = before;
				sb->buf[before] = '\0';
				break;
			}
		}
		(*n_stmts)++;
	}
	return count;
}

void store_finish_read(const struct db_reply *r, const struct finish *f, int count, int *done,
		       int *rejected)
{
	int plain = 0, stmt = 0;

	*done = 0;
	*rejected = 0;
	while (plain < count && store_finish_plain(&f[plain]))
		plain++;
	if (plain) {
		if (r->n < 1 || r->r[0].err_no)
			return;
		*done = plain;
		*rejected = plain - (int)r->r[0].affected;
		stmt = 1;
	}
	for (int i = plain; i < count; i++, stmt++) {
		if (stmt >= r->n || r->r[stmt].err_no)
			return;
		(*done)++;
		if (r->r[stmt].affected != 1)
			(*rejected)++;
	}
}

void store_cleanup_build(struct strbuf *sb, const struct kyu_config *cfg)
{
	/* GET_LOCK with no wait: if another session is cleaning, skip. The
	 * variable is a constant for the DELETE, so without the lock it
	 * reads no rows. */
	sb_printf(sb,
		  "SET @kyu_cleanup = GET_LOCK(CONCAT('kyu_cleanup.', DATABASE()), 0); "
		  "DELETE FROM kyu_jobs WHERE @kyu_cleanup = 1 "
		  "AND status IN ('succeeded', 'failed', 'cancelled') "
		  "AND updated_at < NOW(6) - INTERVAL %d SECOND LIMIT %d; "
		  "DO IF(@kyu_cleanup = 1, RELEASE_LOCK(CONCAT('kyu_cleanup.', DATABASE())), 0)",
		  cfg->retention, cfg->cleanup_batch);
}

int64_t store_cleanup_read(const struct db_reply *r)
{
	if (r->fail != DB_OK || r->n < 3)
		return -1;
	return (int64_t)r->r[1].affected;
}
