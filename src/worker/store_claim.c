/* The claim, kyud's one round trip per batch of jobs. See store_claim.h. */
#include "store_claim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/domain.h"
#include "store_finish.h"

static void add_queue_filter(struct strbuf *sb, const struct kyu_config *cfg)
{
	if (cfg->n_queues == 0)
		return;
	sb_adds(sb, " AND queue IN (");
	for (int i = 0; i < cfg->n_queues; i++) {
		if (i)
			sb_adds(sb, ",");
		db_quotes(sb, cfg->queues[i]);
	}
	sb_adds(sb, ")");
}

static void add_min_due(struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_adds(sb, "SELECT MIN(due) FROM kyu_jobs");
	if (cfg->n_queues) {
		sb_adds(sb, " WHERE 1");
		add_queue_filter(sb, cfg);
	}
}

/* started_at is SYSDATE(6), the moment the row is taken, not NOW(6), the
 * statement's start: a claim that waited for a row lock takes rows that
 * became due (a dependent freed by an upstream's end) while it waited, and
 * started_at must not come before that end (kyu_jobs(7), "Workflows"). */
/* What a claim sets on every row it takes, whichever statement takes it.
 * The status channel's columns start empty with each attempt (kyu_jobs(7),
 * "The status channel"): a retry's progress is its own.
 * slot: the key_slot assignment of a keyed claim (key_slot_set), else
 * NULL: key_slot is left as it is. */
static void add_claim_set(struct strbuf *sb, const struct kyu_config *cfg, const char *token_sql,
			  const char *host, const struct strbuf *slot)
{
	sb_printf(
		sb,
		"SET owner = %s, lease_until = NOW(6) + INTERVAL %d SECOND, "
		"attempts = LEAST(attempts, 4294967294) + 1, started_at = SYSDATE(6), finished_at = NULL, duration = NULL, "
		"cpu_user = NULL, cpu_sys = NULL, max_rss = NULL, pid = NULL, progress = NULL, "
		"progress_note = NULL, result = NULL, host = ",
		token_sql, cfg->lease);
	db_quotes(sb, host);
	if (slot)
		sb_add(sb, slot->buf, slot->len);
	sb_adds(sb, ", status = 'running'");
}

/* A row with a concurrency key is claimable only while no running row has
 * that key. The unique index on running_key makes this exact (UPDATE
 * IGNORE skips the row that would be the second); this filter keeps the
 * claim from walking into those conflicts. An expired running row keeps
 * its own key and is reclaimable. */
#define KEY_FREE                                                                                   \
	" AND (concurrency_key IS NULL OR status = 'running' OR concurrency_key NOT IN "           \
	"(SELECT running_key FROM kyu_jobs WHERE running_key IS NOT NULL))"
/* The keyed claim (a queue whose key_max_running N > 1): a row with a key
 * runs in one of the key's slots 0..N-1, running_key naming the slot, so
 * the unique index still refuses a second row in one slot. A row is
 * claimable while fewer than N rows of its key run (any queue's, any
 * slot), and takes the smallest free slot, which is below N then (it is
 * at most that count). Both are read from the rows as they were before the
 * statement: two rows of one key in one statement would get the same slot,
 * and UPDATE IGNORE skips the second (the next claim gives it the next
 * slot, queues_claimed). A slot taken meanwhile by another claim: skipped
 * likewise, never run twice. The running rows are read on the
 * running_key index (running_key IS NOT NULL, a range): a subquery that
 * names the outer row's key in a range bound reads the whole table. Queues
 * whose key_max_running is 1 keep the plain forms and slot 0: their
 * statements are those of a schema without slots. */

/* The keyed form's filter; n_sql: the queue's key_max_running. The keys
 * that are full, as KEY_FREE's busy keys: materialized once per statement
 * (one pass over the running rows), however many rows the claim looks at. */
static void add_key_room(struct strbuf *sb, const char *n_sql)
{
	sb_printf(
		sb,
		" AND (kyu_jobs.concurrency_key IS NULL OR kyu_jobs.status = 'running' OR "
		"kyu_jobs.concurrency_key NOT IN (SELECT r.concurrency_key FROM kyu_jobs AS r WHERE "
		"r.running_key IS NOT NULL GROUP BY r.concurrency_key HAVING COUNT(*) >= %s))",
		n_sql);
}

/* The keyed form's slot: a running row (a reclaimed lease) keeps its own;
 * a waiting one takes slot 0 when free, else the first free slot above a
 * taken one, below N; none: slot 0, taken, which makes UPDATE IGNORE skip
 * the row. Before status in the SET: the test reads the status the row
 * had. Evaluated for the rows the statement takes only. */
