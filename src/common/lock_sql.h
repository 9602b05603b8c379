/* kyu lock's statements on the table kyu_locks, apart from lock.c because
 * they are pure text (they append to sb and quote with db_quote) while
 * the rest of kyu lock is processes and signals: the unit tests read the
 * very text that is sent, and kyu_jobs(7) prints the same statements for
 * programs that are not kyu. Used by kyu lock (lock.c), kyu locks
 * (src/cli) and the dashboard's list of locks (src/web); lock.h includes
 * this header.
 *
 * A lock is one or more rows (name, slot): slot 0 only for a plain lock,
 * slots 0..N-1 for a pool of N. A row is free when holder is NULL, held
 * while expires (UTC, the database's clock) is in the future, and free
 * again for anyone once it has passed. Holding is proved by holder, a
 * random token of the holder: every statement after the acquisition names
 * it, so a holder that lost its row never touches the next holder's. */
#ifndef KYU_LOCK_SQL_H
#define KYU_LOCK_SQL_H

#include <stdint.h>

#include "util.h"

/* One round trip of three statements: make the rows of slots 0..slots-1
 * that do not exist yet (free), take the lowest free or expired one for
 * token, then list the slots token holds. The acquisition is the UPDATE
 * alone, atomic on its own. */
void lock_sql_acquire(struct strbuf *sb, const char *name, unsigned slots, uint64_t token,
		      const char *host, long pid, unsigned ttl);
/* A new expiry, ttl seconds from now, for a lease that is still live and
 * still token's: 0 rows affected means it is lost. */
void lock_sql_extend(struct strbuf *sb, const char *name, unsigned slot, uint64_t token,
		     unsigned ttl);
/* Free the slot if token still holds it (expired or not: while holder is
 * token, nobody else has had it since). */
void lock_sql_release(struct strbuf *sb, const char *name, unsigned slot, uint64_t token);
/* kyu locks [NAME]: name, slot, host, pid, acquired_at, lease_left
 * (seconds, 'expired' or 'free'). */
void lock_sql_list(struct strbuf *sb, const char *name);

#endif
