/* A job's environment, and its program (domain_env.h). */
#include "domain_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Where a job's programs are looked up when its section sets no PATH. */
#define SAFE_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

static const char *env_get(char *const *env, const char *name)
{
	size_t nl = strlen(name);

	for (; env && *env; env++)
		if (strncmp(*env, name, nl) == 0 && (*env)[nl] == '=')
			return *env + nl + 1;
	return NULL;
}

static void env_put(char ***env, const char *name, const char *value)
{
	size_t nl = strlen(name), n = strv_len(*env);
	char *entry = xmalloc(nl + strlen(value) + 2);

	sprintf(entry, "%s=%s", name, value);
	for (size_t i = 0; i < n; i++) {
		if (strncmp((*env)[i], name, nl) == 0 && (*env)[i][nl] == '=') {
			free((*env)[i]);
			(*env)[i] = entry;
			return;
		}
	}
	strv_push(env, entry);
}

char **domain_env_base(char *const *pass, char *const *set, const struct domain_ids *ids,
		       char *const *kyud_env)
{
	char **env = xcalloc(1, sizeof(char *));
	const char *lang = env_get(kyud_env, "LANG");

	env_put(&env, "PATH", SAFE_PATH);
	env_put(&env, "HOME", ids->home);
	env_put(&env, "USER", ids->name);
	env_put(&env, "LOGNAME", ids->name);
	env_put(&env, "SHELL", ids->shell);
	if (lang)
		env_put(&env, "LANG", lang);
	for (char *const *p = pass; p && *p; p++) {
		const char *v = env_get(kyud_env, *p);
		if (v)
			env_put(&env, *p, v);
	}
	for (char *const *p = set; p && *p; p++) {
		char *name = xstrdup(*p);
		char *eq = strchr(name, '=');
		*eq = '\0';
		env_put(&env, name, eq + 1);
		free(name);
	}
	return env;
}

void domain_env_free(char **env)
{
	strv_free(env);
}

static bool is_executable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

char *domain_env_find_program(const char *name, char *const *env)
{
	const char *path = env_get(env, "PATH");
	bool denied = false;

	if (strchr(name, '/'))
		return xstrdup(name);
	if (!path)
		path = SAFE_PATH;
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		size_t dl = (size_t)(e - p);
		/* Only absolute entries: an empty or relative one would be read
		 * here, in the worker's directory, and run in the job's. */
		if (dl > 0 && *p == '/') {
			char *cand = xmalloc(dl + strlen(name) + 2);
			sprintf(cand, "%.*s/%s", (int)dl, p, name);
			if (is_executable_file(cand))
				return cand;
			denied |= access(cand, F_OK) == 0;
			free(cand);
		}
		if (!*e)
			break;
		p = e;
	}
	errno = denied ? EACCES : ENOENT;
	return NULL;
}