static void add_key_slot(struct strbuf *sb, const char *n_sql)
{
	sb_printf(
		sb,
		", key_slot = IF(kyu_jobs.concurrency_key IS NULL OR kyu_jobs.status = 'running', "
		"kyu_jobs.key_slot, IF(NOT EXISTS (SELECT 1 FROM kyu_jobs AS x WHERE x.running_key = "
		"kyu_jobs.concurrency_key), 0, IFNULL((SELECT MIN(r.key_slot + 1) FROM kyu_jobs AS r "
		"WHERE r.running_key IS NOT NULL AND r.concurrency_key = kyu_jobs.concurrency_key AND "
		"r.key_slot + 1 < %s AND NOT EXISTS (SELECT 1 "
		"FROM kyu_jobs AS x WHERE x.running_key = CONCAT(kyu_jobs.concurrency_key, 0x1f, "
		"r.key_slot + 1))), 0)))",
		n_sql);
}

/* The latest lease a claim takes over (claim_plan.lease_cut_us), as a
 * DATETIME literal of the server's NOW(6) scale. */
static void add_cut(struct strbuf *sb, int64_t us)
{
	time_t t = (time_t)(us > 0 ? us / 1000000 : 0);
	struct tm tm;
	char buf[32];

	gmtime_r(&t, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	sb_printf(sb, "'%s.%06d'", buf, (int)(us > 0 ? us % 1000000 : 0));
}

#define RESTRICTED_QUEUES                                                                          \
	"SELECT name FROM kyu_queues WHERE paused <> 0 OR max_running IS NOT NULL OR "             \
	"rate_limit IS NOT NULL"

/* The mark of an unrestricted queue (name) or of every queue without
 * restrictions (name NULL, the catch-all), n rows by due time. */
static void add_mark(struct strbuf *sb, const struct kyu_config *cfg, enum claim_shape shape,
		     uint64_t token, const char *host, const char *name, bool keyed, int n,
		     int64_t cut_us)
{
	char tok[24];
	struct strbuf where = { 0 }, kmax = { 0 }, slot = { 0 };
	const char *hint;

	snprintf(tok, sizeof(tok), "%" PRIu64, token);
	sb_adds(&where, " WHERE due <= NOW(6)");
	if (name) {
		sb_adds(&where, " AND queue = ");
		db_quotes(&where, name);
		/* A queue that gained restrictions since the directory was read
		 * is left to the restricted form. */
		sb_adds(&where, " AND NOT EXISTS (SELECT 1 FROM kyu_queues WHERE name = ");
		db_quotes(&where, name);
		sb_adds(&where,
			" AND (paused <> 0 OR max_running IS NOT NULL OR rate_limit IS NOT NULL))");
	} else {
		add_queue_filter(&where, cfg);
		sb_adds(&where, " AND queue NOT IN (" RESTRICTED_QUEUES ")");
	}
	if (keyed && name) {
		/* Read when the statement runs: a limit lowered since the
		 * directory was read holds at once. */
		sb_adds(&kmax, "IFNULL((SELECT key_max_running FROM kyu_queues WHERE name = ");
		db_quotes(&kmax, name);
		sb_adds(&kmax, "), 1)");
		add_key_room(&where, kmax.buf);
		add_key_slot(&slot, kmax.buf);
	} else {
		sb_adds(&where, KEY_FREE);
	}
	/* An expired lease only as the worker's own clock sees it (lease.h):
	 * a step of the server's clock leaves running rows alone. A filter on
	 * the rows the scan reads anyway; waiting rows pass it unchanged. */
	sb_adds(&where, " AND (status <> 'running' OR lease_until <= ");
	add_cut(&where, cut_us);
	sb_adds(&where, ")");
	/* One queue: its (queue, due, priority) range, in order, is exactly
	 * the rows to take. Without the hint the subquery of KEY_FREE (on this
	 * same table) makes MariaDB 10.11 read the index by queue alone, from
	 * its finished rows (due NULL sorts first) on: a claim then examined
	 * every finished row of the queue (3,039 rows for 39 with 3,000 kept;
	 * notes/DESIGN.md, issue 24). */
	hint = name ? " FORCE INDEX (kyu_jobs_queue_due)" : "";
	sb_adds(sb, "UPDATE IGNORE ");
	if (shape != CLAIM_PLAIN) {
		/* The picked rows first (STRAIGHT_JOIN): with kyu_jobs first, an
		 * optimizer that thinks it small scans it with locking reads and
		 * waits for the very rows SKIP LOCKED means to go round. */
		sb_adds(sb, "(SELECT seq FROM kyu_jobs");
		sb_adds(sb, hint);
		sb_add(sb, where.buf, where.len);
		sb_printf(
			sb,
			" ORDER BY due, priority LIMIT %d FOR UPDATE%s) AS c STRAIGHT_JOIN kyu_jobs ON "
			"kyu_jobs.seq = c.seq ",
			n, shape == CLAIM_SKIP_LOCKED ? " SKIP LOCKED" : "");
	} else {
		sb_adds(sb, "kyu_jobs");
		sb_adds(sb, hint);
		sb_adds(sb, " ");
	}
	add_claim_set(sb, cfg, tok, host, slot.len ? &slot : NULL);
	if (shape == CLAIM_PLAIN) {
		sb_add(sb, where.buf, where.len);
		sb_printf(sb, " ORDER BY due, priority LIMIT %d", n);
	}
	sb_free(&where);
	sb_free(&kmax);
	sb_free(&slot);
}

/* The two statements a restricted queue's claim executes, prepared once
 * per connection: kyu_reclaim takes expired running rows (their slot is
 * already counted), kyu_claim waiting ones. Parameters: queue, how many,
 * token (in the order of their placeholders). Both pick their rows with
 * SKIP LOCKED (and STRAIGHT_JOIN, see add_mark): the queue's row lock
 * already serialises its claimers, so a locked job row is one another
 * transaction holds (a submitter's uncommitted INSERT, a user's UPDATE),
 * and waiting for it would stall the whole claim round trip, leases of
 * running jobs included. */
static void add_prepare(struct strbuf *sb, const struct kyu_config *cfg, const char *host)
{
	struct strbuf st = { 0 };

	/* @kyu_cut: the claim's lease_cut_us (add_restricted sets it). */
	sb_adds(&st, "UPDATE (SELECT seq FROM kyu_jobs WHERE queue = ? AND status = 'running' AND "
		     "lease_until <= NOW(6) AND lease_until <= CAST(@kyu_cut AS DATETIME(6)) "
		     "ORDER BY lease_until LIMIT ? FOR UPDATE SKIP LOCKED) AS c "
		     "STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq = c.seq ");
	add_claim_set(&st, cfg, "?", host, NULL);
	sb_adds(sb, "PREPARE kyu_reclaim FROM ");
	db_quote(sb, st.buf, st.len);
	sb_reset(&st);
	sb_adds(&st,
		"UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE queue = ? AND status = 'waiting' "
		"AND due <= NOW(6)" KEY_FREE
		" ORDER BY due, priority LIMIT ? FOR UPDATE SKIP LOCKED) "
		"AS c STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq = c.seq ");
	add_claim_set(&st, cfg, "?", host, NULL);
	sb_adds(sb, "; PREPARE kyu_claim FROM ");
	db_quote(sb, st.buf, st.len);
	sb_adds(sb, "; ");
	sb_free(&st);
}

/* kyu_claim's keyed form, for a restricted queue with key_max_running
 * > 1 (add_key_room): prepared in each claim that has one, so that the
 * claims of other queues prepare what they did before slots existed. Its
 * limit is read from @kyu_q, the queue add_restricted sets. */
static void add_prepare_keyed(struct strbuf *sb, const struct kyu_config *cfg, const char *host)
{
	static const char kmax[] =
		"IFNULL((SELECT key_max_running FROM kyu_queues WHERE name = @kyu_q), 1)";
	struct strbuf st = { 0 }, slot = { 0 };

	sb_adds(&st,
		"UPDATE IGNORE (SELECT seq FROM kyu_jobs WHERE queue = ? AND status = 'waiting' "
		"AND due <= NOW(6)");
	add_key_room(&st, kmax);
	sb_adds(&st, " ORDER BY due, priority LIMIT ? FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN "
		     "kyu_jobs ON kyu_jobs.seq = c.seq ");
	add_key_slot(&slot, kmax);
	add_claim_set(&st, cfg, "?", host, &slot);
	sb_adds(sb, "PREPARE kyu_claim_keyed FROM ");
	db_quote(sb, st.buf, st.len);
	sb_adds(sb, "; ");
	sb_free(&st);
	sb_free(&slot);
}

/* A queue with max_running or a rate limit, inside the claim's
 * transaction: lock its kyu_queues row (SKIP LOCKED: a queue another
 * daemon is claiming right now is left to it, nobody waits), then, in
 * statements that read after the lock, take expired running rows and as
 * many waiting ones as the limits leave. */
static int add_restricted(struct strbuf *sb, uint64_t token, const struct qpart *p, int64_t cut_us)
{
	const int n = p->n;
	int stmts = 5;

	/* One SET per variable that reads another: MariaDB evaluates every
	 * right-hand side of a SET before it assigns any (and a subquery of
	 * user variables before the statement runs), so a variable set in the
	 * same SET would be read with its value from the claim before: the
	 * lock and the paused test of the queue claimed last, and nothing at
	 * all on a connection's first claim. */
	sb_printf(sb, "SET @kyu_tok = %" PRIu64 ", @kyu_q = ", token);
	db_quotes(sb, p->name);
	sb_adds(sb, ", @kyu_cut = ");
	add_cut(sb, cut_us);
	sb_printf(sb,
		  "; SET @kyu_ok = (SELECT 1 FROM kyu_queues WHERE name = @kyu_q AND paused = 0 "
		  "FOR UPDATE SKIP LOCKED); SET @kyu_n = IF(@kyu_ok, %d, 0); ",
		  n);
	if (p->rated) {
		sb_printf(
			sb,
			"SET @kyu_n = IF(@kyu_ok, (SELECT GREATEST(0, LEAST(%d, IFNULL(rate_limit - "
			"(SELECT IFNULL(SUM(n), 0) FROM kyu_queue_starts WHERE queue = @kyu_q AND "
			"at > NOW(6) - INTERVAL rate_period SECOND), %d))) FROM kyu_queues WHERE name = "
			"@kyu_q), 0); ",
			n, n);
		stmts++;
	}
	if (p->reclaim) {
		sb_adds(sb, "EXECUTE kyu_reclaim USING @kyu_q, @kyu_n, @kyu_tok; ");
		stmts++;
	}
	sb_printf(
		sb,
		"SET @kyu_n = GREATEST(0, LEAST(@kyu_n - %s, IFNULL((SELECT max_running - "
		"(SELECT COUNT(*) FROM kyu_jobs WHERE queue = @kyu_q AND status = 'running') FROM "
		"kyu_queues WHERE name = @kyu_q), %d))); ",
		p->reclaim ? "ROW_COUNT()" : "0", n);
	sb_printf(sb, "EXECUTE kyu_claim%s USING @kyu_q, @kyu_n, @kyu_tok; ",
		  p->keyed ? "_keyed" : "");
	if (p->rated) {
		sb_adds(sb,
			"INSERT INTO kyu_queue_starts (queue, at, n) SELECT @kyu_q, NOW(6), COUNT(*) "
			"FROM kyu_jobs WHERE owner = @kyu_tok AND queue = @kyu_q HAVING COUNT(*) > 0; ");
		stmts++;
	}
	return stmts;
}

/* Distinct queue names the directory's walk visits before it falls back
 * to GROUP BY: each costs the compound statement two lookups and a JSON
 * append, statements of their own (about 0.1 ms each in a busy run, where
 * a loose index scan takes microseconds per queue), so a table of many
 * queues is read the old way (notes/DESIGN.md, "The directory's plan"). */
#define DIR_WALK_MAX 32

/* The directory's columns over d (queue, next): each served queue with due
 * rows, its first due time and its kyu_queues settings. For a restricted
 * queue also when its first running lease expires: the claim takes expired
 * rows over only when there may be one (one dive on (queue, status) per
 * restricted queue); for a rated one when its oldest start counted leaves
 * the window (one dive on (queue, at)): a queue its limits stopped is asked
 * again at these moments (queues_claimed). Read after the claims of the
 * same round trip, so its own starts are counted. d's queue has the
 * collation of kyu_queues.name, so the join is one key lookup. */
static void add_dir_select(struct strbuf *sb, const char *from)
{
	sb_adds(sb,
		"SELECT d.queue, TIMESTAMPDIFF(MICROSECOND, NOW(6), d.next), q.paused, "
		"q.max_running, q.rate_limit, q.rate_period, q.weight, IF(q.max_running IS NULL AND "
		"q.rate_limit IS NULL, NULL, TIMESTAMPDIFF(MICROSECOND, NOW(6), (SELECT MIN(r.lease_until) "
		"FROM kyu_jobs AS r WHERE r.queue = d.queue AND r.status = 'running'))), "
		"IF(q.rate_limit IS NULL, NULL, (SELECT TIMESTAMPDIFF(MICROSECOND, NOW(6), MIN(s.at) "
		"+ INTERVAL q.rate_period SECOND) FROM kyu_queue_starts AS s WHERE s.queue = d.queue "
		"AND s.at > NOW(6) - INTERVAL q.rate_period SECOND)), q.key_max_running FROM "
		"JSON_TABLE(");
	sb_adds(sb, from);
	sb_adds(sb, ", '$[*]' COLUMNS (queue VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin "
		    "PATH '$[0]', next DATETIME(6) PATH '$[1]')) AS d "
		    "LEFT JOIN kyu_queues AS q ON q.name = d.queue WHERE d.next IS NOT NULL");
}

/* The queues the fan leaves to their own claims (queues_special). */
#define FAN_SPECIAL_QUEUES                                                                         \
	"SELECT name FROM kyu_queues WHERE paused <> 0 OR max_running IS NOT NULL OR "             \
	"rate_limit IS NOT NULL OR key_max_running > 1"

/* Every name the fan walks (add_fan): those filed, and those noted since. */
#define FAN_ALL_NAMES "SELECT name FROM kyu_queue_names UNION SELECT name FROM kyu_queue_names_new"

/* The directory of every queue, from the (queue, due, priority) index. */
#define DIR_GROUP_BY                                                                               \
	"SELECT IFNULL(JSON_ARRAYAGG(JSON_ARRAY(g.queue, g.next)), '[]') INTO dir FROM "           \
	"(SELECT queue, MIN(due) AS next FROM kyu_jobs WHERE due IS NOT NULL GROUP BY "            \
	"queue) AS g; "

static void add_name_filter(struct strbuf *sb, const struct kyu_config *cfg, const char *column);

/* The queues the fan leaves out, as the JSON of a directory's (queue,
 * next) pairs, from kyu_queues: each one's first waiting row is one dive,
 * however many queues kyu_jobs holds. */
static void add_special_json(struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_adds(sb,
		"(SELECT IFNULL(JSON_ARRAYAGG(JSON_ARRAY(q.name, (SELECT s.due "
		"FROM kyu_jobs AS s FORCE INDEX (kyu_jobs_status_queue_due) WHERE s.status = "
		"'waiting' AND s.queue = q.name ORDER BY s.due, s.priority LIMIT 1))), '[]') FROM "
		"kyu_queues AS q WHERE (q.paused <> 0 OR q.max_running IS NOT NULL OR "
		"q.rate_limit IS NOT NULL OR q.key_max_running > 1)");
	add_name_filter(sb, cfg, "q.name");
	sb_adds(sb, ")");
}

/* The directory, as one statement; returns the results the reply holds
 * after its rows (1 for a compound statement's own status, else 0).
 *
 * Each queue's first due time is MIN(due) with the queue a constant, which
 * the server answers from the (queue, due, priority) index in one dive
 * without reading rows, whatever its statistics say. A GROUP BY queue
 * alone, meant as a loose index scan, is costed from the statistics a
 * table handle had when the server opened it: one opened while the table
 * was small (a fresh install, a bench) scanned the whole index, finished
 * rows included, or every due row, in every claim (notes/DESIGN.md, "The
 * directory's plan"). With a [kyud] queues list the queues are constants.
 * Without, a compound statement finds them the same way, from one name to
 * the next (MIN(queue) above the last), with variables of the columns' own
 * types (of another collation they miss the index); past DIR_WALK_MAX
 * names it takes the GROUP BY after all.
 *
 * Unless the fan may begin (plan->dir_fan_at): then past DIR_WALK_MAX
 * names it first reads the due waiting rows in (status, queue, ...) order
 * up to the dir_fan_at + 1st queue the fan would serve (the rows of those
 * queues, not of every queue: 1,000,000 rows over 10,000 queues cost each
 * worker's first directory 1,000,000 index entries). With as many, that is
 * the directory, with the queues the fan leaves out (from kyu_queues), and
 * the claim begins the fan at @kyu_fan_from: the name a share of the way
 * through kyu_queue_names, so that a daemon's workers begin apart. With
 * fewer, the GROUP BY follows, as without the fan. */
static int add_directory(struct strbuf *sb, const struct kyu_config *cfg,
			 const struct claim_plan *plan)
{
	if (cfg->n_queues > 0) {
		struct strbuf list = { 0 };

		sb_adds(&list, "JSON_ARRAY(");
		for (int i = 0; i < cfg->n_queues; i++) {
			sb_adds(&list, i ? ", JSON_ARRAY(" : "JSON_ARRAY(");
			db_quotes(&list, cfg->queues[i]);
			sb_adds(&list, ", (SELECT MIN(due) FROM kyu_jobs WHERE queue = ");
			db_quotes(&list, cfg->queues[i]);
			sb_adds(&list, "))");
		}
		sb_adds(&list, ")");
		add_dir_select(sb, list.buf);
		sb_adds(sb, "; ");
		sb_free(&list);
		return 0;
	}
	sb_adds(sb, "BEGIN NOT ATOMIC DECLARE q, p TYPE OF kyu_jobs.queue; "
		    "DECLARE t TYPE OF kyu_jobs.due; DECLARE n INT DEFAULT 0; "
		    "DECLARE dir LONGTEXT DEFAULT '[]'; ");
	if (plan->dir_fan_at > 0)
		sb_adds(sb, "SET @kyu_fan_from = NULL; ");
	sb_printf(
		sb,
		"SELECT MIN(queue) INTO q FROM kyu_jobs; "
		"WHILE q IS NOT NULL AND n < %d DO "
		"SELECT MIN(due) INTO t FROM kyu_jobs WHERE queue = q; "
		"IF t IS NOT NULL THEN SET dir = JSON_ARRAY_APPEND(dir, '$', JSON_ARRAY(q, t)); END IF; "
		"SET p = q, n = n + 1; SELECT MIN(queue) INTO q FROM kyu_jobs WHERE queue > p; "
		"END WHILE; IF q IS NOT NULL THEN ",
		DIR_WALK_MAX);
	if (plan->dir_fan_at > 0) {
		sb_printf(
			sb,
			"SELECT IFNULL(JSON_ARRAYAGG(JSON_ARRAY(g.queue, g.next)), '[]'), COUNT(*) INTO "
			"dir, n FROM (SELECT queue, MIN(due) AS next FROM kyu_jobs FORCE INDEX "
			"(kyu_jobs_status_queue_due) WHERE status = 'waiting' AND due <= NOW(6) AND "
			"queue NOT IN (" FAN_SPECIAL_QUEUES
			") GROUP BY queue ORDER BY queue LIMIT %d) "
			"AS g; IF n > %d THEN SET dir = JSON_MERGE_PRESERVE(dir, ",
			plan->dir_fan_at + 1, plan->dir_fan_at);
		add_special_json(sb, cfg);
		/* The names as the fan reads them: filed, and noted since. */
		sb_printf(
			sb,
			"); SELECT COUNT(*) * %d DIV 1000000 INTO n FROM (" FAN_ALL_NAMES ") AS a; "
			"SELECT IFNULL(MAX(x.name), '') INTO @kyu_fan_from FROM (SELECT a.name FROM (" FAN_ALL_NAMES
			") AS a ORDER BY a.name LIMIT n) AS x; ELSE " DIR_GROUP_BY "END IF; ",
			plan->dir_fan_from_ppm);
	} else {
		sb_adds(sb, DIR_GROUP_BY);
	}
	sb_adds(sb, "END IF; ");
	add_dir_select(sb, "dir");
	sb_adds(sb, "; END; ");
	return 1;
}

static void add_name_filter(struct strbuf *sb, const struct kyu_config *cfg, const char *column)
{
	if (cfg->n_queues == 0)
		return;
	sb_printf(sb, " AND %s IN (", column);
	for (int i = 0; i < cfg->n_queues; i++) {
		if (i)
			sb_adds(sb, ",");
		db_quotes(sb, cfg->queues[i]);
	}
	sb_adds(sb, ")");
}

/* A page of one table of names: after the cursor, the served queues, not
 * those the fan leaves out (before the LIMIT: a page short of names
 * means the last name was reached). */
static void add_fan_range(struct strbuf *sb, const struct kyu_config *cfg,
			  const struct claim_plan *plan)
{
	if (plan->fan_cursor && plan->fan_cursor[0]) {
		sb_adds(sb, " AND name > ");
		db_quotes(sb, plan->fan_cursor);
	}
	add_name_filter(sb, cfg, "name");
	sb_adds(sb, " AND name NOT IN (" FAN_SPECIAL_QUEUES ")");
}

/* The fan: one row from each of the next plan->fan_n queues by name
 * (notes/DESIGN.md, "Many queues: the fan"). Its page of names is read
 * from kyu_queue_names, which the INSERT trigger fills and kyud's
 * retention pass (names.c): primary-key ranges, no scan that grows with
 * kyu_jobs, and each queue's first due
 * row is one dive into (status, queue, due, priority). The rows are
 * picked by a consistent read and locked with SKIP LOCKED, so two
 * claimers on the same page skip each other's rows instead of waiting.
 * Returns the statements added. */
static int add_fan(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
		   const char *host, const struct claim_plan *plan)
{
	char tok[24];
	int stmts = 2;

	snprintf(tok, sizeof(tok), "%" PRIu64, token);
	/* The names filed, and those noted since kyud last filed them, each
	 * read up to the page's size in name order. */
	sb_adds(sb, "SELECT JSON_ARRAYAGG(g.name), MAX(g.name), COUNT(*) INTO @kyu_fan, "
		    "@kyu_fan_end, @kyu_fan_n FROM (SELECT u.name FROM ((SELECT name FROM "
		    "kyu_queue_names WHERE 1");
	add_fan_range(sb, cfg, plan);
	sb_printf(sb,
		  " ORDER BY name LIMIT %d) UNION ALL (SELECT DISTINCT name FROM "
		  "kyu_queue_names_new WHERE 1",
		  plan->fan_n);
	add_fan_range(sb, cfg, plan);
	sb_printf(sb,
		  " ORDER BY name LIMIT %d)) AS u GROUP BY u.name ORDER BY u.name LIMIT %d) AS g; ",
		  plan->fan_n, plan->fan_n);
	sb_adds(sb,
		"UPDATE IGNORE (SELECT j2.seq FROM JSON_TABLE(@kyu_fan, '$[*]' COLUMNS (queue "
		"VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS f "
		"STRAIGHT_JOIN kyu_jobs AS j2 ON j2.seq = (SELECT s.seq FROM kyu_jobs AS s FORCE "
		"INDEX (kyu_jobs_status_queue_due) WHERE s.status = 'waiting' AND s.queue = "
		"f.queue AND s.due <= NOW(6) AND (s.concurrency_key IS NULL OR s.concurrency_key "
		"NOT IN (SELECT running_key FROM kyu_jobs WHERE running_key IS NOT NULL)) ORDER "
		"BY s.due, s.priority LIMIT 1) WHERE j2.status = 'waiting' AND j2.due <= NOW(6) "
		"FOR UPDATE SKIP LOCKED) AS c STRAIGHT_JOIN kyu_jobs ON kyu_jobs.seq = c.seq ");
	add_claim_set(sb, cfg, tok, host, NULL);
	sb_adds(sb, "; ");
	/* Expired leases of the fan's queues: the fan reads waiting rows only.
	 * The running rows are few (every daemon's slots and prefetch), read on
	 * (status, ...); restricted queues take theirs over in their own
	 * claims. */
	if (plan->fan_refile) {
		sb_adds(sb,
			"INSERT IGNORE INTO kyu_queue_names (name) SELECT queue FROM kyu_jobs WHERE "
			"status = 'waiting' GROUP BY queue; ");
		stmts++;
	}
	if (plan->fan_reclaim) {
		sb_adds(sb, "UPDATE kyu_jobs FORCE INDEX (kyu_jobs_status_queue_due) ");
		add_claim_set(sb, cfg, tok, host, NULL);
		sb_adds(sb,
			" WHERE status = 'running' AND lease_until <= NOW(6) AND lease_until <= ");
		add_cut(sb, plan->lease_cut_us);
		add_name_filter(sb, cfg, "queue");
		sb_printf(sb, " AND queue NOT IN (" RESTRICTED_QUEUES ") LIMIT %d; ", plan->fan_n);
		stmts++;
	}
	return stmts;
}

/* The directory of the queues the fan leaves out, from kyu_queues. */
static void add_special_directory(struct strbuf *sb, const struct kyu_config *cfg)
{
	sb_adds(sb, "SET @kyu_sdir = ");
	add_special_json(sb, cfg);
	sb_adds(sb, "; ");
	add_dir_select(sb, "@kyu_sdir");
	sb_adds(sb, "; ");
}

/* The row's column, or when it is NULL the default of its queue's section
 * ([queue.NAME], else [queue.*]), else [job]'s: as SQL, so that the claim
 * returns the value the attempt runs with. */
static void add_default(struct strbuf *sb, const struct kyu_config *cfg, const char *column,
			enum domain_key key, int job_default)
{
	int star = job_default;
	bool any = false;

	for (int i = 0; i < cfg->n_domains; i++) {
		const struct domain *d = &cfg->domains[i];
		any |= d->key_line[key] != 0;
		if (!d->queue && d->key_line[key])
			star = key == DK_MAX_ATTEMPTS ? d->max_attempts : d->time_limit;
	}
	sb_printf(sb, "COALESCE(j.%s, ", column);
	if (!any) {
		sb_printf(sb, "%d)", job_default);
		return;
	}
	/* A queue with a section of its own takes nothing from [queue.*]. */
	sb_adds(sb, "CASE j.queue");
	for (int i = 0; i < cfg->n_domains; i++) {
		const struct domain *d = &cfg->domains[i];
		int v = !d->key_line[key]        ? job_default
			: key == DK_MAX_ATTEMPTS ? d->max_attempts
						 : d->time_limit;
		if (!d->queue || v == star)
			continue;
		sb_adds(sb, " WHEN ");
		db_quotes(sb, d->queue);
		sb_printf(sb, " THEN %d", v);
	}
	sb_printf(sb, " ELSE %d END)", star);
}

static void add_select(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token)
{
	/* What this token marked, and the next due time (which tells the
	 * supervisor how long everyone may sleep when the batch comes back
	 * short, when no directory came with it). The one-row derived table
	 * makes the SELECT return that time even when nothing was marked. */
	sb_adds(sb, "SELECT j.seq, j.id, j.queue, j.command, j.argv, j.env, j.cwd, j.attempts, "
		    "j.tempfails, ");
	add_default(sb, cfg, "max_attempts", DK_MAX_ATTEMPTS, cfg->max_attempts);
	sb_adds(sb, ", ");
	add_default(sb, cfg, "time_limit", DK_TIME_LIMIT, cfg->time_limit);
	/* todo: whether kyu_settle has work, so that a claim made after a job
	 * with dependents ended elsewhere (a plain UPDATE, another daemon's
	 * lease expiry) settles it. */
	/* d.now_us: the server's clock, which lease.c watches for steps. */
	sb_adds(sb,
		", d.next, j.concurrency_key, TIMESTAMPDIFF(MICROSECOND, j.run_at, NOW(6)), "
		"j.after, j.has_downstream, d.todo, j.traceparent, d.now_us, d.fan_n, d.fan_end, d.fan_from "
		"FROM (SELECT TIMESTAMPDIFF(MICROSECOND, '1970-01-01', NOW(6)) AS now_us, "
		"TIMESTAMPDIFF(MICROSECOND, NOW(6), (");
	add_min_due(sb, cfg);
	sb_printf(
		sb,
		")) AS next, " STORE_SETTLE_PENDING
		" AS todo, @kyu_fan_n AS fan_n, @kyu_fan_end AS fan_end, @kyu_fan_from AS fan_from) AS d LEFT JOIN kyu_jobs AS j ON j.owner = %" PRIu64
		" AND j.status = 'running'",
		token);
}

void store_claim_build_plan(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
			    const char *host, const struct claim_plan *plan,
			    const struct finish *fin, int n_fin, struct claim_layout *lay)
{
	int stmts = 0;
	bool txn = false, keyed_prepared = false;

	memset(lay, 0, sizeof(*lay));
	lay->fin_at = lay->dir_at = -1;
	if (plan->rollback) {
		/* A failed claim may have left its transaction (and a queue's
		 * lock) open. */
		sb_adds(sb, "ROLLBACK; ");
		stmts++;
	}
	/* Results first: their rows leave the due index before the claim
	 * scans it. */
	if (n_fin > 0 && store_finish_build_plain(sb, fin, n_fin)) {
		sb_adds(sb, "; ");
		lay->fin_at = stmts++;
		lay->n_fin = n_fin;
	}
	for (int i = 0; i < plan->n_parts; i++) {
		const struct qpart *p = &plan->parts[i];
		if (p->n <= 0 || p->restricted)
			continue;
		add_mark(sb, cfg, plan->skip_locked ? CLAIM_SKIP_LOCKED : cfg->claim, token, host,
			 p->name, p->keyed, p->n, plan->lease_cut_us);
		sb_adds(sb, "; ");
		stmts++;
		lay->asked += p->n;
	}
	if (plan->fan_n > 0) {
		stmts += add_fan(sb, cfg, token, host, plan);
		lay->asked += plan->fan_n + (plan->fan_reclaim ? plan->fan_n : 0);
		lay->fan_page = plan->fan_n;
	}
	for (int i = 0; i < plan->n_parts; i++) {
		const struct qpart *p = &plan->parts[i];
		if (p->n <= 0 || !p->restricted || !p->name)
			continue;
		if (!plan->prepared && !lay->prepares) {
			add_prepare(sb, cfg, host);
			stmts += 2;
			lay->prepares = true;
		}
		if (p->keyed && !keyed_prepared) {
			add_prepare_keyed(sb, cfg, host);
			stmts++;
			keyed_prepared = true;
		}
		if (!txn) {
			sb_adds(sb, "START TRANSACTION; ");
			stmts++;
			txn = true;
		}
		stmts += add_restricted(sb, token, p, plan->lease_cut_us);
		lay->asked += p->n;
	}
	if (txn) {
		sb_adds(sb, "COMMIT; ");
		stmts++;
		lay->transaction = true;
	}
	/* After the claims: a queue that got due rows before they ran is in
	 * it, so the next claim, planned from it, is not blind to that queue. */
	if (plan->directory && plan->dir_special) {
		add_special_directory(sb, cfg);
		stmts++;
		lay->dir_at = stmts++;
	} else if (plan->directory) {
		int tail = add_directory(sb, cfg, plan);
		lay->dir_at = stmts++;
		lay->dir_cut = plan->dir_fan_at > 0 && cfg->n_queues == 0;
		stmts += tail;
	}
	add_select(sb, cfg, token);
	lay->sel_at = stmts++;
	lay->n_stmts = stmts;
}

void store_claim_build(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
		       const char *host, int n, const struct finish *fin, int n_fin)
{
	struct qpart all = { .name = NULL, .n = n };
	struct claim_plan plan = { .parts = &all, .n_parts = 1 };
	struct claim_layout lay;

	store_claim_build_plan(sb, cfg, token, host, &plan, fin, n_fin, &lay);
}
