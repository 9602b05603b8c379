/* Who a queue's jobs run as, looked up at most once a second. See idcache.h. */
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
			domain_env_free(e->env);
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
		domain_env_free(e->env);
	}
	e->ids = fresh;
	e->at = now;
	e->env = NULL;
	return &e->ids;
}

char *const *idcache_env(struct idcache *c, const struct domain *d, const struct domain_ids *ids,
			 char *const *kyud_env)
{
	struct idcache_entry *e = find(c, d);
	struct idcache_self_env *s;

	if (e && ids == &e->ids) {
		if (!e->env)
			e->env = domain_base_env(d, ids, kyud_env);
		return e->env;
	}
	for (int i = 0; i < c->n_self; i++)
		if (c->s[i].d == d)
			return c->s[i].env;
	if (c->n_self == c->cap_self) {
		c->cap_self = c->cap_self ? 2 * c->cap_self : 4;
		c->s = xrealloc(c->s, (size_t)c->cap_self * sizeof(*c->s));
	}
	s = &c->s[c->n_self++];
	s->d = d;
	s->env = domain_base_env(d, ids, kyud_env);
	return s->env;
}

void idcache_clear(struct idcache *c)
{
	for (int i = 0; i < c->n; i++) {
		domain_ids_free(&c->e[i].ids);
		domain_env_free(c->e[i].env);
	}
	c->n = 0;
	for (int i = 0; i < c->n_self; i++)
		domain_env_free(c->s[i].env);
	c->n_self = 0;
}

void idcache_free(struct idcache *c)
{
	idcache_clear(c);
	free(c->e);
	c->e = NULL;
	c->cap = 0;
	free(c->s);
	c->s = NULL;
	c->cap_self = 0;
}
