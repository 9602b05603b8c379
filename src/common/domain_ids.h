/* Who a job runs as: a user and group looked up by name (getpwnam_r,
 * getgrnam_r, getgrouplist), with the user's home, shell and
 * supplementary groups. Kept apart from domain.c, which parses the sections,
 * because this is the name service, which knows nothing of sections and
 * blocks on it (it runs in the supervisor at start-up and reload, and in
 * a worker before each spawn, never in a spawned child). domain.h
 * includes this header (domain_resolve resolves a section's user); the
 * worker (src/worker) uses it, through domain.h. */
#ifndef KYU_DOMAIN_IDS_H
#define KYU_DOMAIN_IDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "attr.h"

/* Who a job runs as, resolved just before it starts. */
struct domain_ids {
	bool switch_ids; /* false: kyud's own user and groups, nothing to set */
	uid_t uid;
	gid_t gid;
	gid_t *groups; /* supplementary groups, initgroups-style */
	int n_groups;
	char *name, *home, *shell;
	/* home was a directory at the lookup: the fallback to / for users
	 * without one is decided then, not with a stat per job. */
	bool home_is_dir;
};

/* Resolve user (NULL: kyud's own, by its uid) and group (NULL: the
 * user's); switch_ids when either is given. On failure returns -errno
 * with why in err ("user 'bob' does not exist"): -ENOENT for a user or
 * group that does not exist, else the name service's trouble (-EAGAIN
 * when the groups could not be listed). */
KYU_MUSTCHECK int domain_ids_resolve(const char *user, const char *group, struct domain_ids *ids,
				     char *err, size_t errlen);
void domain_ids_free(struct domain_ids *ids);

#endif
