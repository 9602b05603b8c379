/* Who a job runs as (domain_ids.h). */
#include "domain_ids.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* getpwnam_r and friends want a buffer; grow it until the entry fits. */
static int lookup_user(const char *name, uid_t uid, struct passwd *pw, char **buf)
{
	size_t size = 1024;
	struct passwd *res = NULL;
	int r;

	for (;;) {
		*buf = xrealloc(*buf, size);
		r = name ? getpwnam_r(name, pw, *buf, size, &res)
			 : getpwuid_r(uid, pw, *buf, size, &res);
		if (r != ERANGE || size > 1 << 20)
			break;
		size *= 2;
	}
	if (r)
		return -r;
	return res ? 0 : -ENOENT;
}

static int lookup_group(const char *name, gid_t *gid)
{
	size_t size = 1024;
	struct group gr, *res = NULL;
	char *buf = NULL;
	int r;

	for (;;) {
		buf = xrealloc(buf, size);
		r = getgrnam_r(name, &gr, buf, size, &res);
		if (r != ERANGE || size > 1 << 20)
			break;
		size *= 2;
	}
	if (!r && res)
		*gid = gr.gr_gid;
	free(buf);
	return r ? -r : res ? 0 : -ENOENT;
}

int domain_ids_resolve(const char *user, const char *group, struct domain_ids *ids, char *err,
		       size_t errlen)
{
	struct passwd pw;
	struct stat st;
	char *buf = NULL;
	int r;

	memset(ids, 0, sizeof(*ids));
	if (user)
		r = lookup_user(user, 0, &pw, &buf);
	else
		r = lookup_user(NULL, geteuid(), &pw, &buf);
	if (r < 0) {
		if (user)
			snprintf(err, errlen, "user '%s' %s", user,
				 r == -ENOENT ? "does not exist" : strerror(-r));
		else
			snprintf(err, errlen, "kyud's own user (uid %u) cannot be looked up: %s",
				 (unsigned)geteuid(), r == -ENOENT ? "no such user" : strerror(-r));
		goto fail;
	}
	ids->uid = pw.pw_uid;
	ids->gid = pw.pw_gid;
	ids->name = xstrdup(pw.pw_name);
	ids->home = xstrdup(pw.pw_dir && *pw.pw_dir ? pw.pw_dir : "/");
	ids->home_is_dir = stat(ids->home, &st) == 0 && S_ISDIR(st.st_mode);
	ids->shell = xstrdup(pw.pw_shell && *pw.pw_shell ? pw.pw_shell : "/bin/sh");
	if (group) {
		r = lookup_group(group, &ids->gid);
		if (r < 0) {
			snprintf(err, errlen, "group '%s' %s", group,
				 r == -ENOENT ? "does not exist" : strerror(-r));
			goto fail;
		}
	}
	ids->switch_ids = user || group;
	if (ids->switch_ids) {
		int ng = 16;
		for (;;) {
			int want = ng;
			ids->groups = xrealloc(ids->groups, (size_t)ng * sizeof(gid_t));
			if (getgrouplist(ids->name, ids->gid, ids->groups, &want) >= 0) {
				ids->n_groups = want;
				break;
			}
			if (want <= ng || want > 65536) {
				/* The user exists: the name service failed us. */
				r = -EAGAIN;
				snprintf(err, errlen, "the groups of user '%s' cannot be listed",
					 ids->name);
				goto fail;
			}
			ng = want;
		}
	}
	free(buf);
	return 0;
fail:
	free(buf);
	domain_ids_free(ids);
	return r < 0 ? r : -EINVAL;
}

void domain_ids_free(struct domain_ids *ids)
{
	free(ids->groups);
	free(ids->name);
	free(ids->home);
	free(ids->shell);
	memset(ids, 0, sizeof(*ids));
}
