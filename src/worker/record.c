/* Recording results: the round trip that writes the results waiting in
 * results.c into their rows (its row of the statement order). See record.h. */
#include "record.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "store.h"

void record_init(struct record *rec, const struct kyu_config *cfg, struct conn *conn,
		 const struct jobs *jobs, int worker, const char *daemon_id, const char *host,
		 struct settle *settle,
		 void (*recorded)(void *ctx, const struct finish *f, int n, bool retried),
		 void *recorded_ctx)
{
	rec->settle = settle;
	rec->cfg = cfg;
	rec->conn = conn;
	rec->jobs = jobs;
	rec->worker = worker;
	rec->recorded = recorded;
	rec->recorded_ctx = recorded_ctx;
	/* A worker started by hand counts under a token of its own. */
	if (daemon_id)
		snprintf(rec->daemon, sizeof(rec->daemon), "%s", daemon_id);
	else
		registry_make_id(rec->daemon, sizeof(rec->daemon), host, getpid());
	/* kyu_attempts names the daemon by its row of kyu_daemons. */
	rec->history_daemon = daemon_id ? rec->daemon : NULL;
}

void record_free(struct record *rec)
{
	results_free(&rec->results);
	minutes_free(&rec->pending);
	history_free(&rec->history);
}

void record_connected(struct record *rec)
{
	rec->txn_open = false;
	minutes_clear(&rec->pending);
	history_clear(&rec->history);
}

/* Whether round trips that record results write their attempts' rows
 * now; pending rows are dropped while not. */
static bool history_on(struct record *rec)
{
	if (rec->cfg->history != HISTORY_OFF && mono_now() >= rec->history_after)
		return true;
	history_clear(&rec->history);
	return false;
}

/* ---- kyu_minutes ----------------------------------------------------------- */

bool record_counting(struct record *rec)
{
	if (rec->conn->minutes && mono_now() >= rec->minutes_after)
		return true;
	minutes_clear(&rec->pending);
	return false;
}

void record_count_add(struct record *rec, struct strbuf *sb, const struct finish *f, int n)
{
	struct minutes_writer wr = { .daemon = rec->daemon, .worker = rec->worker };

	struct history_writer hw = { .daemon = rec->history_daemon,
				     .output = rec->cfg->attempt_output,
				     .all = rec->cfg->history == HISTORY_ALL };

	rec->counted = record_counting(rec) && minutes_count_build(sb, &wr, &rec->pending, f, n);
	rec->history_sent = history_on(rec) && history_build(sb, &hw, &rec->history, f, n);
}

void record_count_read(struct record *rec, const struct db_reply *r, int n_body,
		       struct db_reply *body)
{
	struct db_reply before = *r;

	/* The INSERT is last, behind the count: split off like it (its
	 * failure is neither the count's nor the body's). */
	if (rec->history_sent)
		rec->h = minutes_split(r, n_body + rec->counted, &before);
	*body = before;
	if (rec->counted)
		rec->m = minutes_split(&before, n_body, body);
}

/* What the attempts' INSERT of reply r settled (as the count's below). */
static void history_settle(struct record *rec, const struct db_reply *r, const struct finish *f,
			   int n, int recorded)
{
	if (!rec->history_sent)
		return;
	rec->history_sent = false;
	switch (rec->h) {
	case MINUTES_DONE:
		history_clear(&rec->history);
		if (spell_end(&rec->history_failing))
			log_notice("writing kyu_attempts again");
		return;
	case MINUTES_NOT_RUN:
		if (r->fail == DB_LOST) {
			/* Sent again, they get a row only if their row
			 * changes then. */
			history_clear(&rec->history);
			results_unsure(&rec->results, n);
		} else {
			history_keep(&rec->history, rec->cfg->history == HISTORY_ALL, f, recorded);
		}
		return;
	case MINUTES_FAILED:
		break;
	}
	if (r->fail == DB_RETRY || r->fail == DB_BUSY) {
		log_debug("writing kyu_attempts: %s; trying again", r->err);
		history_keep(&rec->history, rec->cfg->history == HISTORY_ALL, f, recorded);
		return;
	}
	history_clear(&rec->history);
	rec->history_after = mono_now() + HISTORY_RETRY;
	if (spell_begin(&rec->history_failing))
		log_warn("writing kyu_attempts failed: %s; the attempts this worker ends meanwhile "
			 "have no row there (tried every %.0f s; grants: kyu_jobs(7))",
			 r->err, HISTORY_RETRY);
}

void record_count_settle(struct record *rec, const struct db_reply *r, const struct finish *f,
			 int n, int recorded)
{
	history_settle(rec, r, f, n, recorded);
	if (!rec->counted)
		return;
	rec->counted = false;
	switch (rec->m) {
	case MINUTES_DONE:
		minutes_clear(&rec->pending);
		if (spell_end(&rec->minutes_failing))
			log_notice("counting ended jobs in kyu_minutes again");
		return;
	case MINUTES_NOT_RUN:
		if (r->fail == DB_LOST) {
			/* The results may be recorded and counted already; sent
			 * again, they count only if their row changes then. */
			minutes_clear(&rec->pending);
			results_unsure(&rec->results, n);
		} else {
			minutes_keep(&rec->pending, f, recorded);
		}
		return;
	case MINUTES_FAILED:
		break;
	}
	if (r->fail == DB_RETRY || r->fail == DB_BUSY) {
		/* A lock or a full disk: counted with the next batch. */
		log_debug("counting ended jobs in kyu_minutes: %s; trying again", r->err);
		minutes_keep(&rec->pending, f, recorded);
		return;
	}
	minutes_clear(&rec->pending);
	rec->minutes_after = mono_now() + MINUTES_RETRY;
	if (spell_begin(&rec->minutes_failing))
		log_warn(
			"counting ended jobs in kyu_minutes failed: %s; kyu web's last-hour figures "
			"miss this worker's jobs until it works (tried every %.0f s; grants: "
			"kyu_jobs(7))",
			r->err, MINUTES_RETRY);
}

