/* A claimed row until its job starts: at once if a slot is free, else in the
 * prefetch ring (prefetch.c) until one frees up, or given back. See held.h. */
#include "held.h"

#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "outcome.h"
#include "store.h"

void held_init(struct held *h, const struct kyu_config *cfg, struct jobs *jobs,
	       struct results *results, struct parent *parent, const struct queues *dir,
	       struct board_worker *bw)
{
	h->cfg = cfg;
	h->jobs = jobs;
	h->results = results;
	h->parent = parent;
	h->dir = dir;
	h->bw = bw;
	prefetch_init(&h->ring, cfg->slots, cfg->prefetch, cfg->lease, cfg->fence_margin);
}

void held_free(struct held *h)
{
	prefetch_free(&h->ring);
}

static void give_back(struct held *h, struct claimed *c)
{
	struct outcome_out o = { .record = true, .outcome = OUT_RELEASE, .exit_code = -1 };

	prefetch_gave_back(&h->ring);
	board_count(h->bw, c->queue, BJ_GIVEN_BACK);
	results_add(h->results, c->seq, c->token, c->downstream, 0, &o, NULL);
	store_claimed_clear(c);
	h->n_given_back++;
}

void held_give_back_all(struct held *h, const char *why)
{
	struct claimed c;
	int n = 0;

	while (prefetch_pop(&h->ring, &c)) {
		give_back(h, &c);
		n++;
	}
	if (n)
		log_info("gave back %d claimed job(s) that had not started: %s", n, why);
}

/* Whether cfg serves queue, as the claim's filter compares (utf8mb4_bin
 * pads with spaces; NULL is in no list). */
static bool serves(const struct kyu_config *cfg, const char *queue)
{
	size_t lq;

	if (cfg->n_queues == 0)
		return true;
	if (!queue)
		return false;
	for (lq = strlen(queue); lq > 0 && queue[lq - 1] == ' '; lq--)
		;
	for (int i = 0; i < cfg->n_queues; i++) {
		size_t l;
		for (l = strlen(cfg->queues[i]); l > 0 && cfg->queues[i][l - 1] == ' '; l--)
			;
		if (l == lq && memcmp(cfg->queues[i], queue, l) == 0)
			return true;
	}
	return false;
}

/* A row claimed under an older configuration (held, or a claim in flight
 * during a reload) of a queue the new one no longer serves has no section
 * to run under any more: it goes back for a daemon that serves it. */
static bool dropped_by_reload(const struct held *h, const struct claimed *c)
{
	return c->claimed_at < h->reloaded_at && !serves(h->cfg, c->queue);
}

/* c goes to jobs.c, which takes it (there is a free slot). */
static void start(struct held *h, struct claimed *c)
{
	const struct qentry *q;

	if (dropped_by_reload(h, c)) {
		log_info("gave back job %s of queue %s: the configuration no longer serves it",
			 c->id, c->queue ? c->queue : "(none)");
		give_back(h, c);
		return;
	}
	q = c->queue ? queues_find(h->dir, c->queue) : NULL;
	jobs_start(h->jobs, c, c->key != NULL || (q && q->restricted));
}

void held_take(struct held *h, struct claimed *c)
{
	/* Draining: every row goes back. Claims never ask for more than
	 * there is room for; giving a row back is always safe. */
	if (!h->jobs->draining && h->ring.n == 0 && h->jobs->n_running < h->cfg->slots)
		start(h, c);
	else if (h->jobs->draining || !prefetch_push(&h->ring, c))
		give_back(h, c);
}

void held_start(struct held *h)
{
	struct jobs *js = h->jobs;
	double now = mono_now();
	struct claimed c;
	int expired = 0;

	while (h->ring.n > 0 && now >= prefetch_expiry(&h->ring)) {
		prefetch_pop(&h->ring, &c);
		give_back(h, &c);
		expired++;
	}
	if (expired)
		log_info(
			"gave back %d claimed job(s) not started within %.1f s: every slot stayed busy",
			expired, h->ring.hold_limit);
	if (h->ring.n == 0)
		return;
	/* A job that has exited frees its slot now, not after the held jobs
	 * started before its SIGCHLD is handled: short jobs end while the
	 * next ones start (one wait4 that finds nothing costs a
	 * microsecond). */
	jobs_reap(js);
	if (js->n_running < h->cfg->slots)
		(void)parent_alive(h->parent);
	/* At most a slot's worth of starts per call: with short jobs each
	 * start may free a slot again, and the loop's other work (replies,
	 * output, fencing) must not wait for the whole prefetch ring.
	 * pump.c's tick brings the loop straight back for the rest. */
	for (int n = 0; n < h->cfg->slots && js->n_running < h->cfg->slots && !js->draining &&
			prefetch_pop(&h->ring, &c);
	     n++) {
		start(h, &c);
		jobs_reap(js);
	}
}

bool held_startable(const struct held *h)
{
	return h->ring.n > 0 && h->jobs->n_running < h->cfg->slots && !h->jobs->draining;
}

double held_expiry(const struct held *h)
{
	return h->ring.n > 0 ? prefetch_expiry(&h->ring) : 0;
}

void held_reload(struct held *h)
{
	/* Held rows of queues no longer served go back now rather than wait
	 * for a slot; the others keep their order. */
	struct claimed c;
	int n = h->ring.n, back = 0;

	h->reloaded_at = mono_now();
	while (n-- > 0 && prefetch_pop(&h->ring, &c)) {
		if (dropped_by_reload(h, &c)) {
			give_back(h, &c);
			back++;
		} else if (!prefetch_push(&h->ring, &c)) {
			give_back(h, &c);
		}
	}
	if (back)
		log_info("gave back %d claimed job(s) of queues the configuration no longer serves",
			 back);
}
