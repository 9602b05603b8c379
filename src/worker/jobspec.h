/* What to execute for a job: argv and environment built from the row's
 * command / argv / env columns. Pure logic, no processes. */
#ifndef KYU_JOBSPEC_H
#define KYU_JOBSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include "common/attr.h"

/* The variables of a failure hook's job (store_finish.c), kyud's own. */
#define JOBSPEC_HOOK_ENV_PREFIX "KYU_FAILED_"

/* The descriptor a job writes its status lines to (kyu_jobs(7), "The
 * status channel"), named in its environment as KYU_STATUS_FD. */
#define JOB_STATUS_FD 3
/* The job's end of its worker's life line (proc.h, proc_life_init): the
 * kernel SIGKILLs the job's process group when the worker dies. */
#define JOB_LIFE_FD 4

struct jobspec {
	char **argv; /* NULL-terminated */
	/* NULL-terminated; its entries point into base_env (borrowed) or
	 * into own */
	char **envp;
	char **own;   /* the entries built for this job, NULL-terminated */
	int use_path; /* argv[0] is looked up in PATH (argv mode, direct lines) */
	/* The row's env sets a variable outside kyu's own KYU_FAILED_* (what
	 * a failure hook's job carries, written by kyud): what a queue's
	 * row_env rule refuses. */
	bool env_foreign;
	/* argv is a command line split by cmdline_split, run without the
	 * shell. The job must still end as the shell would have made it end,
	 * and a failed spawn is where the two differ: the shell turns it into
	 * an exit code (dash: 127 for ENOENT, ENOTDIR, ELOOP, ENAMETOOLONG,
	 * 126 for the rest) with a message in the output, and on ENOEXEC runs
	 * a file without "#!" as a shell script. So when spawning a direct
	 * spec fails, call jobspec_use_shell and spawn again: the shell then
	 * does exactly what it did before direct_exec (a bad cwd fails that
	 * spawn too, and is reported as now). */
	bool direct;
};

struct jobspec_input {
	const char *shell;     /* used for command */
	const char *command;   /* shell line, or NULL */
	bool direct_exec;      /* [job] direct_exec: run a plain command without
				 * the shell (cmdline.h says which are plain) */
	const char *argv_json; /* JSON array of strings, or NULL */
	const char *env_json;  /* JSON object of strings, or NULL */
	char *const *base_env; /* inherited environment: borrowed by the spec,
				 * so it must outlive it */
	const char *job_id;
	const char *queue;
	const char *after_json;  /* the upstreams' ids (kyu_jobs.after), or NULL */
	const char *traceparent; /* kyu_jobs.traceparent (checked at claim), or NULL */
	unsigned attempt;
};

/* Build spec from in. On bad input returns -1 with a message naming the
 * column and what is wrong in err. */
KYU_MUSTCHECK int jobspec_build(const struct jobspec_input *in, struct jobspec *spec, char *err,
				size_t errlen);
/* Turn a direct spec built from in back into "shell -c command", keeping
 * its environment; see struct jobspec's direct. Other specs are left
 * alone. */
void jobspec_use_shell(const struct jobspec_input *in, struct jobspec *spec);
void jobspec_free(struct jobspec *spec);

#endif
