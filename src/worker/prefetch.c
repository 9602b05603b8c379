/* Claiming ahead of free slots (prefetch), and how far ahead. See
 * prefetch.h. */
#include "prefetch.h"

#include <stdlib.h>
#include <string.h>

#include "common/util.h"

void prefetch_init(struct prefetch *p, int slots, int max, int lease, int fence_margin)
{
	double l = (lease - fence_margin) / 2.0;

	memset(p, 0, sizeof(*p));
	p->slots = slots;
	p->max = max;
	p->cap = slots + max;
	p->ring = xcalloc((size_t)p->cap, sizeof(*p->ring));
	p->hold_limit = l < HOLD_LIMIT ? l : HOLD_LIMIT;
}

void prefetch_free(struct prefetch *p)
{
	struct claimed c;
	while (prefetch_pop(p, &c))
		store_claimed_clear(&c);
	free(p->ring);
	p->ring = NULL;
}

int prefetch_target(const struct prefetch *p)
{
	double t;

	if (p->max == 0 || p->avg_run <= 0)
		return 0;
	t = p->slots * HOLD_HORIZON / p->avg_run;
	return t >= p->max ? p->max : (int)t;
}

/* A worker held as many rows as its average run time said its slots would
 * start within HOLD_HORIZON; with more workers than cores (or a box busy
 * with other work) it could not start them that fast, held them past the
 * hold limit and gave them back, deadlocking with the finishes of other
 * workers (notes/DESIGN.md, "Prefetch"). The rate at which its last jobs
 * ended is the rate at which it can start held ones: holding no more than
 * that rate starts in half the hold limit, a held row starts in time
 * unless the rate halves. Like the average, the rate outlives a quiet
 * spell. */
int prefetch_room(const struct prefetch *p)
{
	int t = prefetch_target(p);
	double oldest, newest, r;

	if (t == 0 || p->n_ends < 2)
		return t;
	newest = p->end_at[(p->end_head + p->n_ends - 1) % RATE_ENDS];
	oldest = p->end_at[p->end_head];
	if (newest <= oldest)
		return t;
	r = (p->n_ends - 1) / (newest - oldest) * p->hold_limit / 2;
	return r < t ? (int)r : t;
}

void prefetch_ended(struct prefetch *p, double now)
{
	if (p->n_ends < RATE_ENDS) {
		p->end_at[p->n_ends++] = now;
		return;
	}
	p->end_at[p->end_head] = now;
	p->end_head = (p->end_head + 1) % RATE_ENDS;
}

void prefetch_ran(struct prefetch *p, double run)
{
	p->avg_run = p->avg_run > 0 ? p->avg_run + (run - p->avg_run) / 8 : run;
}

void prefetch_gave_back(struct prefetch *p)
{
	if (p->avg_run < p->hold_limit)
		p->avg_run = p->hold_limit;
}

bool prefetch_push(struct prefetch *p, struct claimed *c)
{
	if (p->n == p->cap)
		return false;
	p->ring[(p->head + p->n) % p->cap] = *c;
	p->n++;
	memset(c, 0, sizeof(*c));
	return true;
}

bool prefetch_pop(struct prefetch *p, struct claimed *out)
{
	if (p->n == 0)
		return false;
	*out = p->ring[p->head];
	memset(&p->ring[p->head], 0, sizeof(p->ring[0]));
	p->head = (p->head + 1) % p->cap;
	p->n--;
	return true;
}

double prefetch_expiry(const struct prefetch *p)
{
	return p->n ? p->ring[p->head].claimed_at + p->hold_limit : 0;
}
