/* Start one job process (proc_start, without waiting for its exec; or
 * proc_spawn, which waits): own session and process group, stdin
 * /dev/null, stdout and stderr into a pipe, JOB_STATUS_FD the write end of
 * a second one (the status channel, status.h), JOB_LIFE_FD its end of the
 * life line (proc_life_init), clean signal state, no other descriptors,
 * and the user, groups, umask, nice and resource limits of its queue's
 * protection domain (domain.h), all set before exec. */
#ifndef KYU_PROC_H
#define KYU_PROC_H

#include <signal.h>
#include <stddef.h>
#include <stdbool.h>
#include <sys/types.h>

#include "common/attr.h"
#include "common/domain.h"
#include "jobspec.h"

/* The life line: from this call on, every process group started here is
 * SIGKILLed by the kernel the moment this process is gone, however it
 * went (SIGKILL, the OOM killer, a crash), with nothing of ours left to
 * do it. Once, before the first start; a process that never calls it
 * starts jobs without one. Costs no system call of ours per job (five in
 * each child before its exec). -errno with a message in err when /proc
 * cannot give us a descriptor of our own pipe (then jobs start without
 * the line, as before). proc.c says how it works. */
KYU_MUSTCHECK int proc_life_init(char *err, size_t errlen);

/* What the child becomes before exec; each part is optional. */
struct proc_creds {
	const struct domain_ids *ids; /* switch when ids->switch_ids */
	int umask;                    /* -1: inherit */
	bool set_nice;
	int nice;
	const rlim_t *limit; /* DLIM_N values, used where limit_set */
	const bool *limit_set;
};

/* How long a child may take from its clone to its exec (s). */
#define PROC_EXEC_TIMEOUT 3.0

/* A child between its clone and its exec: the copy of what it reads and
 * the stack it runs on. */
struct proc_start;

/* Start a process for spec without waiting for its exec. path is the
 * program (spec->argv[0] looked up already: the child never searches
 * PATH); cr may be NULL; fallback, when not NULL, is the argv run instead
 * when path cannot be executed (the shell, for a command line run
 * directly: jobspec.h). On success *ret_pid is the child (also its
 * process group id, once it has its session), *ret_out the non-blocking
 * read end of its output pipe, *ret_status that of its status pipe and
 * *ret_start what proc_settle needs; nothing of spec, path, cwd, cr or
 * fallback is used after the return. On failure (no pipe, no process)
 * returns -errno with a message in err. */
KYU_MUSTCHECK int proc_start(const struct jobspec *spec, const char *path, const char *cwd,
			     const struct proc_creds *cr, const char *const *fallback,
			     struct proc_start **ret_start, pid_t *ret_pid, int *ret_out,
			     int *ret_status, char *err, size_t errlen);
/* Whether *sp's child has executed, without a system call: 1 not yet
 * (nothing changes); 0 it has (*sp is freed and NULL); -errno it failed
 * before (*sp is freed and NULL, the message in err, the process exits
 * by itself with 127 and is the caller's to reap). *exec_errno is that
 * errno when the program itself could not be executed (not the working
 * directory, a rule or the timeout), else 0. A child that has been
 * reaped is always settled. 0 for a NULL *sp. */
KYU_MUSTCHECK int proc_settle(struct proc_start **sp, int *exec_errno, char *err, size_t errlen);
/* When s's child must have executed (mono_now), else proc_start_kill. */
double proc_start_deadline(const struct proc_start *s);
/* SIGKILL s's child if it has not executed: proc_settle then reports the
 * timeout. */
void proc_start_kill(struct proc_start *s);
/* Wait (on the futex) until s's child has executed or exited, at most
 * until its deadline, and kill it then. */
void proc_start_wait(struct proc_start *s);

/* Close a descriptor of ours that the event loop may have watched: at
 * once, or when no start is pending any more (proc_settle), since until
 * then a child may hold a copy of it (proc.c says why that matters). */
void proc_close(int fd);

/* proc_start, proc_start_wait and proc_settle in one: returns once the
 * child has executed (0, as proc_start) or with the error of a child
 * that could not (reaped, its pipes closed; *exec_errno as
 * proc_settle's). */
KYU_MUSTCHECK int proc_spawn(const struct jobspec *spec, const char *path, const char *cwd,
			     const struct proc_creds *cr, pid_t *ret_pid, int *ret_out,
			     int *ret_status, int *exec_errno, char *err, size_t errlen);

/* The signals the kernel delivers to the thread that caused them, whatever
 * its mask (a fault, abort): blocking them is no protection. */
bool proc_synchronous_signal(int sig);

/* For a process that keeps every other signal blocked for good (the
 * worker), called once its dispositions are final. When no such signal
 * has a handler, proc_spawn from then on neither blocks signals around
 * its clone (no handler of ours can run in the child, which shares our
 * memory until exec) nor resets in the child more than the dispositions
 * that exec would keep (SIG_IGN), and this returns true. Otherwise
 * nothing changes, *handled gets the signals that have a handler, and
 * false is returned. */
bool proc_settle_signals(sigset_t *handled);

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
