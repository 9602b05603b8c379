/* libFuzzer target: jobspec_build on a row's command, argv and env columns,
 * which whoever can INSERT into kyu_jobs writes. The input is the three
 * columns joined by NUL bytes: COMMAND \0 ARGV_JSON \0 ENV_JSON (a column
 * left out or empty is NULL, but for command, which stays ""). Each input
 * runs with [job] direct_exec on and off. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/jobspec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* True if envp holds exactly one NAME=value entry for name. */
static bool env_has(char **envp, const char *name, const char *value)
{
	size_t nl = strlen(name);
	int found = 0;

	for (char **e = envp; *e; e++)
		if (strncmp(*e, name, nl) == 0 && (*e)[nl] == '=' && strcmp(*e + nl + 1, value) == 0)
			found++;
	return found == 1;
}

static void check(const struct jobspec_input *in)
{
	struct jobspec spec;
	char err[512];

	err[0] = '\0';
	if (jobspec_build(in, &spec, err, sizeof(err)) < 0) {
		if (!err[0] || spec.argv || spec.envp)
			__builtin_trap();
		return;
	}
	if (!spec.argv || !spec.argv[0] || !spec.argv[0][0] || !spec.envp)
		__builtin_trap();
	/* The job cannot pretend to be another one. */
	if (!env_has(spec.envp, "KYU_JOB_ID", in->job_id) || !env_has(spec.envp, "KYU_QUEUE", in->queue) ||
	    !env_has(spec.envp, "KYU_ATTEMPT", "3"))
		__builtin_trap();
	for (char **e = spec.envp; *e; e++)
		if (!strchr(*e, '=') || **e == '=')
			__builtin_trap();
	if (spec.direct && (!in->direct_exec || in->argv_json ||
			    spec.use_path != (strchr(spec.argv[0], '/') == NULL)))
		__builtin_trap();
	if (spec.direct) {
		jobspec_use_shell(in, &spec);
		if (spec.direct || spec.use_path || strcmp(spec.argv[0], in->shell) != 0 ||
		    strcmp(spec.argv[1], "-c") != 0 || strcmp(spec.argv[2], in->command) != 0 ||
		    spec.argv[3] || !env_has(spec.envp, "KYU_JOB_ID", in->job_id))
			__builtin_trap();
	}
	jobspec_free(&spec);
	if (spec.argv || spec.envp)
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* One copy with a terminator after each column. */
	char *buf = malloc(size + 1), *part[3] = { NULL, NULL, NULL }, *p, *end;
	char *base_env[] = { "PATH=/usr/bin:/bin", "HOME=/", "KYU_JOB_ID=outer", NULL };
	struct jobspec_input in = {
		.shell = "/bin/sh",
		.base_env = base_env,
		.job_id = "job-1",
		.queue = "default",
		.attempt = 3,
	};

	if (!buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	end = buf + size;
	p = buf;
	for (int i = 0; i < 3 && p <= end; i++) {
		char *nul = i < 2 ? memchr(p, '\0', (size_t)(end - p)) : NULL;
		part[i] = p;
		if (!nul)
			break;
		p = nul + 1;
	}
	in.command = part[0];
	in.argv_json = part[1] && *part[1] ? part[1] : NULL;
	in.env_json = part[2] && *part[2] ? part[2] : NULL;
	in.direct_exec = true;
	check(&in);
	in.direct_exec = false;
	check(&in);
	free(buf);
	return 0;
}
