/* Whether a job's command line needs a shell at all, and its words when it
 * does not. Most lines are a program and plain arguments; running those
 * directly saves a shell start per job, as Perl's and Ruby's system() and
 * GNU make do. Pure logic, no processes; used by jobspec for [job]
 * direct_exec.
 *
 * A line is plain, and is split on blanks (space and tab), when:
 *  - it has at least one word, and every byte is a blank, one of
 *    A-Z a-z 0-9 _ - . / , : + @ % = or a non-ASCII byte (>= 0x80);
 *  - its first word holds no '=' (an assignment: FOO=bar cmd) and does not
 *    start with '%' (bash reads "%1" as "fg %1");
 *  - no word starts with '=' (zsh expands "=cmd" to a path);
 *  - its first word is no builtin or reserved word of POSIX sh, dash or
 *    bash: a shell runs its own "true", "echo", "kill", "test" or "printf"
 *    rather than the program of that name, and "exec", "cd" or "time"
 *    mean nothing outside a shell.
 * Anything else needs the shell: quotes, backslash, $ ` ~ { } < > | & ; * ?
 * [ ] # ( ) ! ^, newlines and other control characters included. The rule
 * lists what is allowed rather than what is forbidden so that whatever
 * was not thought of goes to the shell: a wrong "needs a shell" costs a
 * shell start, a wrong "plain" changes what the job does.
 *
 * The rules are those of POSIX sh and bash; [job] shell set to anything
 * else (or to a wrapper that does more than run the line) wants
 * [job] direct_exec = no. */
#ifndef KYU_CMDLINE_H
#define KYU_CMDLINE_H

#include "common/attr.h"

/* Returns 1 if line is plain, with *argv_out a NULL-terminated vector of
 * its words, each word and the vector malloc'd (strv_free, common/util.h).
 * Returns 0 if line needs a shell, with *argv_out NULL. Never fails
 * otherwise: allocation failure aborts, as everywhere. */
KYU_MUSTCHECK int cmdline_split(const char *line, char ***argv_out);

#endif
