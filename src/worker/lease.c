/* Lease renewal and self-fencing, in one place. See lease.h. */
#include "lease.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "store.h"

/* A lease renewal that waited for a row lock is tried again this soon,
 * not a heartbeat interval later. */
#define BEAT_RETRY 1.0

static void on_fence(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	lease_check(t->data);
}

void lease_configure(struct lease *l, const struct kyu_config *cfg)
{
	l->lease = cfg->lease;
	l->margin = cfg->fence_margin;
	l->interval = config_heartbeat(cfg);
}

void lease_init(struct lease *l, struct ev_loop *loop, struct job **slots, int n_slots,
		const struct kyu_config *cfg, struct conn *conn, struct board_worker *bw)
{
	memset(l, 0, sizeof(*l));
	l->loop = loop;
	l->cfg = cfg;
	l->conn = conn;
	l->bw = bw;
	l->slots = slots;
	l->n_slots = n_slots;
	l->seqs = xcalloc((size_t)n_slots, sizeof(*l->seqs));
	l->tokens = xcalloc((size_t)n_slots, sizeof(*l->tokens));
	l->pids = xcalloc((size_t)n_slots, sizeof(*l->pids));
	lease_configure(l, cfg);
	ev_init(&l->fence_w, on_fence);
	l->fence_w.data = l;
}

void lease_free(struct lease *l)
{
	ev_timer_stop(l->loop, &l->fence_w);
	free(l->seqs);
	free(l->tokens);
	free(l->pids);
	l->seqs = l->tokens = NULL;
	l->pids = NULL;
}

static bool renewable(const struct job *j)
{
	return j && j->reason != END_LOST;
}

bool lease_due(const struct lease *l, double now)
{
	for (int i = 0; i < l->n_slots; i++)
		if (renewable(l->slots[i]))
			return now >= l->next_beat;
	return false;
}

bool lease_renewing(const struct lease *l)
{
	for (int i = 0; i < l->n_slots; i++)
		if (renewable(l->slots[i]))
			return true;
	return false;
}

void lease_hurry(struct lease *l, double now)
{
	/* The last renewal was sent one interval before next_beat (0: one is
	 * due at once anyway). */
	double t = l->next_beat - l->interval + LEASE_HURRY_GAP;

	if (!lease_renewing(l) || l->next_beat <= 0)
		return;
	if (t < now)
		t = now;
	if (t < l->next_beat)
		l->next_beat = t;
}

double lease_next_in(const struct lease *l, double now)
{
	return l->next_beat - now;
}

bool lease_build(struct lease *l, const struct kyu_config *cfg, struct strbuf *sb)
{
	l->n = 0;
	for (int i = 0; i < l->n_slots; i++) {
		struct job *j = l->slots[i];
		if (!renewable(j))
			continue;
		l->seqs[l->n] = j->seq;
		l->tokens[l->n] = j->token;
		l->pids[l->n++] = j->pid_reported ? 0 : (int)j->pid;
	}
	l->next_beat = mono_now() + l->interval;
	if (l->n == 0)
		return false;
	store_heartbeat_build(sb, cfg, l->seqs, l->tokens, l->pids, l->n);
	return true;
}

/* The running job of row seq under claim token, if it is still here. */
static struct job *find(struct lease *l, uint64_t seq, uint64_t token)
{
	for (int i = 0; i < l->n_slots; i++) {
		struct job *j = l->slots[i];
		if (j && j->seq == seq && j->token == token)
			return j;
	}
	return NULL;
}

struct reply_ctx {
	struct lease *l;
	bool *seen;
	double sent_at;
};

static void on_row(void *arg, uint64_t seq, uint64_t owner, const char *status)
{
	struct reply_ctx *ctx = arg;
	struct lease *l = ctx->l;
	struct job *j = NULL;
	int k;

	for (k = 0; k < l->n; k++)
		if (l->seqs[k] == seq)
			break;
	if (k == l->n)
		return;
	ctx->seen[k] = true;
	j = find(l, seq, l->tokens[k]);
	if (!j || j->reason == END_LOST)
		return;
	if (owner != j->token) {
		log_warn("job %s: lease lost to another claim; killing attempt %u", j->id,
			 j->attempts);
		l->lost++;
		job_kill(j, END_LOST);
	} else if (strcmp(status, "cancelled") == 0) {
		if (j->reason != END_CANCEL) {
			log_info("job %s: cancelled; terminating its process group", j->id);
			l->cancelled++;
		}
		job_terminate(j, END_CANCEL);
	} else if (strcmp(status, "running") == 0) {
		if (ctx->sent_at > j->renewed)
			j->renewed = ctx->sent_at;
		j->pid_reported = true;
	}
}

/* A reading of the server's clock; renew: the leases were not just
 * renewed by the statement that read it. */
