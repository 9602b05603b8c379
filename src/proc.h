/* Start one job process (proc_spawn): own session and process group, stdin /dev/null,
 * stdout and stderr into a pipe, clean signal state, no other descriptors. */
#ifndef KYU_PROC_H
#define KYU_PROC_H

#include <stddef.h>
#include <sys/types.h>

#include "jobspec.h"

/* On success *ret_pid is the child (also its process group id) and
 * *ret_out the non-blocking read end of its output pipe. On failure
 * returns -errno with a message in err naming what failed; *exec_errno is
 * that errno when the program itself could not be executed (not the
 * working directory or the pipe), else 0. */
int proc_spawn(const struct jobspec *spec, const char *cwd, pid_t *ret_pid, int *ret_out, int *exec_errno,
	      char *err, size_t errlen);

/* Signal a job's whole process group; ESRCH (already gone) is not an error. */
void proc_kill_group(pid_t pgid, int sig);

#endif
