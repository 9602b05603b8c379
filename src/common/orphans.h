/* Processes a job left behind after double-forking into a new session are
 * re-parented to the worker (a child subreaper), and the jobs of a worker that
 * died are re-parented to the supervisor (a subreaper too); this finds and
 * kills them.
 *
 * Which job such a process came from cannot be known: its parents are gone,
 * and its session and process group are its own after setsid. What it says
 * about itself (KYU_JOB_ID and KYU_ATTEMPT in its environment) it may have
 * chosen, to be kept alive as another, running job's. So the rule rests
 * only on what the kernel records and a job cannot change: its process
 * group (a process can join no group of another session, and each job has
 * a session of its own), and the time it started (/proc/PID/stat), which
 * is never before that of the job it descends from. When a job ends, every
 * re-parented process outside the running jobs' process groups that
 * started no earlier than that job is killed: each could be the job's, and
 * its own job's end kills it at the latest. One that started before (the
 * daemon of a longer job that is still running) is kept. Used by kyud:
 * its workers (src/worker) and its supervisor (src/kyud). */
#ifndef KYU_ORPHANS_H
#define KYU_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Kill (SIGKILL) every child of this process for which keep(arg, pid) is
 * false, with its process group unless that is the caller's. Returns the
 * number of children killed, or -errno if the list is unreadable. */
int orphans_kill(bool (*keep)(void *arg, pid_t pid), void *arg);

/* When pid started, in clock ticks since boot (/proc/PID/stat's field
 * 22): 0, or -errno if unreadable (the process is gone, or no /proc). */
int orphans_start_ticks(pid_t pid, unsigned long long *ticks);

/* Now, on the clock of orphans_start_ticks (CLOCK_BOOTTIME in clock
 * ticks, rounded down as the kernel rounds a process's start): a process
 * started after this call has a start time >= the value. Read from the
 * vDSO, without a system call; 0 if the clock cannot be read. */
unsigned long long orphans_now_ticks(void);

#endif