/* ---- results --------------------------------------------------------------- */

void record_recorded(struct record *rec, int n, int rejected)
{
	if (rejected > 0) {
		rec->n_rejected += (uint64_t)rejected;
		log_warn("%d result(s) rejected: the job's lease had passed to another claim "
			 "(late write; %" PRIu64 " so far)",
			 rejected, rec->n_rejected);
	}
	rec->n_finished += (uint64_t)n;
	/* Its dependents hear of its end from kyu_settle, at once rather
	 * than at the next claim that sees the item (a retry's end, which
	 * leaves none, costs one empty call). */
	bool retried = false;
	for (int i = 0; i < n; i++) {
		if (rec->results.view[i].downstream && rec->results.view[i].outcome != OUT_RELEASE)
			settle_want(rec->settle);
		retried |= rec->results.view[i].outcome == OUT_RETRY;
	}
	rec->recorded(rec->recorded_ctx, rec->results.view, n, retried);
	results_forget(&rec->results, n);
}

/* Results may wait for the rest of their batch while jobs still run
 * (results.h). */
static bool flush_now(const struct record *rec, double now)
{
	if (results_count(&rec->results) == 0 || now < rec->flush_after)
		return false;
	return rec->jobs->n_running == 0 || rec->jobs->draining ||
	       now >= results_batch_done(&rec->results);
}

/* Results alone: when their batch is complete, or ahead of a claim they
 * cannot ride along with (claim.c's row before this one takes them
 * otherwise). */
bool record_due(void *record, struct stmt_turn *t)
{
	const struct record *rec = record;

	return flush_now(rec, t->now) ||
	       (t->want > 0 && results_count(&rec->results) && t->now >= rec->flush_after);
}

double record_when(void *record, double now)
{
	const struct record *rec = record;
	double t;

	(void)now;
	if (results_count(&rec->results) == 0)
		return 0;
	t = results_batch_done(&rec->results);
	return t < rec->flush_after ? rec->flush_after : t;
}

bool record_send(void *record, struct stmt_turn *t, struct strbuf *sb)
{
	struct record *rec = record;
	const struct finish *f;
	int n, n_plain, n_stmts;
	size_t max_len, room;

	(void)t;
	f = results_batch(&rec->results, &n, &n_plain);
	max_len = db_max_statement(rec->conn->db);
	/* The count rides behind the results: room for it is kept. */
	room = record_counting(rec) ? minutes_count_room(&rec->pending, n) : 0;
	room += history_on(rec) ? history_room(&rec->history, n) : 0;
	if (room < max_len / 2)
		max_len -= room;
	rec->sent_count = store_finish_build(sb, rec->cfg, f, n, max_len, &n_stmts);
	rec->sent_stmts = n_stmts;
	rec->sent_probe = true;
	if (rec->sent_probe)
		sb_adds(sb, "; " SETTLE_PROBE_SQL);
	record_count_add(rec, sb, f, rec->sent_count);
	return true;
}

void record_unsent(void *record)
{
	struct record *rec = record;

	log_err("dropping the result of row %" PRIu64 " (the job runs again after its lease)",
		rec->results.view[0].seq);
	results_forget(&rec->results, 1);
}

void record_reply(void *record, const struct db_reply *r)
{
	struct record *rec = record;
	const struct finish *f;
	struct db_reply body;
	int done, rejected;

	f = rec->results.view;
	record_count_read(rec, r, rec->sent_stmts + rec->sent_probe, &body);
	if (rec->sent_probe && body.n > rec->sent_stmts)
		settle_probed(rec->settle, &body.r[rec->sent_stmts]);
	store_finish_read(&body, f, rec->sent_count, &done, &rejected);
	if (store_finish_txn_open(&body, f, rec->sent_count))
		rec->txn_open = true;
	record_count_settle(rec, r, f, rec->sent_count, done);
	r = &body;
	record_recorded(rec, done, rejected);
	switch (r->fail) {
	case DB_OK:
		conn_wrote(rec->conn);
		break;
	case DB_LOST:
		conn_failed(rec->conn, r, "recording results");
		break;
	case DB_BUSY:
		conn_failed(rec->conn, r, "recording results");
		rec->flush_after = mono_now() + CONN_BUSY_RETRY;
		break;
	case DB_RETRY:
		/* Deadlocked even after the immediate retries: keep the results
		 * and try again shortly; they are only lost if the lease runs
		 * out first, and then the job simply runs again. */
		log_debug("recording results: %s; retrying", r->err);
		rec->flush_after = conn_backoff(rec->conn, mono_now());
		break;
	case DB_ERROR:
		/* The statement of one result failed and would fail again as it
		 * is (a data error: a lost connection or a deadlock is not
		 * DB_ERROR): record that result without its output, then
		 * reduced to its status and exit code with a plain ASCII error
		 * (results.h), and only if even that fails, drop it (its row
		 * stays 'running' under a lease nobody renews, so the job runs
		 * again once it expires). The claim token stays on the result:
		 * the reduced one is fenced like the whole. Local to this
		 * reply handler (issue 25, item 1). */
		if (done < rec->sent_count) {
			uint64_t seq = f[done].seq;
			if (results_strip(&rec->results, seq, r->err))
				log_err("recording the result of row %" PRIu64
					" failed: %s; recording it "
					"with less of it",
					seq, r->err);
			else
				log_err("recording the result of row %" PRIu64
					" failed: %s; dropping it "
					"(the job runs again after its lease)",
					seq, r->err);
		}
		break;
	}
}
