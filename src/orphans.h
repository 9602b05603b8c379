/* Processes a job left behind after double-forking into a new session are
 * re-parented to the worker (a child subreaper), and the jobs of a worker that
 * died are re-parented to the supervisor (a subreaper too); this finds and
 * kills them. */
#ifndef KYU_ORPHANS_H
#define KYU_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Kill (SIGKILL) every child of this process for which keep(arg, pid) is
 * false, with its process group unless that is the caller's. Returns the
 * number of children killed, or -errno if the list is unreadable. */
int orphans_kill(bool (*keep)(void *arg, pid_t pid), void *arg);

/* The job attempt pid was started for: KYU_JOB_ID (copied into id) and
 * KYU_ATTEMPT of the environment it was started with (/proc/PID/environ,
 * read once); -1 if either is absent or the environment is unreadable. */
int orphans_attempt_of(pid_t pid, char *id, size_t idlen, unsigned long *attempt);

#endif
