/* Recording results: the UPDATEs that write attempts' ends into their rows
 * (one for all plain successes, one per other result). See store_finish.h. */
#include "store_finish.h"

#include <inttypes.h>
#include <string.h>

#include "common/capture.h"
#include "common/utf8.h"

bool store_finish_plain(const struct finish *f)
{
	return f->outcome == OUT_SUCCEEDED && f->output_len == 0 && !f->error && !f->status;
}

#define BAD_JSON "kyu: result on KYU_STATUS_FD is not valid JSON: "
#define BAD_JSON_QUOTE 100 /* bytes of it quoted in the error */

/* "progress = …, progress_note = …, result = …, " for a job that used its
 * status channel (kyu_jobs(7), "The status channel"). The result's JSON is
 * the server's to check: assigned, then kept only if JSON_VALID (MariaDB
 * applies SET left to right), so its text is sent once. */
static void add_status(struct strbuf *sb, const struct finish *f)
{
	if (f->progress >= 0)
		sb_printf(sb, "progress = %d, progress_note = ", f->progress);
	else
		sb_adds(sb, "progress = NULL, progress_note = ");
	db_quotes(sb, f->note);
	sb_adds(sb, ", ");
	if (!f->result)
		return;
	sb_adds(sb, "result = ");
	db_quote(sb, f->result, f->result_len);
	sb_adds(sb, ", result = IF(JSON_VALID(result), result, NULL), ");
}

/* The error, and when the result was refused, why after it: "error = …". */
static void add_error(struct strbuf *sb, const struct finish *f)
{
	size_t q;

	sb_adds(sb, "error = ");
	if (!f->status || !f->result) {
		db_quotes(sb, f->error);
		return;
	}
	q = utf8_cut(f->result, f->result_len, BAD_JSON_QUOTE);
	sb_adds(sb, "IF(result IS NULL, CONCAT_WS('; ', ");
	db_quotes(sb, f->error);
	sb_adds(sb, ", CONCAT(");
	db_quotes(sb, BAD_JSON);
	sb_adds(sb, ", ");
	db_quote(sb, f->result, q);
	sb_printf(sb, "%s)), ", q < f->result_len ? ", '...'" : "");
	db_quotes(sb, f->error);
	sb_adds(sb, ")");
}

enum cost_col { COST_USER, COST_SYS, COST_RSS, N_COST_COLS };
static const char *const cost_cols[N_COST_COLS] = {
	[COST_USER] = "cpu_user",
	[COST_SYS] = "cpu_sys",
	[COST_RSS] = "max_rss",
};

/* Seconds, written as the exact decimal of the microseconds the kernel
 * counted rather than rounded through a double. */
static void add_seconds(struct strbuf *sb, uint64_t us)
{
	char frac[8];
	uint64_t f = us % 1000000;

	sb_addu64(sb, us / 1000000);
	frac[0] = '.';
	for (int i = 6; i >= 1; i--, f /= 10)
		frac[i] = (char)('0' + f % 10);
	sb_add(sb, frac, 7);
}

static void add_cost_value(struct strbuf *sb, const struct attempt_cost *c, enum cost_col col)
{
	if (!c->known)
		sb_adds(sb, "NULL");
	else if (col == COST_USER)
		add_seconds(sb, c->user_us);
	else if (col == COST_SYS)
		add_seconds(sb, c->sys_us);
	else
		sb_addu64(sb, c->max_rss);
}

/* " WHEN seq THEN " of a CASE seq. */
static void add_when(struct strbuf *sb, uint64_t seq)
{
	sb_adds(sb, " WHEN ");
	sb_addu64(sb, seq);
	sb_adds(sb, " THEN ");
}

/* ", cpu_user = CASE seq WHEN … END, …" for the plain successes among f:
 * the bulk UPDATE names every one of them in its WHERE, so no ELSE. */
static void add_bulk_cost(struct strbuf *sb, const struct finish *f, int n)
{
	for (enum cost_col col = 0; col < N_COST_COLS; col++) {
		sb_adds(sb, ", ");
		sb_adds(sb, cost_cols[col]);
		sb_adds(sb, " = CASE seq");
		for (int i = 0; i < n; i++) {
			if (!store_finish_plain(&f[i]))
				continue;
			add_when(sb, f[i].seq);
			add_cost_value(sb, &f[i].cost, col);
		}
		sb_adds(sb, " END");
	}
}

