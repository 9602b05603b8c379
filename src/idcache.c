#include "idcache.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static void copy_ids(struct domain_ids *to, const struct domain_ids *from)
{
	*to = *from;
	to->name = from->name ? xstrdup(from->name) : NULL;
	to->home = from->home ? xstrdup(from->home) : NULL;
	to->shell = from->shell ? xstrdup(from->shell) : NULL;
	to->groups = NULL;
	if (from->n_groups > 0) {
		to->groups = xcalloc((size_t)from->n_groups, sizeof(gid_t));
		memcpy(to->groups, from->groups, (size_t)from->n_groups * sizeof(gid_t));
	}
}

static struct idcache_entry *find(struct idcache *c, const struct domain *d)
{
	for (int i = 0; i < c->n; i++)
		if (c->e[i].d == d)
			return &c->e[i];
	return NULL;
}

int idcache_resolve(struct idcache *c, const struct domain *d, double now, struct domain_ids *ids, char *err,
		    size_t errlen)
{
	struct idcache_entry *e = find(c, d);
	struct domain_ids fresh;
	int r;

	if (e && now - e->at < IDCACHE_TTL && now >= e->at) {
		copy_ids(ids, &e->ids);
		return 0;
	}
	if ((r = domain_resolve(d, &fresh, err, errlen)) < 0) {
		/* Not kept: the next job asks the name service again. */
		if (e) {
			domain_ids_free(&e->ids);
			*e = c->e[--c->n];
		}
		memset(ids, 0, sizeof(*ids));
		return r;
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
	copy_ids(ids, &e->ids);
	return 0;
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