static void clock_read(struct lease *l, int64_t db_us, double sent, double got, bool renew)
{
	double since = l->clock.known ? got - l->clock.got : 0;
	int64_t step = dbclock_read(&l->clock, db_us, sent, got);

	if (step == 0)
		return;
	l->clock_steps++;
	/* The leases of the jobs here are what another claim may take over:
	 * renewed on the new clock before the next claim (the renewal comes
	 * first in the statement order). A heartbeat's reading is from the
	 * statement that renewed them. */
	if (renew && lease_renewing(l) && (l->next_beat <= 0 || l->next_beat > got))
		l->next_beat = got;
	log_warn("the database clock moved %+.1f s in %.1f s (by this worker's clock): %s"
		 "no expired lease is taken over for the next %d s (one lease), so that a job "
		 "whose worker is alive is not run twice because of the step",
		 (double)step / 1e6, since,
		 renew && lease_renewing(l) ? "renewing leases now; " : "", l->lease);
}

void lease_clock_read(struct lease *l, int64_t db_us, double sent, double got)
{
	clock_read(l, db_us, sent, got, true);
}

int64_t lease_takeover_before(const struct lease *l, double now)
{
	/* Not before a whole lease of steady readings: an owner renews or
	 * fences within a lease of its last renewal, so any lease that is
	 * expired then because of a step (one seen, or one before the first
	 * reading) has been renewed on the new clock or belongs to nobody. */
	if (!l->clock.known || dbclock_steady_for(&l->clock, now) < l->lease)
		return 0;
	/* The server's own NOW(6) still bounds the claim (due <= NOW(6)):
	 * this bound only keeps a step since the last reading from expiring
	 * leases that our clock says are still running. */
	return dbclock_predict_us(&l->clock, now) + (int64_t)(LEASE_TAKEOVER_SLACK * 1e6);
}

void lease_reply(struct lease *l, const struct db_reply *r)
{
	bool *seen = xcalloc((size_t)l->n + 1, sizeof(*seen));
	struct reply_ctx ctx = { l, seen, r->sent_at };
	int64_t db_us = store_heartbeat_now(r);

	if (db_us > 0)
		clock_read(l, db_us, r->sent_at, mono_now(), false);
	if (store_heartbeat_read(r, on_row, &ctx) >= 0) {
		for (int k = 0; k < l->n; k++) {
			struct job *j = seen[k] ? NULL : find(l, l->seqs[k], l->tokens[k]);
			if (j && j->reason != END_LOST) {
				log_warn("job %s: its row is gone; killing attempt %u", j->id,
					 j->attempts);
				l->lost++;
				job_kill(j, END_LOST);
			}
		}
	}
	free(seen);
	l->n = 0;
	lease_check(l);
}

void lease_check(struct lease *l)
{
	double now = mono_now(), limit = l->lease - l->margin, next = 0;

	ev_timer_stop(l->loop, &l->fence_w);
	if (l->margin == 0)
		return;
	for (int i = 0; i < l->n_slots; i++) {
		struct job *j = l->slots[i];
		if (!j || j->reason == END_LOST || j->fenced)
			continue;
		if (now < j->renewed + limit) {
			if (next == 0 || j->renewed + limit < next)
				next = j->renewed + limit;
			continue;
		}
		log_warn("job %s: lease not renewed for %.1f s (lease %d s, fence_margin %d s); "
			 "killing it before another worker may take it over",
			 j->id, now - j->renewed, l->lease, l->margin);
		l->fenced++;
		j->fenced = true;
		/* No grace: the deadline is already the safety margin. */
		job_kill(j, END_FENCE);
	}
	if (next > 0) {
		ev_timer_set(&l->fence_w, next - now, 0.);
		ev_timer_start(l->loop, &l->fence_w);
	}
}

/* ---- the heartbeat's row ------------------------------------------------- */

bool lease_beat_due(void *lease, struct stmt_turn *t)
{
	return lease_due(lease, t->now);
}

bool lease_beat_send(void *lease, struct stmt_turn *t, struct strbuf *sb)
{
	struct lease *l = lease;
	double now = mono_now();

	(void)t;
	/* Due at next_beat; 0 means "at once" (after a reconnect). */
	l->beat_due = l->next_beat > 0 && l->next_beat < now ? l->next_beat : now;
	return lease_build(l, l->cfg, sb);
}

double lease_beat_when(void *lease, double now)
{
	const struct lease *l = lease;

	(void)now;
	return lease_renewing(l) ? l->next_beat : 0;
}

void lease_beat_reply(void *lease, const struct db_reply *r)
{
	struct lease *l = lease;

	if (r->fail != DB_OK)
		conn_failed(l->conn, r, "extending leases");
	else
		board_observe(l->bw, BH_HEARTBEAT, mono_now() - l->beat_due);
	lease_reply(l, r);
	if ((r->fail == DB_RETRY || r->fail == DB_BUSY) && l->next_beat > mono_now() + BEAT_RETRY)
		l->next_beat = mono_now() + BEAT_RETRY;
}
