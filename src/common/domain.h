/* Protection domains: what a queue's jobs may do, from kyu.ini's
 * [queue.NAME] and [queue.*] sections (the user and groups they run as,
 * their environment, directory, umask, resource limits, nice, the
 * programs they may run), and the rules checked before each spawn. Used
 * by kyud: config.c parses the sections, the supervisor checks them
 * (config_check_system), a worker (src/worker) applies them.
 *
 * Parsing and the rules are pure. Looking up users and groups and
 * checking what this process may switch to touch the system: they run in
 * the supervisor at start-up and on reload (domain_check) and in a worker
 * before each spawn (domain_resolve), never in a spawned child.
 *
 * This module is the sections, their rules and every name callers have
 * always used; the work that needs no section is beside it, each header
 * included here: domain_ids.h (users and groups from the name service),
 * domain_privs.h (this process's capabilities) and domain_env.h (a job's
 * environment and program lookup). */
#ifndef KYU_DOMAIN_H
#define KYU_DOMAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "attr.h"
#include "domain_env.h"
#include "domain_ids.h"
#include "domain_privs.h"

/* The resource limits a section may set, in the order of their keys. */
enum { DLIM_CPU, DLIM_AS, DLIM_NOFILE, DLIM_NPROC, DLIM_FSIZE, DLIM_CORE, DLIM_N };

/* The keys of a queue section, in the order of the key table. */
enum domain_key {
	DK_USER,
	DK_GROUP,
	DK_ENV_PASS,
	DK_ENV,
	DK_CWD,
	DK_UMASK,
	DK_LIMIT_CPU,
	DK_LIMIT_AS,
	DK_LIMIT_NOFILE,
	DK_LIMIT_NPROC,
	DK_LIMIT_FSIZE,
	DK_LIMIT_CORE,
	DK_NICE,
	DK_ALLOW,
	DK_ALLOW_SHELL,
	DK_ROW_ENV,
	DK_TIME_LIMIT,
	DK_MAX_ATTEMPTS,
	DK_OUTPUT_LIMIT,
	DK_KILL_GRACE,
	DK_N
};

struct domain {
	char *queue;        /* NULL: the [queue.*] section */
	char *section;      /* "queue.NAME", for messages */
	int line;           /* of the section's first key */
	int key_line[DK_N]; /* 0: not set in the file */

	char *user, *group; /* NULL: kyud's own (group: the user's) */
	char **env_pass;    /* NULL-terminated names */
	char **env;         /* NULL-terminated NAME=VALUE */
	char *cwd;          /* NULL: the user's home */
	int umask;          /* -1: kyud's own */
	rlim_t limit[DLIM_N];
	bool limit_set[DLIM_N];
	int nice;     /* meaningful when key_line[DK_NICE] */
	char **allow; /* NULL-terminated absolute prefixes, or NULL: anything */
	bool allow_shell, row_env;
	/* -1: the [job] value */
	int time_limit, max_attempts, output_limit, kill_grace;
};

/* The resource of limit i (RLIMIT_CPU...) and its key's name. */
KYU_MUSTCHECK int domain_limit_resource(int i);
const char *domain_key_name(enum domain_key k);

/* Set key name of section (the part after "queue.", "*" for the default)
 * from value. Creates the domain in *ds (of *n) on its first key. Returns
 * NULL, or why the value (or the key, or the section's name) is wrong. */
const char *domain_set(struct domain **ds, int *n, const char *qname, const char *name,
		       const char *value, int line);
/* After the whole file: derive defaults that depend on other keys. */
void domain_finish(struct domain *ds, int n);
void domain_free_all(struct domain *ds, int n);

/* The section that applies to queue: its own, else [queue.*], else NULL
 * (kyud's own user, environment defaults, no limits, no allow-list).
 * Names compare as the queue column does: trailing spaces do not count. */
const struct domain *domain_for(const struct domain *ds, int n, const char *queue);

/* ---- the system: users, groups, privileges ---- */

/* Resolve d's user and group (d may be NULL). On failure returns -errno
 * with why in err ("user 'bob' does not exist"): -ENOENT for a user or
 * group that does not exist, else the name service's trouble (-EAGAIN
 * when the groups could not be listed). */
KYU_MUSTCHECK int domain_resolve(const struct domain *d, struct domain_ids *ids, char *err,
				 size_t errlen);

/* Check every section against the system and these privileges, and that
 * no queue would run jobs as root without saying so (queues: the queues
 * kyud serves, n_queues 0 for all). On the first problem returns -1 with
 * "FILE:LINE: [queue.NAME] key = 'value': reason" in err. */
KYU_MUSTCHECK int domain_check(const struct domain *ds, int n, char *const *queues, int n_queues,
			       const struct domain_privs *p, const char *file, char *err,
			       size_t errlen);

/* ---- before each spawn ---- */

/* The environment a job of d starts from, for ids: PATH, HOME, USER,
 * LOGNAME, SHELL, LANG (if kyud has it), env_pass, env. NULL-terminated,
 * for jobspec_input.base_env; free with domain_env_free. */
char **domain_base_env(const struct domain *d, const struct domain_ids *ids, char *const *kyud_env);

/* The rules a row must follow in d's queue, checked before it starts:
 * shell rows where allow_shell is off, the row's env where row_env is
 * off, and for argv rows the program (path, found already) outside the
 * allow-list. Returns 0, or -1 with "queue Q: rule: reason" in err. */
KYU_MUSTCHECK int domain_check_row(const struct domain *d, const char *queue, bool shell_row,
				   bool has_env, const char *path, char *err, size_t errlen);

#endif
