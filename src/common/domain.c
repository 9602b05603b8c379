/* Protection domains: the sections and their rules (domain.h). */
#include "domain.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"
#include "util.h"

enum dtype { DT_NAME, DT_NAMES, DT_PAIR, DT_PATH, DT_OCTAL, DT_LIMIT, DT_INT, DT_PATHS, DT_BOOL };

static const struct dkey {
	const char *name;
	enum dtype type;
	int64_t min, max; /* DT_INT; DT_LIMIT: whether sizes take suffixes (max 1) */
} dkeys[DK_N] = {
	[DK_USER] = { "user", DT_NAME, 0, 0 },
	[DK_GROUP] = { "group", DT_NAME, 0, 0 },
	[DK_ENV_PASS] = { "env_pass", DT_NAMES, 0, 0 },
	[DK_ENV] = { "env", DT_PAIR, 0, 0 },
	[DK_CWD] = { "cwd", DT_PATH, 0, 0 },
	[DK_UMASK] = { "umask", DT_OCTAL, 0, 0777 },
	[DK_LIMIT_CPU] = { "limit_cpu", DT_LIMIT, 0, 0 },
	[DK_LIMIT_AS] = { "limit_as", DT_LIMIT, 0, 1 },
	[DK_LIMIT_NOFILE] = { "limit_nofile", DT_LIMIT, 0, 0 },
	[DK_LIMIT_NPROC] = { "limit_nproc", DT_LIMIT, 0, 0 },
	[DK_LIMIT_FSIZE] = { "limit_fsize", DT_LIMIT, 0, 1 },
	[DK_LIMIT_CORE] = { "limit_core", DT_LIMIT, 0, 1 },
	[DK_NICE] = { "nice", DT_INT, -20, 19 },
	[DK_ALLOW] = { "allow", DT_PATHS, 0, 0 },
	[DK_ALLOW_SHELL] = { "allow_shell", DT_BOOL, 0, 0 },
	[DK_ROW_ENV] = { "row_env", DT_BOOL, 0, 0 },
	/* The ranges of the [job] keys of the same names. */
	[DK_TIME_LIMIT] = { "time_limit", DT_INT, 0, 31536000 },
	[DK_MAX_ATTEMPTS] = { "max_attempts", DT_INT, 1, 1000000 },
	[DK_OUTPUT_LIMIT] = { "output_limit", DT_INT, 0, INT64_C(4) * 1024 * 1024 },
	[DK_KILL_GRACE] = { "kill_grace", DT_INT, 0, 3600 },
};

static const int limit_resource[DLIM_N] = {
	[DLIM_CPU] = RLIMIT_CPU,     [DLIM_AS] = RLIMIT_AS,       [DLIM_NOFILE] = RLIMIT_NOFILE,
	[DLIM_NPROC] = RLIMIT_NPROC, [DLIM_FSIZE] = RLIMIT_FSIZE, [DLIM_CORE] = RLIMIT_CORE,
};

int domain_limit_resource(int i)
{
	return limit_resource[i];
}

const char *domain_key_name(enum domain_key k)
{
	return dkeys[k].name;
}

/* ---- parsing ---- */

static bool env_name_ok(const char *s, size_t len)
{
	if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* A user or group name as useradd accepts them: no spaces, no ':' or ','. */
static bool account_name_ok(const char *s)
{
	if (!*s || strlen(s) > 64 || *s == '-')
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s == ':' || *s == ',' || *s == '/' || *s == 0x7f)
			return false;
	return true;
}

/* An absolute path with no "." or ".." component: what it names does not
 * depend on how a prefix test reads it. A trailing '/' is dropped. */
static const char *clean_path(const char *v, char **out)
{
	size_t len = strlen(v);

	if (v[0] != '/')
		return "must be an absolute path";
	if (len >= PATH_MAX)
		return "longer than PATH_MAX";
	for (const char *p = v; *p;) {
		const char *e;
		size_t n;
		while (*p == '/')
			p++;
		e = strchrnul(p, '/');
		n = (size_t)(e - p);
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return "must not contain . or .. components";
		p = e;
	}
	*out = xstrdup(v);
	while (len > 1 && (*out)[len - 1] == '/')
		(*out)[--len] = '\0';
	return NULL;
}

