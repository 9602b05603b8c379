/* kyu lock: cluster-wide locks kept in the table kyu_locks, and the run
 * loop of `kyu lock NAME -- COMMAND`, which holds one while COMMAND runs.
 *
 * A lock is one or more rows (name, slot): slot 0 only for a plain lock,
 * slots 0..N-1 for a pool of N. A row is free when holder is NULL, held
 * while expires (UTC, the database's clock) is in the future, and free
 * again for anyone once it has passed. Holding is proved by holder, a
 * random token of the holder: every statement after the acquisition names
 * it, so a holder that lost its row never touches the next holder's.
 *
 * The builders are pure (they append to sb and quote with db_quote), so
 * the unit tests read the very text that is sent; kyu_jobs(7) prints the
 * same statements for programs that are not kyu. */
#ifndef KYU_LOCK_H
#define KYU_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "db.h"
#include "util.h"

/* kyu lock's own exit statuses; otherwise it exits with the command's
 * status (128 + N when the command was killed by signal N). */
#define LOCK_EXIT_USAGE 64     /* bad arguments, as every kyu command (EX_USAGE) */
#define LOCK_EXIT_DB 69        /* EX_UNAVAILABLE: database error; the command did not run */
#define LOCK_EXIT_LOST 70      /* the lease was lost: the command was killed (or had ended) */
#define LOCK_EXIT_OSERR 71     /* EX_OSERR: the command could not be started (fork failed), or its guardian was killed */
#define LOCK_EXIT_BUSY 75      /* EX_TEMPFAIL: not obtained within --wait; the command did not run */

#define LOCK_NAME_MAX 191      /* characters: kyu_locks.name VARCHAR(191) */
#define LOCK_SLOTS_MAX 1000
#define LOCK_TTL_MAX 31536000
#define LOCK_WAIT_MAX 31536000

struct lock_opts {
	const char *name;
	int64_t ttl;   /* seconds of lease per acquisition or extension */
	int64_t wait;  /* seconds to keep trying; 0: try once */
	int64_t slots; /* size of the pool; 1: a plain lock */
	char **argv;   /* the command, NULL-terminated */
	int argc;
};

/* Parse the arguments of `kyu lock` (argv[0] is "lock"):
 * NAME [--ttl S] [--wait S] [--slots N] [--] COMMAND [ARG...], options
 * before or after NAME, --opt=V or --opt V. Returns 0, or -1 with a
 * message in err. */
int lock_parse_args(int argc, char **argv, struct lock_opts *ret, char *err, size_t errlen);

/* NULL when name can be stored as given in kyu_locks.name (not empty,
 * UTF-8, at most LOCK_NAME_MAX characters), else why not. The server must
 * not be left to check: INSERT IGNORE would truncate it silently. */
const char *lock_name_problem(const char *name);

/* One round trip of three statements: make the rows of slots 0..slots-1
 * that do not exist yet (free), take the lowest free or expired one for
 * token, then list the slots token holds. The acquisition is the UPDATE
 * alone, atomic on its own. */
void lock_sql_acquire(struct strbuf *sb, const char *name, unsigned slots, uint64_t token,
		      const char *host, long pid, unsigned ttl);
/* A new expiry, ttl seconds from now, for a lease that is still live and
 * still token's: 0 rows affected means it is lost. */
void lock_sql_extend(struct strbuf *sb, const char *name, unsigned slot, uint64_t token, unsigned ttl);
/* Free the slot if token still holds it (expired or not: while holder is
 * token, nobody else has had it since). */
void lock_sql_release(struct strbuf *sb, const char *name, unsigned slot, uint64_t token);
/* kyu locks [NAME]: name, slot, host, pid, acquired_at, lease_left
 * (seconds, 'expired' or 'free'). */
void lock_sql_list(struct strbuf *sb, const char *name);

/* Read the reply of lock_sql_acquire: the number of slots token holds
 * (normally 0 or 1; more after a lost reply was sent again), the lowest
 * in *ret_slot. -1 when the reply is not of that shape. */
int lock_read_acquired(const struct db_reply *reply, unsigned *ret_slot);

/* `kyu lock`: argv[0] is "lock". Returns the exit status. */
int lock_main(const struct kyu_config *cfg, int argc, char **argv);

#endif