int store_finish_build_plain(struct strbuf *sb, const struct finish *f, int n)
{
	size_t start = sb->len;
	int count = 0;

	sb_adds(sb,
		"UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0, `signal` = NULL, "
		"error = NULL, output = NULL, finished_at = NOW(6), "
		"duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6, pid = CASE seq");
	for (int i = 0; i < n; i++) {
		if (!store_finish_plain(&f[i]))
			continue;
		add_when(sb, f[i].seq);
		sb_addi64(sb, f[i].pid);
		count++;
	}
	if (count == 0) {
		sb->len = start;
		if (sb->buf)
			sb->buf[start] = '\0';
		return 0;
	}
	sb_adds(sb, " ELSE pid END");
	add_bulk_cost(sb, f, n);
	sb_adds(sb, ", status = IF(status = 'cancelled', 'cancelled', 'succeeded') WHERE seq IN (");
	for (int i = 0, k = 0; i < n; i++) {
		if (!store_finish_plain(&f[i]))
			continue;
		if (k++)
			sb_add(sb, ",", 1);
		sb_addu64(sb, f[i].seq);
	}
	sb_adds(sb, ") AND owner = CASE seq");
	for (int i = 0; i < n; i++) {
		if (!store_finish_plain(&f[i]))
			continue;
		add_when(sb, f[i].seq);
		sb_addu64(sb, f[i].token);
	}
	sb_adds(sb, " END AND status IN ('running', 'cancelled')");
	return count;
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
	return (f->hook ? 2048 : 1024) + 2 * (f->error ? strlen(f->error) : 0) +
	       (f->status ? 2 * (f->note ? strlen(f->note) : 0) + 2 * f->result_len +
				    (size_t)2 * BAD_JSON_QUOTE + 256
			  : 0);
}

int store_finish_stmts(const struct finish *f)
{
	return f->hook ? 4 : 1;
}

/* The failure hook (kyu_jobs(7), "Failure hooks"): one job of the queue's
 * on_failure argv, made only if the UPDATE before it, in the same
 * transaction, recorded the failure under this claim (the row is 'failed'
 * and still this claim's: a cancel, or a row taken over by another claim,
 * makes none). Its id names the attempt and the claim, so that the same
 * result sent again (a reply lost) finds it there and makes no second
 * one, while the same job failing again after a `kyu retry` (attempts
 * counted from 0 again, under another claim) makes its own. A hook job
 * (its id begins with on_failure:) fires none. */
static void add_hook(struct strbuf *sb, const struct finish *f)
{
	sb_printf(sb,
		  "INSERT INTO kyu_jobs (id, queue, argv, env) "
		  "SELECT CONCAT('" STORE_HOOK_PREFIX "', j.attempts, ':', j.owner, ':', "
		  "IF(CHAR_LENGTH(j.id) <= 200, j.id, CONCAT('sha256:', SHA2(j.id, 256)))), "
		  "IFNULL(q.on_failure_queue, j.queue), q.on_failure, "
		  "JSON_OBJECT('KYU_FAILED_JOB_ID', j.id, 'KYU_FAILED_QUEUE', j.queue, "
		  "'KYU_FAILED_EXIT_CODE', IFNULL(CAST(j.exit_code AS CHAR), ''), "
		  "'KYU_FAILED_ERROR', IFNULL(j.error, '')) "
		  "FROM kyu_jobs AS j JOIN kyu_queues AS q ON q.name = j.queue "
		  "WHERE j.seq = %" PRIu64 " AND j.owner = %" PRIu64 " AND j.status = 'failed' "
		  "AND q.on_failure IS NOT NULL AND j.id NOT LIKE '" STORE_HOOK_PREFIX "%%' "
		  "ON DUPLICATE KEY UPDATE kyu_jobs.id = kyu_jobs.id",
		  f->seq, f->token);
}

