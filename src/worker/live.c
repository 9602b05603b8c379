/* Live output: while an attempt runs, the recent tail of what it wrote is
 * copied into its row's output column (kyud(8), "Live output"). See live.h. */
#include "live.h"

#include <stdlib.h>
#include <string.h>

#include "common/capture.h"
#include "common/log.h"
#include "store.h"

void live_configure(struct live *l, const struct kyu_config *cfg)
{
	l->interval = cfg->live_output;
}

void live_init(struct live *l, struct job **slots, int n_slots, const struct kyu_config *cfg,
	       struct conn *conn)
{
	memset(l, 0, sizeof(*l));
	l->conn = conn;
	l->slots = slots;
	l->n_slots = n_slots;
	l->seqs = xcalloc((size_t)n_slots, sizeof(*l->seqs));
	l->tokens = xcalloc((size_t)n_slots, sizeof(*l->tokens));
	l->totals = xcalloc((size_t)n_slots, sizeof(*l->totals));
	l->gens = xcalloc((size_t)n_slots, sizeof(*l->gens));
	live_configure(l, cfg);
}

void live_free(struct live *l)
{
	free(l->seqs);
	free(l->tokens);
	free(l->totals);
	free(l->gens);
	l->seqs = l->tokens = l->totals = l->gens = NULL;
}

/* Its output changed since its tail was last written, and it is still
 * ours to write (a job being ended, cancelled or taken over is left to
 * its result, or to the claim that took it). */
static bool output_grew(const struct job *j)
{
	return j->cap.total != j->live_total && capture_live_len(&j->cap, LIVE_TAIL_MAX) > 0;
}

/* Its progress or note changed since they were last written (status.h):
 * however often the job wrote them, the last ones go with the next write. */
static bool progressed(const struct job *j)
{
	return j->status.gen != j->live_status_gen;
}

static bool grew(const struct job *j)
{
	return j && j->reason == END_NONE && (output_grew(j) || progressed(j));
}

/* When j's tail may be written: not before it has run an interval, so
 * that the short jobs, nearly all of them, never cost a write. */
static double due_at(const struct live *l, const struct job *j)
{
	double t = j->spawned_at + l->interval;
	return t > l->next_at ? t : l->next_at;
}

bool live_due(const struct live *l, double now)
{
	if (l->interval <= 0)
		return false;
	for (int i = 0; i < l->n_slots; i++)
		if (grew(l->slots[i]) && now >= due_at(l, l->slots[i]))
			return true;
	return false;
}

double live_next(const struct live *l)
{
	double next = 0;

	if (l->interval <= 0)
		return 0;
	for (int i = 0; i < l->n_slots; i++) {
		const struct job *j = l->slots[i];
		if (grew(j) && (next == 0 || due_at(l, j) < next))
			next = due_at(l, j);
	}
	return next;
}

bool live_build(struct live *l, double now, size_t max_len, struct strbuf *sb)
{
	struct live_row *rows = xcalloc((size_t)l->n_slots, sizeof(*rows));
	struct strbuf *texts = xcalloc((size_t)l->n_slots, sizeof(*texts));
	size_t room = 256; /* the statement around the rows */
	int i, k;

	l->n = 0;
	for (k = 0; k < l->n_slots; k++) {
		struct job *j = l->slots[(l->start + k) % l->n_slots];
		bool out;
		if (!grew(j) || now < due_at(l, j))
			continue;
		out = output_grew(j);
		if (out)
			capture_live(&j->cap, j->attempts, LIVE_TAIL_MAX, &texts[l->n]);
		if (room + store_live_room(texts[l->n].len) > max_len) {
			/* The server would refuse it all (a small
			 * max_allowed_packet): these go first next time; one
			 * that fits in no statement is never written. */
			sb_free(&texts[l->n]);
			if (l->n == 0)
				continue;
			break;
		}
		room += store_live_room(texts[l->n].len);
		rows[l->n] = (struct live_row){
			.seq = j->seq,
			.token = j->token,
			.text = out ? texts[l->n].buf : NULL,
			.len = texts[l->n].len,
			.status = progressed(j),
			.progress = j->status.progress,
			.note = j->status.has_note ? j->status.note : NULL,
		};
		l->seqs[l->n] = j->seq;
		l->tokens[l->n] = j->token;
		l->gens[l->n] = j->status.gen;
		l->totals[l->n++] = j->cap.total;
	}
	l->start = k < l->n_slots ? (l->start + k) % l->n_slots : 0;
	l->next_at = now + l->interval;
	if (l->n > 0)
		store_live_build(sb, rows, l->n);
	for (i = 0; i < l->n; i++)
		sb_free(&texts[i]);
	free(texts);
	free(rows);
	return l->n > 0;
}

int live_reply(struct live *l, const struct db_reply *r)
{
	int n = r->fail == DB_OK ? l->n : 0;

	if (r->fail == DB_OK) {
		for (int k = 0; k < l->n; k++)
			for (int i = 0; i < l->n_slots; i++) {
				struct job *j = l->slots[i];
				if (j && j->seq == l->seqs[k] && j->token == l->tokens[k]) {
					j->live_total = l->totals[k];
					j->live_status_gen = l->gens[k];
				}
			}
		l->writes++;
		l->rows += (uint64_t)l->n;
	}
	l->n = 0;
	return n;
}

/* ---- the write's row ------------------------------------------------------ */

/* Behind the leases, ahead of claims and results (pump.c): at most one
 * round trip per interval, so that a worker busy with short jobs still
 * shows its long ones' output. */
bool live_write_due(void *live, struct stmt_turn *t)
{
	return live_due(live, t->now);
}

bool live_write_send(void *live, struct stmt_turn *t, struct strbuf *sb)
{
	struct live *l = live;

	return live_build(l, t->now, db_max_statement(l->conn->db), sb);
}

double live_write_when(void *live, double now)
{
	(void)now;
	return live_next(live);
}

void live_write_reply(void *live, const struct db_reply *r)
{
	struct live *l = live;
	int n;

	n = live_reply(l, r);
	switch (r->fail) {
	case DB_OK:
		log_debug("wrote the output tail of %d running job(s)", n);
		if (spell_end(&l->failing))
			log_notice("running jobs' output is written again");
		break;
	case DB_LOST:
		conn_failed(l->conn, r, "writing running jobs' output");
		break;
	case DB_RETRY:
	case DB_BUSY:
		/* Tried again at the next interval; the results and the
		 * claims that matter say so if it lasts. */
		log_debug("writing running jobs' output: %s; next time", r->err);
		break;
	case DB_ERROR:
		/* Once per spell: it would repeat every interval. */
		if (spell_begin(&l->failing))
			log_warn(
				"writing running jobs' output failed: %s; trying again every %.0f s",
				r->err, l->interval);
		break;
	}
}
