/* Which queues a worker claims from, and how many rows from each. See
 * queues.h. */
#include "queues.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

/* A rated queue that came back short is asked again after one emission
 * interval, within these bounds: often enough to use its rate, never a
 * busy loop. */
#define RETRY_MIN 0.05
#define RETRY_MAX 5.0

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct qentry *)a)->name, ((const struct qentry *)b)->name);
}

const struct qentry *queues_find(const struct queues *d, const char *name)
{
	struct qentry key = { .name = (char *)(uintptr_t)name };

	if (d->n == 0)
		return NULL;
	return bsearch(&key, d->e, (size_t)d->n, sizeof(*d->e), by_name);
}

/* t, or an earlier moment the last read knows something may change: the
 * first running lease's expiry, a rated queue's window opening. */
static double earliest_known(const struct qentry *e, double now, double t)
{
	if (e->expiry_at > now && e->expiry_at < t)
		t = e->expiry_at;
	if (e->rated && e->open_at > now && e->open_at < t)
		t = e->open_at;
	return t;
}

static bool eligible(const struct qentry *e, double now)
{
	if (e->paused || e->due_at > now)
		return false;
	return !e->drained || (e->retry_at > 0 && e->retry_at <= now);
}

static long long cell_ll(const struct db_result *r, size_t row, unsigned col, long long dflt)
{
	const char *s = db_cell(r, row, col);
	return s ? strtoll(s, NULL, 10) : dflt;
}

int queues_read(const struct queues *d, const struct db_result *r, double now, struct queues *out)
{
	struct qentry *e;
	double vmin = 0;
	bool any = false;

	if (r->n_cols != 10)
		return -1;
	/* The floor for queues that were not competing: the smallest pass of
	 * those that were. */
	for (int i = 0; i < d->n; i++) {
		if (!eligible(&d->e[i], now))
			continue;
		if (!any || d->e[i].pass < vmin)
			vmin = d->e[i].pass;
		any = true;
	}
	e = xcalloc(r->n_rows ? r->n_rows : 1, sizeof(*e));
	out->arrived = 0;
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *name = db_cell(r, i, 0);
		const struct qentry *old;
		long long max_running, rate_limit, rate_period, weight, key_max;

		if (!name)
			name = "";
		e[i].name = xstrdup(name);
		e[i].due_at = now + (double)cell_ll(r, i, 1, 0) / 1e6;
		e[i].paused = cell_ll(r, i, 2, 0) != 0;
		max_running = cell_ll(r, i, 3, -1);
		rate_limit = cell_ll(r, i, 4, -1);
		rate_period = cell_ll(r, i, 5, -1);
		weight = cell_ll(r, i, 6, 1);
		e[i].rated = rate_limit >= 0;
		e[i].restricted = max_running >= 0 || e[i].rated;
		if (e[i].rated)
			e[i].interval = rate_limit > 0
						? (double)(rate_period > 0 ? rate_period : 1) /
							  (double)rate_limit
						: RETRY_MAX;
		e[i].weight = weight >= 1 ? (unsigned)(weight > 1000000 ? 1000000 : weight) : 1;
		if (db_cell(r, i, 7))
			e[i].expiry_at = now + (double)cell_ll(r, i, 7, 0) / 1e6;
		if (db_cell(r, i, 8))
			e[i].open_at = now + (double)cell_ll(r, i, 8, 0) / 1e6;
		key_max = cell_ll(r, i, 9, 1);
		e[i].key_max = key_max > 1 ? (unsigned)(key_max > 1000 ? 1000 : key_max) : 1;
		/* A queue that was competing keeps its pass (none is below
		 * vmin); one that was not starts level with the others, just
		 * ahead of them, so that its first chunk is not behind a tie. */
		old = queues_find(d, e[i].name);
		e[i].pass = old && old->pass > vmin ? old->pass : vmin - 1e-9;
		/* Still drained if it was, until its retry moment or a wake-up
		 * (queues_undrain): a read says nothing of whether its blocked
		 * rows can go now, and asking again at once would find nothing
		 * again. Forgetting it here made two blocked queues take turns
		 * in claim after claim, each read of the directory releasing the
		 * other: a busy loop of round trips. The moments the new read
		 * knows may be earlier. Only while it still has due rows: one
		 * whose next row is due later (a retry's backoff) is simply due
		 * then. */
		if (old && old->drained && old->retry_at > now && e[i].due_at <= now) {
			e[i].drained = true;
			e[i].retry_at = earliest_known(&e[i], now, old->retry_at);
		}
		/* Not one that was drained: its claim found nothing to take,
		 * and asking at once again would find nothing again. */
		if (e[i].due_at <= now && !e[i].paused &&
		    (!old || old->due_at > now || old->paused))
			out->arrived++;
	}
	qsort(e, r->n_rows, sizeof(*e), by_name);
	out->e = e;
	out->n = (int)r->n_rows;
	out->read_at = now;
	/* Keep the passes small: only their differences matter. */
	for (int i = 0; i < out->n; i++)
		out->e[i].pass -= vmin;
	return 0;
}

void queues_free(struct queues *d)
{
	for (int i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d->e);
	d->e = NULL;
	d->n = 0;
}

