/* Keeping the database password to the process that needs it: out of its
 * core dumps and out of reach of other processes of the same user. Cut
 * out because it is process state, not configuration: the programs that
 * read a password from a file call it themselves, first thing (kyud's
 * supervisor, kyu-web), and the workers, which kyud's jobs must be able
 * to reach through /proc, do not. */
#ifndef KYU_SECRET_H
#define KYU_SECRET_H

#include <stddef.h>
#include "attr.h"

/* Make this process non-dumpable (prctl PR_SET_DUMPABLE 0): no core dump
 * is written when it crashes, and processes of the same user can no longer
 * ptrace it or read its /proc/PID/mem, environ, fd or maps. That covers
 * every copy of the password (the file's bytes, the configuration's,
 * Connector/C's own in its handle) where marking buffers MADV_DONTDUMP
 * would miss those the libraries make. An execve starts the new program
 * dumpable again: a child kyud execs is not affected. Returns 0, or -1
 * with why in err. */
KYU_MUSTCHECK int secret_no_dump(char *err, size_t errlen);

/* Overwrite the NUL-terminated s, then free it; NULL does nothing. For
 * copies of the password, so that freed memory does not keep it. */
void secret_free(char *s);

#endif
