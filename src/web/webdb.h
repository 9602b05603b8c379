/* A database connection of the dashboard (kyu web): blocking, used by
 * one thread at a time (one per webapi, webapi.h), every statement bounded by
 * max_statement_time (WEBDB_STMT_LIMIT) and the connection by the db
 * module's deadline. A read whose connection was found gone is sent once
 * more; a lost server is logged once per spell (common/spell.h), not at
 * every page refresh. Its own module so that every page (webpages.h,
 * weboverview.h) runs its statements the same way. */
#ifndef KYU_WEBDB_H
#define KYU_WEBDB_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"
#include "common/spell.h"

/* A page's statement must not hold the server (or the page) for long,
 * whatever the table's size; the connection's own deadline (webdb.c) is a
 * little longer, so that the server's error, which names the limit, is the
 * one seen. Put before each page's SELECT. */
#define WEBDB_STMT_LIMIT "SET STATEMENT max_statement_time = 5 FOR "

struct webdb {
	const struct kyu_config *cfg; /* borrowed */
	struct db *db;
	struct spell down; /* the server cannot be reached, and that was logged */
};

/* cfg is borrowed: it must outlive d. Connects at the first statement. */
void webdb_init(struct webdb *d, const struct kyu_config *cfg);
void webdb_close(struct webdb *d);

/* Run sql; its last result in *res (valid until the next statement). 0 or
 * -1 (db_error tells why). resend: a read, sent once more on a new
 * connection when the old one was found gone (the server restarted, or
 * dropped an idle session); not a change, which may have been applied. */
KYU_MUSTCHECK int webdb_run(struct webdb *d, const char *sql, size_t len,
			    const struct db_result **res, bool resend);
/* webdb_run of a read. */
KYU_MUSTCHECK int webdb_read(struct webdb *d, const char *sql, size_t len,
			     const struct db_result **res);

/* webdb_read of several statements separated by ';': *reply has a
 * result per statement, in order. One statement each costs the server
 * less than one UNION ALL of as many derived tables, whose planning grows
 * faster than their number. */
KYU_MUSTCHECK int webdb_read_each(struct webdb *d, const char *sql, size_t len,
				  const struct db_reply **reply);

/* The 503 document of a failed statement: "WHAT: database: <error>". */
unsigned webdb_failed(struct webdb *d, json_t **out, const char *what);

/* Whether the current database has the table (kyu_schedules, kyu_locks
 * and kyu_daemons come with schema versions; a page works without). */
KYU_MUSTCHECK int webdb_has_table(struct webdb *d, const char *table, bool *ret);

#endif
