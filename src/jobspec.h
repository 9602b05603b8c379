/* What to execute for a job: argv and environment built from the row's
 * command / argv / env columns. Pure logic, no processes. */
#ifndef KYU_JOBSPEC_H
#define KYU_JOBSPEC_H

#include <stddef.h>

struct jobspec {
	char **argv; /* NULL-terminated */
	char **envp; /* NULL-terminated */
	int use_path; /* argv[0] is looked up in PATH (argv mode) */
};

struct jobspec_input {
	const char *shell;      /* used for command */
	const char *command;    /* shell line, or NULL */
	const char *argv_json;  /* JSON array of strings, or NULL */
	const char *env_json;   /* JSON object of strings, or NULL */
	char *const *base_env;  /* inherited environment */
	const char *job_id;
	const char *queue;
	unsigned attempt;
};

/* Build spec from in. On bad input returns -1 with a message naming the
 * column and what is wrong in err. */
int jobspec_build(const struct jobspec_input *in, struct jobspec *spec, char *err, size_t errlen);
void jobspec_free(struct jobspec *spec);

#endif
