/* Processes a job left behind after double-forking into a new session are
 * re-parented to the worker (a child subreaper); this finds and kills them. */
#ifndef KYU_ORPHANS_H
#define KYU_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Kill (SIGKILL) every child of this process for which keep(arg, pid) is
 * false. Returns the number killed, or -errno if the list is unreadable. */
int orphans_kill(bool (*keep)(void *arg, pid_t pid), void *arg);

/* The value of variable name in the environment pid was started with
 * (/proc/PID/environ), copied into buf; -1 if absent or unreadable. */
int orphans_getenv(pid_t pid, const char *name, char *buf, size_t len);

#endif
