/* kyu web: the dashboard is a program of its own, kyu-web (src/web/main.c),
 * so that only it loads the HTTP library. See cmd_web.h. */
#include "cmd_web.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"

/* Replace this process with kyu-web: the one beside this executable (a
 * build tree), else the installed one; $KYU_WEB_EXE overrides both. Its
 * arguments: -c FILE when kyu was given one, then the command's own. */
int cmd_web(const char *path, int argc, char **argv)
{
	char exe[PATH_MAX + 16], self[PATH_MAX];
	const char *env = getenv("KYU_WEB_EXE");
	char **args = xcalloc((size_t)argc + 4, sizeof(*args));
	ssize_t n;
	int i = 0, r;

	if (env && *env) {
		snprintf(exe, sizeof(exe), "%s", env);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		self[n > 0 ? n : 0] = '\0';
		if (n > 0 && strrchr(self, '/'))
			*strrchr(self, '/') = '\0';
		snprintf(exe, sizeof(exe), "%s/kyu-web", self);
		if (n <= 0 || access(exe, X_OK) < 0)
			snprintf(exe, sizeof(exe), "%s", KYU_WEB_EXE);
	}
	args[i++] = exe;
	if (path && *path) {
		args[i++] = xstrdup("-c");
		args[i++] = xstrdup(path);
	}
	for (int j = 1; j < argc; j++)
		args[i++] = argv[j];
	args[i] = NULL;
	execv(exe, args);
	r = errno;
	fprintf(stderr, "kyu: web: cannot run %s: %s\n", exe, strerror(r));
	if (path && *path) {
		free(args[1]);
		free(args[2]);
	}
	free(args);
	return r == ENOENT ? 127 : 126;
}
