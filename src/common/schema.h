/* Schema versions: which versions of the database schema this build knows,
 * the rule that says whether a database can be worked on, and the upgrade
 * steps (sql/upgrade/NNN-NAME.sql, embedded at build time). Shared by kyud
 * (the check after every connect) and kyu (schema status|upgrade, check).
 *
 * The database records two numbers in kyu_meta: schema_version, the last
 * step applied, and schema_compat, the oldest version a program must know
 * to work on it. A step that only adds things (expand) leaves schema_compat
 * alone, so daemons of the previous release keep running until they are
 * restarted on the new binary; a step that removes or changes what older
 * daemons rely on (contract) raises it. A database without kyu_meta is of
 * version 1 or older. */
#ifndef KYU_SCHEMA_H
#define KYU_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "db.h"

/* The newest version this build knows: the number of the last step in
 * sql/upgrade/ (the build checks that they agree) and what sql/schema.sql
 * records. */
#define SCHEMA_VERSION 11
/* The oldest database version kyud works on. 6: it writes kyu_attempts,
 * progress, result and key_slot (step 6); its claims read the workflow
 * columns of step 5. (Before step 9 its registry row goes without slots,
 * running and drain: registry.h.) */
#define SCHEMA_NEEDS 6
/* The version from which kyu_queue_names is kept and kyu_jobs_status_queue_due
 * holds priority: kyud claims many due queues with its fan from it. */
#define SCHEMA_FAN 10

/* The error numbers the triggers of sql/schema.sql signal, each with its
 * own SQLSTATE (kyu_jobs(7), "Errors"), from schema version 7; before it,
 * KYU01 to KYU03 were all ER_SIGNAL_EXCEPTION (1644). */
#define SCHEMA_ERR_QUEUE_FULL 31001  /* KYU01: kyu_queues.max_waiting */
#define SCHEMA_ERR_AFTER 31002       /* KYU02: after names no job, or is no array */
#define SCHEMA_ERR_TRACEPARENT 31003 /* KYU03 */
#define SCHEMA_ERR_ARGV 31004        /* KYU04 */
#define SCHEMA_ERR_ENV 31005         /* KYU05 */
#define SCHEMA_ERR_STATUS 31006      /* KYU06 */
#define SCHEMA_ERR_FIRST SCHEMA_ERR_QUEUE_FULL
#define SCHEMA_ERR_LAST SCHEMA_ERR_STATUS

/* Whether err_no is a refusal by one of those triggers: its number, or
 * 1644 from a schema older than 7 (the message then begins "kyu: "). */
bool schema_is_refusal(unsigned err_no);

struct schema_step {
	int number; /* the version the step brings the database to */
	const char *name;
	const char *sql; /* the file's text, NUL-terminated */
	size_t len;
};

/* Generated from sql/upgrade/ (cmake/embed_steps.cmake): steps 1..N in
 * order, N == SCHEMA_VERSION. */
extern const struct schema_step schema_steps[];
extern const int schema_n_steps;

/* One round trip that reads the state: whether kyu_jobs exists (visible to
 * this account), then kyu_meta's two numbers. The second statement fails
 * (and the reply says how) when kyu_meta is missing or not readable. */
#define SCHEMA_STATE_SQL                                                                           \
	"SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() "          \
	"AND TABLE_NAME = 'kyu_jobs'; "                                                            \
	"SELECT MAX(IF(name = 'schema_version', value, NULL)), "                                   \
	"MAX(IF(name = 'schema_compat', value, NULL)) FROM kyu_meta"

enum schema_found {
	SCHEMA_FOUND,     /* version and compat read */
	SCHEMA_NO_META,   /* kyu_jobs without kyu_meta: version 1 or older */
	SCHEMA_EMPTY,     /* nothing installed yet: no kyu_jobs, or a kyu_meta
			   * without a version (sql/schema.sql half-way) */
	SCHEMA_DENIED,    /* kyu_meta not readable by this account */
	SCHEMA_UNREADABLE /* anything else: err says what */
};

struct schema_state {
	enum schema_found found;
	long long version, compat; /* 1 and 1 for SCHEMA_NO_META, 0 when empty */
	char err[256];
};

/* Read the state from the reply to SCHEMA_STATE_SQL (failed or not). */
void schema_state_read(const struct db_reply *reply, struct schema_state *st);

enum schema_verdict {
	SCHEMA_OK,      /* the version this program knows, or one it needs */
	SCHEMA_NEWER,   /* newer than it knows, but compatible: a notice */
	SCHEMA_TOO_OLD, /* older than it needs: run kyu schema upgrade */
	SCHEMA_TOO_NEW, /* needs a program that knows a newer version */
};

/* Judge a state read as SCHEMA_FOUND or SCHEMA_NO_META for a kyud that
 * knows version `knows` and needs at least `needs`; msg gets the one line
 * to log (empty for SCHEMA_OK). */
enum schema_verdict schema_judge(const struct schema_state *st, int knows, int needs, char *msg,
				 size_t len);

#endif
