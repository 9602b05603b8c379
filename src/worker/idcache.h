/* Who a queue's jobs run as, looked up at most once a second.
 *
 * A queue section that names a user or a group is resolved through the
 * name service (getpwnam_r, getgrouplist) before its jobs start. Done for
 * every job that read /etc/passwd and the whole of /etc/group each time (a
 * third of a worker's CPU per job with /bin/true jobs, notes/DESIGN.md) and,
 * with LDAP or sssd, a round trip to a directory. The answer changes
 * rarely, and when it does a second's delay is fine: entries are kept for
 * IDCACHE_TTL seconds of the monotonic clock. A failed lookup is not kept,
 * so the next job asks again (and gets the new answer as soon as there is
 * one). Entries are keyed by the section (struct domain) they were resolved
 * for; a reload, which replaces the sections, must clear the cache. */
#ifndef KYU_IDCACHE_H
#define KYU_IDCACHE_H

#include <stddef.h>

#include "common/domain.h"

#define IDCACHE_TTL 1.0

struct idcache_entry {
	const struct domain *d;
	struct domain_ids ids;
	double at;  /* when it was looked up (mono_now) */
	char **env; /* idcache_env's, built from these ids; NULL until asked */
};

/* The base environment of a section whose jobs run as kyud's own user,
 * which does not change until a reload. */
struct idcache_self_env {
	const struct domain *d;
	char **env;
};

struct idcache {
	struct idcache_entry *e;
	int n, cap;
	struct idcache_self_env *s;
	int n_self, cap_self;
};

/* d's ids, from the cache when its entry is younger than IDCACHE_TTL at
 * now, else from domain_resolve (whose result goes to *r, with its message
 * in err): NULL on failure. The entry stays valid until the next call. */
const struct domain_ids *idcache_get(struct idcache *c, const struct domain *d, double now, int *r,
				     char *err, size_t errlen);
/* The environment every job of section d (NULL: none) starts from
 * (domain_env_base), for ids: those idcache_get just returned for d, or
 * kyud's own, which never change. Built once per lookup and kept with it,
 * instead of once per job; valid until the next idcache_get or clear. */
char *const *idcache_env(struct idcache *c, const struct domain *d, const struct domain_ids *ids,
			 char *const *kyud_env);
/* Forget every entry (the sections they point to are about to go). */
void idcache_clear(struct idcache *c);
void idcache_free(struct idcache *c);

#endif