static void finish_one(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f,
		       size_t max_len)
{
	sb_adds(sb, "UPDATE kyu_jobs SET lease_until = NULL, ");
	if (f->pid > 0)
		sb_printf(sb, "pid = %d, ", f->pid);
	if (f->outcome == OUT_RELEASE) {
		/* kyud interrupted the attempt itself: not the job's fault. It
		 * does not count, so it leaves no start and no cost (the
		 * claim cleared them) either. */
		/* Nor its live tail (kyud.8, "Live output"): the next attempt
		 * of the same number would pass it for its own. Before
		 * attempts changes: MariaDB applies SET left to right. */
		sb_adds(sb,
			"output = IF(output LIKE CONCAT('" CAPTURE_LIVE_PREFIX
			"', attempts, ':%'), "
			"NULL, output), attempts = IF(attempts > 0, attempts - 1, 0), run_at = NOW(6), "
			"started_at = NULL");
		/* A claimed job given back unstarted keeps its last error. */
		if (f->error) {
			sb_adds(sb, ", error = ");
			db_quotes(sb, f->error);
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
		if (f->status)
			add_status(sb, f);
		add_error(sb, f);
		sb_adds(sb, ", output = ");
		/* The server refuses (and drops the connection on) a statement
		 * larger than its max_allowed_packet; a job's output is cut to
		 * fit instead, whatever output_limit says. */
		if (out_len && 2 * out_len + finish_overhead(f) > max_len) {
			size_t room =
				max_len > finish_overhead(f) + 2 * sizeof(CUT_MARK)
					? (max_len - finish_overhead(f)) / 2 - sizeof(CUT_MARK)
					: 0;
			out_len = room < out_len ? room : out_len;
			cut = true;
		}
		if (cut) {
			sb_adds(sb, "CONCAT(");
			db_quote(sb, f->output, out_len);
			sb_adds(sb, ", ");
			db_quotes(sb, CUT_MARK);
			sb_adds(sb, ")");
		} else {
			db_quote(sb, out_len ? f->output : NULL, out_len);
		}
		sb_adds(sb, ", finished_at = NOW(6), "
			    "duration = TIMESTAMPDIFF(MICROSECOND, started_at, NOW(6)) / 1e6, ");
		for (enum cost_col col = 0; col < N_COST_COLS; col++) {
			sb_printf(sb, "%s = ", cost_cols[col]);
			add_cost_value(sb, &f->cost, col);
			sb_adds(sb, ", ");
		}
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

/* One result's statements: its UPDATE, and for a failure for good the
 * hook's INSERT with it, in one transaction, so that no crash of kyud or
 * of the server between the two leaves the failure without its hook.
 * (A transaction a failed statement leaves open is rolled back before
 * anything else is sent: store_finish_txn_open.) */
static void finish_group(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f,
			 size_t max_len)
{
	if (f->hook)
		sb_adds(sb, "START TRANSACTION; ");
	finish_one(sb, cfg, f, max_len);
	if (f->hook) {
		sb_adds(sb, "; ");
		add_hook(sb, f);
		sb_adds(sb, "; COMMIT");
	}
}

int store_finish_build(struct strbuf *sb, const struct kyu_config *cfg, const struct finish *f,
		       int n, size_t max_len, int *n_stmts)
{
	int count = 0, plain;

	*n_stmts = 0;
	/* Plain successes are all in front: their one UPDATE covers them. */
	while (count < n && store_finish_plain(&f[count]))
		count++;
	if (count) {
		store_finish_build_plain(sb, f, count);
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
		finish_group(sb, cfg, &f[count], max_len);
		if (sb->len > max_len && *n_stmts) {
			sb->len = before;
			sb->buf[before] = '\0';
			if (count > plain)
				break;
			/* Right behind the plain successes, which may be there
			 * every time: cut to the room they leave, so that it is
			 * recorded all the same. */
			sb_adds(sb, "; ");
			finish_group(sb, cfg, &f[count],
				     max_len > before + 2 ? max_len - before - 2 : 0);
			if (sb->len > max_len) {
				sb->len = before;
				sb->buf[before] = '\0';
				break;
			}
		}
		*n_stmts += store_finish_stmts(&f[count]);
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
	for (int i = plain; i < count; i++) {
		int k = store_finish_stmts(&f[i]);
		/* A hook's group: its UPDATE is the second of four, and the
		 * result is recorded only once the COMMIT is done. */
		int upd = stmt + (k > 1);
		for (int s = stmt; s < stmt + k; s++)
			if (s >= r->n || r->r[s].err_no)
				return;
		(*done)++;
		if (r->r[upd].affected != 1)
			(*rejected)++;
		stmt += k;
	}
}

bool store_finish_txn_open(const struct db_reply *r, const struct finish *f, int count)
{
	int stmt = 0, i = 0;

	if (r->fail == DB_OK || r->fail == DB_LOST)
		return false;
	while (i < count && store_finish_plain(&f[i]))
		i++;
	if (i)
		stmt = 1;
	for (; i < count && stmt < r->n; i++) {
		int k = store_finish_stmts(&f[i]);
		/* The reply ends inside a group whose START TRANSACTION ran. */
		if (k > 1 && r->n < stmt + k && r->r[stmt].err_no == 0)
			return true;
		stmt += k;
	}
	return false;
}
