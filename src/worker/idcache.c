#include "idcache.h"

#include <stdlib.h>

#include "common/util.h"

static struct idcache_entry *find(struct idcache *c, const struct domain *d)
{
	for (int i = 0; i < c->n; i++)
		if (c->e[i].d == d)
			return &c->e[i];
	return NULL;
}

const struct domain_ids *idcache_get(struct idcache *c, const struct domain *d, double now, int *r,
				     char *err, size_t errlen)
{
	struct idcache_entry *e = find(c, d);
	struct domain_ids fresh;

	*r = 0;
	if (e && now - e->at < IDCACHE_TTL && now >= e->at)
		return &e->ids;
	*r = domain_resolve(d, &fresh, err, errlen);
	if (*r < 0) {
		/* Not kept: the next job asks the name service again. */
		if (e) {
			domain_ids_free(&e->ids);
			*e = c->e[--c->n];
		}
		return NULL;
	}
	if (!e) {
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 4;
			c->e = xrealloc(c->e, (size_t)c->cap * sizeof(*c->e));
		}
		e = &c->e[c->n++];
		e->d = d;
	} else {
		domain_ids_free(&e->ids);
	}
	e->ids = fresh;
	e->at = now;
	return &e->ids;
}

void idcache_clear(struct idcache *c)
{
	for (int i = 0; i < c->n; i++)
		domain_ids_free(&c->e[i].ids);
	c->n = 0;
}

void idcache_free(struct idcache *c)
{
	idcache_clear(c);
	free(c->e);
	c->e = NULL;
	c->cap = 0;
}
