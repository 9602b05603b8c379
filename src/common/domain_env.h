/* A job's environment and the program it runs: the variables it starts
 * from, and a program looked up in that environment's PATH the way execvp
 * would, before the spawn. Kept apart from domain.c because these are string
 * vectors and the file system, the same for any section: domain.c hands
 * in the section's env_pass and env. domain.h includes this header; the
 * worker (src/worker) uses it, through domain.h. */
#ifndef KYU_DOMAIN_ENV_H
#define KYU_DOMAIN_ENV_H

#include "domain_ids.h"

/* The environment a job starts from, for ids: PATH (a safe one), HOME,
 * USER, LOGNAME, SHELL, LANG (if kyud_env has it), then each name of pass
 * that kyud_env has, then each NAME=VALUE of set (either may be NULL).
 * NULL-terminated; free with domain_env_free. */
char **domain_env_base(char *const *pass, char *const *set, const struct domain_ids *ids,
		       char *const *kyud_env);
void domain_env_free(char **env);

/* Find a program the way execvp would in env's PATH, skipping empty and
 * relative entries (a name with a '/' is taken as it is). Returns a
 * malloc'd path, or NULL with errno ENOENT or EACCES. */
char *domain_env_find_program(const char *name, char *const *env);

#endif
