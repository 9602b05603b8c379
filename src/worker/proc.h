/* Start one job process (proc_spawn): own session and process group, stdin /dev/null,
 * stdout and stderr into a pipe, JOB_STATUS_FD the write end of a second
 * one (the status channel, status.h), clean signal state, no other descriptors,
 * and the user, groups, umask, nice and resource limits of its queue's
 * protection domain (domain.h), all set before exec. */
#ifndef KYU_PROC_H
#define KYU_PROC_H

#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/domain.h"
#include "jobspec.h"

/* What the child becomes before exec; each part is optional. */
struct proc_creds {
	const struct domain_ids *ids; /* switch when ids->switch_ids */
	int umask;                    /* -1: inherit */
	bool set_nice;
	int nice;
	const rlim_t *limit; /* DLIM_N values, used where limit_set */
	const bool *limit_set;
};

/* path is the program to execute (spec->argv[0] looked up already: the
 * child never searches PATH); cr may be NULL. On success *ret_pid is the
 * child (also its process group id), *ret_out the non-blocking read end of
 * its output pipe and *ret_status that of its status pipe. On failure
 * returns -errno with a message in err naming what failed; *exec_errno is
 * that errno when the program itself could not be executed (not the
 * working directory or the pipe), else 0. */
int proc_spawn(const struct jobspec *spec, const char *path, const char *cwd,
	       const struct proc_creds *cr, pid_t *ret_pid, int *ret_out, int *ret_status, int *exec_errno,
	       char *err, size_t errlen);

/* Whether a start that failed with err (proc_spawn's -r, a lookup's
 * errno) is the machine's trouble, which may pass (out of processes,
 * descriptors or memory, a limit_nproc the user is over for now, a
 * spawn that timed out on a stalled file system), rather than the job's,
 * which will not (no such file, user or directory, permission denied,
 * a rule that cannot be applied). */
bool proc_temporary(int err);

/* Signal a job's whole process group; ESRCH (already gone) is not an error. */
void proc_kill_group(pid_t pgid, int sig);

#endif
