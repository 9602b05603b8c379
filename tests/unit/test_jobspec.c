#include <stdlib.h>
#include <string.h>

#include "worker/jobspec.h"
#include "check.h"

static const char *env_get(char **envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

int main(void)
{
	char *base[] = { "PATH=/bin", "KYU_JOB_ID=spoofed", NULL };
	struct jobspec_input in = { .shell = "/bin/sh", .base_env = base, .job_id = "j1",
				    .queue = "q", .attempt = 2 };
	struct jobspec s;
	char err[256];

	/* Shell command. */
	in.command = "echo hi";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK_STR(s.argv[0], "/bin/sh");
	CHECK_STR(s.argv[1], "-c");
	CHECK_STR(s.argv[2], "echo hi");
	CHECK(s.argv[3] == NULL);
	CHECK_STR(env_get(s.envp, "PATH"), "/bin");
	CHECK_STR(env_get(s.envp, "KYU_JOB_ID"), "j1");
	CHECK_STR(env_get(s.envp, "KYU_QUEUE"), "q");
	CHECK_STR(env_get(s.envp, "KYU_ATTEMPT"), "2");
	CHECK(!s.direct);
	jobspec_free(&s);

	/* direct_exec: a plain line runs without the shell, with the same
	 * environment; PATH is searched only for a name without '/'. */
	in.direct_exec = true;
	in.command = "/srv/bin/report --day 2026-11-22";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK(s.direct);
	CHECK(!s.use_path);
	CHECK_STR(s.argv[0], "/srv/bin/report");
	CHECK_STR(s.argv[1], "--day");
	CHECK_STR(s.argv[2], "2026-11-22");
	CHECK(s.argv[3] == NULL);
	CHECK_STR(env_get(s.envp, "PATH"), "/bin");
	CHECK_STR(env_get(s.envp, "KYU_JOB_ID"), "j1");
	CHECK_STR(env_get(s.envp, "KYU_QUEUE"), "q");
	CHECK_STR(env_get(s.envp, "KYU_ATTEMPT"), "2");
	/* A failed spawn goes back to the shell, keeping the environment. */
	jobspec_use_shell(&in, &s);
	CHECK(!s.direct);
	CHECK(!s.use_path);
	CHECK_STR(s.argv[0], "/bin/sh");
	CHECK_STR(s.argv[1], "-c");
	CHECK_STR(s.argv[2], "/srv/bin/report --day 2026-11-22");
	CHECK(s.argv[3] == NULL);
	CHECK_STR(env_get(s.envp, "KYU_JOB_ID"), "j1");
	jobspec_free(&s);

	in.command = "  report\tx ";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK(s.direct);
	CHECK(s.use_path);
	CHECK_STR(s.argv[0], "report");
	CHECK_STR(s.argv[1], "x");
	CHECK(s.argv[2] == NULL);
	jobspec_free(&s);

	in.command = "./script.sh arg";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK(s.direct);
	CHECK(!s.use_path);
	jobspec_free(&s);

	/* Lines that need the shell get it, direct_exec or not. */
	const char *shell_lines[] = { "echo hi", "report > out", "FOO=1 report", "   " };
	for (size_t i = 0; i < sizeof(shell_lines) / sizeof(shell_lines[0]); i++) {
		in.command = shell_lines[i];
		CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
		CHECK(!s.direct);
		CHECK_STR(s.argv[0], "/bin/sh");
		CHECK_STR(s.argv[2], shell_lines[i]);
		jobspec_free(&s);
	}

	/* direct_exec off: every line goes to the shell, as before. */
	in.direct_exec = false;
	in.command = "/srv/bin/report --day 2026-11-22";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK(!s.direct);
	CHECK_STR(s.argv[0], "/bin/sh");
	CHECK_STR(s.argv[2], "/srv/bin/report --day 2026-11-22");
	/* Not direct: nothing to go back from. */
	jobspec_use_shell(&in, &s);
	CHECK_STR(s.argv[0], "/bin/sh");
	jobspec_free(&s);
	in.command = "echo hi";
	in.direct_exec = true;

	/* argv wins over command; awkward arguments pass through untouched. */
	in.argv_json = "[\"printf\", \"a b\", \"\", \"q\\\"uote\", \"\\u00fc\"]";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK_STR(s.argv[0], "printf");
	CHECK(s.use_path);
	CHECK_STR(s.argv[1], "a b");
	CHECK_STR(s.argv[2], "");
	CHECK_STR(s.argv[3], "q\"uote");
	CHECK_STR(s.argv[4], "\xc3\xbc");
	CHECK(s.argv[5] == NULL);
	CHECK(!s.direct); /* only command lines are direct */
	jobspec_use_shell(&in, &s);
	CHECK_STR(s.argv[0], "printf");
	jobspec_free(&s);

	/* env: added, overriding inherited, but never KYU_*. */
	in.argv_json = "[\"/bin/env\"]";
	in.env_json = "{\"PATH\": \"/x\", \"KYU_JOB_ID\": \"evil\", \"A\": \"1\"}";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) == 0);
	CHECK(!s.use_path);
	CHECK_STR(env_get(s.envp, "PATH"), "/x");
	CHECK_STR(env_get(s.envp, "A"), "1");
	CHECK_STR(env_get(s.envp, "KYU_JOB_ID"), "j1");
	jobspec_free(&s);

	/* Bad input names the column and the problem. */
	in.env_json = NULL;
	in.argv_json = "[\"a\",";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	CHECK(strncmp(err, "argv is not valid JSON", 22) == 0);
	in.argv_json = "[]";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	CHECK(strstr(err, "non-empty") != NULL);
	in.argv_json = "[\"a\", 1]";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	CHECK_STR(err, "argv[1] is not a string");
	in.argv_json = "{\"a\": 1}";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	in.argv_json = "[\"a\\u0000b\"]";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	in.argv_json = "[\"/bin/true\"]";
	in.env_json = "{\"A=B\": \"1\"}";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	CHECK(strstr(err, "invalid variable name") != NULL);
	in.env_json = "{\"A\": 1}";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	in.env_json = "[1]";
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	in.env_json = NULL;
	in.argv_json = NULL;
	in.command = NULL;
	CHECK(jobspec_build(&in, &s, err, sizeof(err)) < 0);
	CHECK_STR(err, "neither command nor argv is set");
	return check_done("jobspec");
}
