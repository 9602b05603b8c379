/* A thin layer over Connector/C: connect with kyu's session settings, run
 * a statement, and classify failures so callers know whether to retry. */
#ifndef KYU_DB_H
#define KYU_DB_H

#include <stdbool.h>
#include <stdint.h>

#include <mysql.h>

#include "config.h"
#include "util.h"

enum db_fail {
	DB_OK = 0,
	DB_RETRY,    /* deadlock or lock wait timeout: run the statement again */
	DB_LOST,     /* the connection is gone: reconnect */
	DB_ERROR,    /* the statement itself failed (a bug or a schema problem) */
};

struct db {
	MYSQL *my;
	char err[512];
	unsigned err_no;
	uint64_t deadlocks; /* retried deadlocks and lock wait timeouts */
};

/* Connect using cfg; on failure db->err says why. */
int db_connect(struct db *db, const struct kyu_config *cfg);
void db_close(struct db *db);
bool db_connected(const struct db *db);

/* Run one statement, retrying deadlocks a few times. For statements with a
 * result set, the caller takes it with mysql_store_result(db->my). */
enum db_fail db_exec(struct db *db, const char *sql, size_t len);
static inline enum db_fail db_execs(struct db *db, const struct strbuf *sb)
{
	return db_exec(db, sb->buf, sb->len);
}
uint64_t db_affected(const struct db *db);

/* After a multi-statement db_exec: move to the next statement's result.
 * A failed statement ends the multi-statement (the server runs none after
 * it); a deadlock there is counted but not retried. */
enum db_fail db_next_result(struct db *db);

/* Append s as a quoted SQL string literal ('...'), or NULL when s is NULL. */
void db_quote(struct db *db, struct strbuf *sb, const char *s, size_t len);

#endif