int queues_plan(struct queues *d, double now, int n, struct qpart *parts)
{
	int idx[QUEUES_MAX_PARTS];
	int n_parts = 0, left = n;

	/* Chunks, not single rows: each chunk is one queue's UPDATE (four
	 * statements for a restricted queue), so a claim touches a few
	 * queues with useful batches and the passes keep the shares exact
	 * over successive claims. */
	while (left > 0) {
		int best = -1, best_part = -1, chunk;
		double best_pass = 0;

		for (int i = 0; i < d->n; i++) {
			const struct qentry *e = &d->e[i];
			int p = -1;
			double pass;

			if (!eligible(e, now))
				continue;
			for (int j = 0; j < n_parts; j++)
				if (idx[j] == i)
					p = j;
			if (p < 0 && n_parts == QUEUES_MAX_PARTS)
				continue;
			pass = e->pass + (p >= 0 ? parts[p].n : 0) / (double)e->weight;
			if (best < 0 || pass < best_pass) {
				best = i;
				best_part = p;
				best_pass = pass;
			}
		}
		if (best < 0)
			break;
		if (best_part < 0) {
			best_part = n_parts++;
			idx[best_part] = best;
			parts[best_part] = (struct qpart){
				.name = d->e[best].name,
				.restricted = d->e[best].restricted,
				.rated = d->e[best].rated,
				.reclaim = d->e[best].expiry_at > 0 && d->e[best].expiry_at <= now,
				.keyed = d->e[best].key_max > 1,
			};
		}
		chunk = QUEUES_QUANTUM * (int)(d->e[best].weight > 64 ? 64 : d->e[best].weight);
		if (chunk > left)
			chunk = left;
		parts[best_part].n += chunk;
		left -= chunk;
	}
	return n_parts;
}

void queues_claimed(struct queues *d, const struct qpart *parts, int n_parts, const int *got,
		    double claimed_at, double now, double blocked_retry)
{
	for (int i = 0; i < n_parts; i++) {
		struct qentry *e;

		if (!parts[i].name)
			continue;
		e = (struct qentry *)(uintptr_t)queues_find(d, parts[i].name);
		if (!e)
			continue;
		e->pass += got[i] / (double)e->weight;
		if (got[i] >= parts[i].n)
			continue;
		/* A queue without limits whose earliest row became due after
		 * this claim was sent, or is due later (the directory read in
		 * its round trip, after it, says so) came back short because
		 * nothing more was due: it is due at that row's moment, not a
		 * retry later (a retry's backoff ends, rows fall due while the
		 * claim runs). Rows due before the claim that it did not take
		 * are blocked (a busy key, a lock): drained. */
		if (!e->restricted && e->due_at > claimed_at)
			continue;
		/* A keyed claim starts at most one row per key (each row's slot
		 * is chosen from what ran before the statement): the next claim
		 * fills the next slots, and drains it once it gets nothing. */
		if (parts[i].keyed && got[i] > 0)
			continue;
		e->drained = true;
		/* Its due rows wait for a running job to end or for its rate
		 * window to open. An end is announced (this daemon claims again
		 * after it, and peers.c tells the others), but a job whose
		 * worker or daemon died frees its slot or key only when its
		 * lease expires, which nobody announces: look again at that
		 * moment (the directory read with the claim knows it), at the
		 * latest one lease later. A rated queue's window opens when its
		 * oldest counted start leaves it (the read knows that too); with
		 * no start counted, it was short for another reason: one
		 * emission interval. */
		e->retry_at = earliest_known(e, now, now + blocked_retry);
		/* A window not full (no opening known): one emission interval. */
		if (e->rated && !(e->open_at > now)) {
			double t = e->interval < RETRY_MIN ? RETRY_MIN : e->interval;
			t = now + (t > RETRY_MAX ? RETRY_MAX : t);
			if (t < e->retry_at)
				e->retry_at = t;
		}
	}
}

int64_t queues_next_due_us(const struct queues *d, double now)
{
	double best = 0;
	bool any = false;

	for (int i = 0; i < d->n; i++) {
		const struct qentry *e = &d->e[i];
		double t = e->due_at;

		if (e->paused)
			continue;
		if (e->drained) {
			if (e->retry_at <= 0)
				continue;
			if (e->retry_at > t)
				t = e->retry_at;
		}
		if (!any || t < best)
			best = t;
		any = true;
	}
	if (!any)
		return INT64_MAX;
	return (int64_t)((best - now) * 1e6);
}

bool queues_blocked_backlog(const struct queues *d, double now)
{
	for (int i = 0; i < d->n; i++)
		if (d->e[i].due_at <= now && (d->e[i].paused || d->e[i].drained))
			return true;
	return false;
}

bool queues_restricted_due(const struct queues *d, double now)
{
	for (int i = 0; i < d->n; i++)
		if (d->e[i].restricted && eligible(&d->e[i], now))
			return true;
	return false;
}

void queues_undrain(struct queues *d)
{
	for (int i = 0; i < d->n; i++)
		d->e[i].drained = false;
}

bool queues_any_due(const struct queues *d, double now)
{
	for (int i = 0; i < d->n; i++)
		if (d->e[i].due_at <= now)
			return true;
	return false;
}

bool queues_special(const struct qentry *e)
{
	return e->paused || e->restricted || e->key_max > 1;
}

int queues_count_plain(const struct queues *d, double now)
{
	int n = 0;

	for (int i = 0; i < d->n; i++)
		if (!queues_special(&d->e[i]) && eligible(&d->e[i], now))
			n++;
	return n;
}

void queues_keep_special(struct queues *d)
{
	int k = 0;

	for (int i = 0; i < d->n; i++) {
		if (queues_special(&d->e[i]))
			d->e[k++] = d->e[i];
		else
			free(d->e[i].name);
	}
	d->n = k;
}
