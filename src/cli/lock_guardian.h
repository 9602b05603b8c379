/* kyu lock's guardian: the process that starts the command and ends it,
 * with everything it started, when kyu says so or is gone. Apart from
 * lock.c because it is a process of its own, with its own signals and
 * descriptors, that shares no state with kyu lock's run loop (lock.c)
 * but two pipes; kyu lock is its only user.
 *
 * The lock's promise is one holder's work at a time, and the work is the
 * command with every process it starts. kyu alone cannot keep it: killed
 * (SIGKILL, the OOM killer), it can do nothing, while the command's
 * children run on into the next holder's lease. So the command is the
 * child of a small guardian process, forked by kyu, that outlives kyu:
 *
 *   kyu ── guardian (subreaper) ── command (a process group of its own)
 *
 * The guardian holds the read end of a pipe whose write end only kyu
 * has. When kyu closes it (the command ended, or its lease is lost) or
 * dies, the guardian SIGKILLs the command's process group, then every
 * process left below it: as a child subreaper it inherits whatever an
 * ended process leaves, a double-forked daemon in a session of its own
 * included, and kills each until it has no child left.
 *
 * It reaps the command only after that group kill: an unreaped command
 * keeps its pid, so the group id cannot name another group meanwhile
 * (kyu's own signals to the group rely on the same). It tells kyu the
 * command's pid, and its status when it ends, over a second pipe. */
#ifndef KYU_LOCK_GUARDIAN_H
#define KYU_LOCK_GUARDIAN_H

#include <signal.h>
#include <sys/types.h>

/* The command, and what it inherits of kyu lock. */
struct lock_guardian_cmd {
	const char *name;     /* the lock's, for messages */
	char **argv;          /* NULL-terminated */
	const sigset_t *mask; /* the signal mask kyu was started with */
	const int *dfl_sigs;  /* the signals kyu handles: default again in the command */
	int n_dfl_sigs;
	/* The command's status should the guardian be gone before it could
	 * run (nobody is left to read it). */
	int orphaned_status;
};

/* Start the guardian, which starts the command in a process group of its
 * own, with only stdin, stdout and stderr. Returns the guardian's pid,
 * the command's in *cmd, and in *life and *report kyu's ends of the pipes
 * (report non-blocking): closing life ends the command. -1 with errno
 * when either could not be started. */
pid_t lock_guardian_start(const struct lock_guardian_cmd *c, pid_t *cmd, int *life, int *report);

enum lock_guardian_news {
	LOCK_GUARDIAN_NONE,  /* nothing (more) to read for now */
	LOCK_GUARDIAN_ENDED, /* the command ended: its status in *status */
	LOCK_GUARDIAN_GONE,  /* the guardian closed its end: close report */
};
/* Read what the guardian said on report. The status is the command's
 * exit status, or 128 + N when signal N killed it. */
enum lock_guardian_news lock_guardian_read(int report, int *status);

#endif