/* "unlimited", or a whole number, with K, M, G or T (powers of 1024) for
 * sizes. */
static const char *parse_limit(const char *v, bool sizes, rlim_t *out)
{
	char *end;
	unsigned long long n, mult = 1;

	if (strcmp(v, "unlimited") == 0 || strcmp(v, "infinity") == 0) {
		*out = RLIM_INFINITY;
		return NULL;
	}
	if (*v < '0' || *v > '9')
		return sizes ? "expected a number of bytes (K, M, G, T suffixes) or unlimited"
			     : "expected a whole number or unlimited";
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return "out of range";
	if (*end && sizes && !end[1]) {
		const char *units = "KMGT";
		int c = *end >= 'a' && *end <= 'z' ? *end - 'a' + 'A' : *end;
		const char *u = strchr(units, c);
		if (!u)
			return "unknown size suffix (expected K, M, G or T)";
		for (long i = 0; i <= u - units; i++)
			mult *= 1024;
		end++;
	}
	if (*end)
		return sizes ? "expected a number of bytes (K, M, G, T suffixes) or unlimited"
			     : "expected a whole number or unlimited";
	if (n > (unsigned long long)(RLIM_INFINITY - 1) / mult)
		return "too large (say unlimited)";
	*out = (rlim_t)(n * mult);
	return NULL;
}

