/* kyu lock: cluster-wide locks kept in the table kyu_locks, and the run
 * loop of `kyu lock NAME -- COMMAND`, which holds one while COMMAND runs.
 * Used by kyu (src/cli: kyu lock, kyu locks) and kyu web (src/web: the
 * list of locks).
 *
 * The module is three: this one parses the arguments, reads the
 * acquisition's reply and runs the loop that acquires, extends and
 * releases while the command runs; lock_sql.h builds the statements
 * (pure, included here); lock_guardian.h is the process that starts the
 * command and ends all of it (lock.c's alone). */
#ifndef KYU_LOCK_H
#define KYU_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"
#include "common/lock_sql.h"
#include "common/util.h"

/* kyu lock's own exit statuses; otherwise it exits with the command's
 * status (128 + N when the command was killed by signal N). */
#define LOCK_EXIT_USAGE 64 /* bad arguments, as every kyu command (EX_USAGE) */
#define LOCK_EXIT_DB 69    /* EX_UNAVAILABLE: database error; the command did not run */
#define LOCK_EXIT_LOST 70  /* the lease was lost: the command was killed (or had ended) */
#define LOCK_EXIT_OSERR                                                                            \
	71 /* EX_OSERR: the command could not be started (fork failed), or its guardian was killed */
#define LOCK_EXIT_BUSY 75 /* EX_TEMPFAIL: not obtained within --wait; the command did not run */

#define LOCK_NAME_MAX 191 /* characters: kyu_locks.name VARCHAR(191) */
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
KYU_MUSTCHECK int lock_parse_args(int argc, char **argv, struct lock_opts *ret, char *err,
				  size_t errlen);

/* NULL when name can be stored as given in kyu_locks.name (not empty,
 * UTF-8, at most LOCK_NAME_MAX characters), else why not. The server must
 * not be left to check: INSERT IGNORE would truncate it silently. */
const char *lock_name_problem(const char *name);

/* Read the reply of lock_sql_acquire: the number of slots token holds
 * (normally 0 or 1; more after a lost reply was sent again), the lowest
 * in *ret_slot. -1 when the reply is not of that shape. */
KYU_MUSTCHECK int lock_read_acquired(const struct db_reply *reply, unsigned *ret_slot);

/* `kyu lock`: argv[0] is "lock". Returns the exit status. */
KYU_MUSTCHECK int lock_main(const struct kyu_config *cfg, int argc, char **argv);

#endif
