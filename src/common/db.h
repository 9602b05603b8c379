/* The one module that talks to Connector/C. A connection runs one
 * statement (or multi-statement) at a time and hands back every result as
 * plain rows of strings, so that no other module sees a MYSQL handle.
 *
 * Two ways to drive it:
 * - with an event loop (db_new(loop)): db_connect_async and db_send return
 *   at once and call back when the round trip is over; the loop keeps
 *   turning meanwhile (Connector/C's non-blocking API on libev watchers).
 *   Each statement has a deadline; past it the connection is abandoned and
 *   the caller sees DB_LOST, however the server behaves.
 * - without one (db_new(NULL)): db_connect and db_query block, for the
 *   short-lived `kyu` tool. Same code path, waiting in poll().
 *
 * How a statement travels: db_send checks its size against the server's
 * max_allowed_packet (read at connect), starts mysql_real_query_start, and
 * whenever Connector/C says it would block, arms an ev_io on its socket (and
 * an ev_timer when it asks for a timeout). Each wake-up calls the matching
 * _cont function; completed steps move on to mysql_store_result_* for a
 * result set and mysql_next_result_* while the multi-statement has more.
 * When the last result is in, the watchers stop and the callback runs with
 * a db_reply that lives until the callback returns. */
#ifndef KYU_DB_H
#define KYU_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ev.h>

#include "config.h"
#include "util.h"

enum db_fail {
	DB_OK = 0,
	DB_RETRY, /* deadlock or lock wait timeout: the statement may be sent again */
	DB_LOST,  /* the connection is gone (or was abandoned): reconnect */
	DB_ERROR, /* the statement itself failed; sending it again will not help */
	DB_BUSY,  /* the server refuses for now (read-only, disk or table full): later */
};

/* One statement's result. err_no 0: it succeeded; then a result set has
 * n_rows x n_cols cells (NULL for SQL NULL), else affected counts rows. */
struct db_result {
	unsigned err_no;
	const char *err;
	uint64_t affected;
	unsigned n_cols;
	size_t n_rows;
	char **cells;
	unsigned long *lens;
	const char **names; /* column names */
};

/* What came back from one round trip. fail is DB_OK when every statement
 * sent ran; otherwise the last of the n results is the one that failed
 * (with DB_LOST there may be none). */
struct db_reply {
	enum db_fail fail;
	const char *err;
	int n;
	struct db_result *r;
	double sent_at; /* monotonic time the statement was first sent */
};

static inline const char *db_cell(const struct db_result *r, size_t row, unsigned col)
{
	return r->cells[row * r->n_cols + col];
}

struct db;
typedef void db_done_fn(void *arg, const struct db_reply *reply);

/* loop NULL: blocking use. deadline: seconds a statement may take. */
struct db *db_new(struct ev_loop *loop, double deadline);
void db_free(struct db *db);

/* Start connecting (closing any previous connection) to the server of
 * cfg's socket, or to the first of its host list that answers and passes
 * the session set-up (a Galera node must be ready to serve): each is
 * tried in the order given, with the whole connect deadline. done runs
 * with fail DB_OK once the session is set up, else DB_LOST (db_error
 * names the last server's failure). Returns 0, or -1
 * when it could not even start (db_error says why; done is not called). */
int db_connect_async(struct db *db, const struct kyu_config *cfg, db_done_fn *done, void *arg);
/* Send sql (taken over: sb is left empty) on an idle connection. done may
 * run before db_send returns, when the reply is already there. Returns 0,
 * or -1 without sending when the connection is not idle or the statement
 * is larger than the server accepts (db_error says which; done is not
 * called). */
int db_send(struct db *db, struct strbuf *sb, db_done_fn *done, void *arg);

/* Blocking forms. db_query's reply stays valid until the next call or
 * db_free. */
int db_connect(struct db *db, const struct kyu_config *cfg);
enum db_fail db_query(struct db *db, const char *sql, size_t len, const struct db_reply **reply);

/* Drop the connection at once, without waiting for the server. A
 * statement in flight is not called back. */
void db_close(struct db *db);
bool db_connected(const struct db *db);
bool db_idle(const struct db *db); /* connected and nothing in flight */
/* The server connected to (or last tried): HOST:PORT, or the socket. */
const char *db_peer(const struct db *db);
const char *db_error(const struct db *db);
/* The number of the error db_error describes: MariaDB's (server or
 * client), DB_ERR_NO_ANSWER for a deadline that passed; 0 before any. */
unsigned db_error_code(const struct db *db);
#define DB_ERR_NO_ANSWER 1
uint64_t db_deadlocks(const struct db *db);
uint64_t db_round_trips(const struct db *db);
/* The longest statement the server accepts (its max_allowed_packet less
 * the protocol header); 1 MiB until read at connect. */
size_t db_max_statement(const struct db *db);

/* A session variable set when each session begins: NOW(6) then, by the
 * server's clock (minutes.c tells rows this session changed by it). */
#define DB_SESSION_START "@kyu_session_start"

/* Append s as a quoted SQL string literal ('...'), or NULL when s is NULL.
 * Pure: every kyu session runs with a fixed sql_mode (without
 * NO_BACKSLASH_ESCAPES), so the escaping does not depend on the server. */
void db_quote(struct strbuf *sb, const char *s, size_t len);
static inline void db_quotes(struct strbuf *sb, const char *s)
{
	db_quote(sb, s, s ? __builtin_strlen(s) : 0);
}

#endif