static const char *split_into(const char *v, char ***vec, bool paths)
{
	char *raw = xstrdup(v), *save = NULL;
	const char *why = NULL;

	strv_free(*vec);
	*vec = NULL;
	for (char *tok = strtok_r(raw, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		char *item = NULL;
		if (paths) {
			why = clean_path(tok, &item);
		} else if (!env_name_ok(tok, strlen(tok))) {
			why = "expected variable names (letters, digits, _), separated by commas or spaces";
		} else {
			item = xstrdup(tok);
		}
		if (why)
			break;
		strv_push(vec, item);
	}
	free(raw);
	if (!why && !*vec)
		why = paths ? "expected absolute paths, separated by commas or spaces"
			    : "expected variable names, separated by commas or spaces";
	return why;
}

static struct domain *find_or_add(struct domain **ds, int *n, const char *qname, int line)
{
	bool star = strcmp(qname, "*") == 0;
	struct domain *d;

	for (int i = 0; i < *n; i++)
		if (star ? !(*ds)[i].queue : ((*ds)[i].queue && strcmp((*ds)[i].queue, qname) == 0))
			return &(*ds)[i];
	*ds = xrealloc(*ds, (size_t)(*n + 1) * sizeof(**ds));
	d = &(*ds)[(*n)++];
	memset(d, 0, sizeof(*d));
	d->queue = star ? NULL : xstrdup(qname);
	d->section = xmalloc(strlen(qname) + 7);
	sprintf(d->section, "queue.%s", qname);
	d->line = line;
	d->umask = -1;
	d->time_limit = d->max_attempts = d->output_limit = d->kill_grace = -1;
	return d;
}

static bool queue_name_ok(const char *q)
{
	long chars;

	if (strcmp(q, "*") == 0)
		return true;
	/* The column is VARCHAR(64) of utf8mb4: 64 characters, and a name
	 * it cannot hold matches no row. */
	chars = text_name_chars(q);
	return chars >= 1 && chars <= 64;
}

const char *domain_set(struct domain **ds, int *n, const char *qname, const char *name,
		       const char *value, int line)
{
	const struct dkey *k = NULL;
	struct domain *d;
	int64_t v;
	int idx;

	if (!queue_name_ok(qname))
		return "a queue section is [queue.NAME] (NAME: 1 to 64 characters of UTF-8, no control "
		       "characters) or [queue.*]";
	for (idx = 0; idx < DK_N; idx++)
		if (strcmp(dkeys[idx].name, name) == 0) {
			k = &dkeys[idx];
			break;
		}
	if (!k)
		return "unknown key";
	d = find_or_add(ds, n, qname, line);
	switch (k->type) {
	case DT_NAME:
		if (!account_name_ok(value))
			return "expected a user or group name";
		if (idx == DK_USER) {
			free(d->user);
			d->user = xstrdup(value);
		} else {
			free(d->group);
			d->group = xstrdup(value);
		}
		break;
	case DT_NAMES: {
		const char *why = split_into(value, &d->env_pass, false);
		if (why)
			return why;
		break;
	}
	case DT_PAIR: {
		const char *eq = strchr(value, '=');
		/* Repeated: each line adds one variable. */
		if (!eq || !env_name_ok(value, (size_t)(eq - value)))
			return "expected NAME=VALUE (repeat the key for more variables)";
		strv_push(&d->env, xstrdup(value));
		break;
	}
	case DT_PATH: {
		char *p = NULL;
		const char *why = clean_path(value, &p);
		if (why)
			return why;
		free(d->cwd);
		d->cwd = p;
		break;
	}
	case DT_OCTAL: {
		char *end;
		long m;
		errno = 0;
		m = strtol(value, &end, 8);
		if (!*value || *end || errno || m < 0 || m > k->max)
			return "expected an octal mode 0 to 0777, such as 027";
		d->umask = (int)m;
		break;
	}
	case DT_LIMIT: {
		int li = idx - DK_LIMIT_CPU;
		const char *why = parse_limit(value, k->max == 1, &d->limit[li]);
		if (why)
			return why;
		d->limit_set[li] = true;
		break;
	}
	case DT_INT: {
		int r = parse_i64(value, k->min, k->max, &v);
		static char range[64];
		if (r == -EINVAL)
			return "not a whole number";
		if (r < 0) {
			snprintf(range, sizeof(range), "out of range %lld..%lld", (long long)k->min,
				 (long long)k->max);
			return range;
		}
		if (idx == DK_NICE)
			d->nice = (int)v;
		else if (idx == DK_TIME_LIMIT)
			d->time_limit = (int)v;
		else if (idx == DK_MAX_ATTEMPTS)
			d->max_attempts = (int)v;
		else if (idx == DK_OUTPUT_LIMIT)
			d->output_limit = (int)v;
		else
			d->kill_grace = (int)v;
		break;
	}
	case DT_PATHS: {
		const char *why = split_into(value, &d->allow, true);
		if (why)
			return why;
		break;
	}
	case DT_BOOL: {
		bool b;
		if (parse_bool(value, &b) < 0)
			return "expected yes or no (or true, false, on, off, 1, 0)";
		if (idx == DK_ALLOW_SHELL)
			d->allow_shell = b;
		else
			d->row_env = b;
		break;
	}
	}
	d->key_line[idx] = line;
	return NULL;
}

void domain_finish(struct domain *ds, int n)
{
	for (int i = 0; i < n; i++) {
		struct domain *d = &ds[i];
		/* A shell line, or a row's LD_PRELOAD, runs anything: with an
		 * allow-list they are refused unless the section says otherwise. */
		if (!d->key_line[DK_ALLOW_SHELL])
			d->allow_shell = !d->allow;
		if (!d->key_line[DK_ROW_ENV])
			d->row_env = !d->allow;
	}
}

static void domain_free(struct domain *d)
{
	free(d->queue);
	free(d->section);
	free(d->user);
	free(d->group);
	strv_free(d->env_pass);
	strv_free(d->env);
	free(d->cwd);
	strv_free(d->allow);
}

void domain_free_all(struct domain *ds, int n)
{
	for (int i = 0; i < n; i++)
		domain_free(&ds[i]);
	free(ds);
}

/* Length without trailing spaces. */
static size_t padded_len(const char *s)
{
	size_t n = strlen(s);
	while (n > 0 && s[n - 1] == ' ')
		n--;
	return n;
}

/* The queue column's collation (utf8mb4_bin) pads with spaces: 'mail ' is
 * 'mail' to every statement (the served-queue filter, kyu_queues), and so
 * it must be to the section lookup too, or a row could slip past its
 * queue's section into [queue.*] or none. */
static bool same_queue(const char *a, const char *b)
{
	size_t la = padded_len(a), lb = padded_len(b);
	return la == lb && memcmp(a, b, la) == 0;
}

const struct domain *domain_for(const struct domain *ds, int n, const char *queue)
{
	const struct domain *star = NULL;

	for (int i = 0; i < n; i++) {
		if (!ds[i].queue)
			star = &ds[i];
		else if (queue && same_queue(ds[i].queue, queue))
			return &ds[i];
	}
	return star;
}

/* ---- the system ---- */

int domain_resolve(const struct domain *d, struct domain_ids *ids, char *err, size_t errlen)
{
	return domain_ids_resolve(d ? d->user : NULL, d ? d->group : NULL, ids, err, errlen);
}

struct check_ctx {
	const char *file;
	char *err;
	size_t errlen;
};

static int bad(struct check_ctx *c, const struct domain *d, enum domain_key k, const char *value,
	       const char *reason)
{
	snprintf(c->err, c->errlen, "%s:%d: [%s] %s = '%s': %s", c->file,
		 d->key_line[k] ? d->key_line[k] : d->line, d->section, dkeys[k].name, value,
		 reason);
	return -1;
}

static int check_one(struct check_ctx *c, const struct domain *d, const struct domain_privs *p)
{
	struct domain_ids ids;
	char why[256];
	bool root = p->uid == 0;

	if (domain_resolve(d, &ids, why, sizeof(why)) < 0) {
		bool grp = strncmp(why, "group", 5) == 0;
		return bad(c, d, grp ? DK_GROUP : DK_USER,
			   grp       ? d->group
			   : d->user ? d->user
				     : "",
			   why);
	}
	if (ids.uid == 0 && !root) {
		domain_ids_free(&ids);
		return bad(c, d, DK_USER, d->user ? d->user : "",
			   "kyud does not run as root: it cannot run jobs as root");
	}
	if (ids.uid == 0 && d->user && strcmp(d->user, "root") != 0) {
		domain_ids_free(&ids);
		return bad(c, d, DK_USER, d->user,
			   "is uid 0: say user = root where jobs are to run as root");
	}
	/* Root in a container, or under a bounding set, may lack these: ask
	 * the capabilities, not the uid. */
	if (ids.uid != p->uid && !p->setuid) {
		snprintf(
			why, sizeof(why),
			"kyud runs as uid %u without CAP_SETUID (and CAP_SETGID): it can run jobs only as "
			"itself (see kyud(8), Security)",
			(unsigned)p->uid);
		domain_ids_free(&ids);
		return bad(c, d, DK_USER, d->user ? d->user : "", why);
	}
	if (ids.switch_ids && !p->setgid) {
		domain_ids_free(&ids);
		return bad(
			c, d, d->group ? DK_GROUP : DK_USER, d->group ? d->group : d->user,
			"kyud holds no CAP_SETGID: it cannot set a job's groups (see kyud(8), Security)");
	}
	domain_ids_free(&ids);
	/* Root in a container may lack these two: ask the capabilities. */
	if (d->key_line[DK_NICE] && d->nice < p->nice && !p->sys_nice) {
		char val[16];
		snprintf(val, sizeof(val), "%d", d->nice);
		snprintf(why, sizeof(why),
			 "below kyud's own nice (%d): lowering it needs CAP_SYS_NICE", p->nice);
		return bad(c, d, DK_NICE, val, why);
	}
	for (int i = 0; i < DLIM_N; i++) {
		struct rlimit cur;
		if (!d->limit_set[i] || p->sys_resource)
			continue;
		if (getrlimit(limit_resource[i], &cur) == 0 && cur.rlim_max != RLIM_INFINITY &&
		    (d->limit[i] == RLIM_INFINITY || d->limit[i] > cur.rlim_max)) {
			snprintf(
				why, sizeof(why),
				"above kyud's own hard limit (%llu): raising it needs CAP_SYS_RESOURCE",
				(unsigned long long)cur.rlim_max);
			char val[32];
			if (d->limit[i] == RLIM_INFINITY)
				snprintf(val, sizeof(val), "unlimited");
			else
				snprintf(val, sizeof(val), "%llu", (unsigned long long)d->limit[i]);
			return bad(c, d, (enum domain_key)(DK_LIMIT_CPU + i), val, why);
		}
	}
	return 0;
}

/* Does every queue kyud serves have a section of its own? */
static bool all_served_have_sections(const struct domain *ds, int n, char *const *queues,
				     int n_queues)
{
	if (n_queues == 0)
		return false;
	for (int i = 0; i < n_queues; i++) {
		const struct domain *d = domain_for(ds, n, queues[i]);
		if (!d || !d->queue)
			return false;
	}
	return true;
}

int domain_check(const struct domain *ds, int n, char *const *queues, int n_queues,
		 const struct domain_privs *p, const char *file, char *err, size_t errlen)
{
	struct check_ctx c = { file, err, errlen };
	bool star = false;

	for (int i = 0; i < n; i++) {
		const struct domain *d = &ds[i];
		star |= !d->queue;
		if (p->uid == 0 && !d->user)
			return bad(
				&c, d, DK_USER, "",
				"kyud runs as root, so this queue's jobs would run as root: set user "
				"(user = root if that is meant)");
		if (check_one(&c, d, p) < 0)
			return -1;
	}
	if (p->uid == 0 && !star && !all_served_have_sections(ds, n, queues, n_queues)) {
		snprintf(
			err, errlen,
			"%s: kyud runs as root and there is no [queue.*] section: jobs of queues without "
			"a [queue.NAME] section would run as root; add [queue.*] with user = NAME (user = "
			"root if that is meant)",
			file);
		return -1;
	}
	return 0;
}

/* ---- before each spawn ---- */

char **domain_base_env(const struct domain *d, const struct domain_ids *ids, char *const *kyud_env)
{
	return domain_env_base(d ? d->env_pass : NULL, d ? d->env : NULL, ids, kyud_env);
}

/* Is path under prefix, component-wise ("/opt/a" holds "/opt/a/x", not
 * "/opt/ab")? Both are free of "." and ".." components. */
static bool under(const char *path, const char *prefix)
{
	size_t pl = strlen(prefix);

	if (strcmp(prefix, "/") == 0)
		return path[0] == '/';
	return strncmp(path, prefix, pl) == 0 && (path[pl] == '\0' || path[pl] == '/');
}

int domain_check_row(const struct domain *d, const char *queue, bool shell_row, bool has_env,
		     const char *path, char *err, size_t errlen)
{
	char *clean = NULL;

	if (!d)
		return 0;
	if (shell_row && !d->allow_shell) {
		snprintf(err, errlen,
			 "queue %s: rule allow_shell: shell command rows are refused in this queue "
			 "(submit argv instead)",
			 queue);
		return -1;
	}
	if (has_env && !d->row_env) {
		snprintf(err, errlen,
			 "queue %s: rule row_env: a row's env is refused in this queue", queue);
		return -1;
	}
	if (shell_row || !d->allow)
		return 0;
	if (!path || clean_path(path, &clean)) {
		snprintf(
			err, errlen,
			"queue %s: rule allow: the program %s is not an absolute path without . or .. "
			"components",
			queue, path ? path : "(none)");
		return -1;
	}
	free(clean);
	for (char **a = d->allow; *a; a++)
		if (under(path, *a))
			return 0;
	snprintf(err, errlen, "queue %s: rule allow: %s is not under an allowed path", queue, path);
	return -1;
}
