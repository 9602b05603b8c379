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
