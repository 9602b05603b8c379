/* Start one job process: own session and process group, stdin /dev/null,
 * stdout and stderr into a pipe, clean signal state, no other descriptors. */
#ifndef KYU_JOBPROC_H
#define KYU_JOBPROC_H

#include <stddef.h>
#include <sys/types.h>

#include "jobspec.h"

/* On success *ret_pid is the child (also its process group id) and
 * *ret_out the non-blocking read end of its output pipe. On failure
 * returns -errno with a message in err (e.g. "command not found"). */
int spawn_job(const struct jobspec *spec, const char *cwd, pid_t *ret_pid, int *ret_out, char *err,
	      size_t errlen);

/* Signal a job's whole process group; ESRCH (already gone) is not an error. */
void spawn_kill_group(pid_t pgid, int sig);

#endif
