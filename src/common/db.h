/* The connection to the database, for every program: kyud (supervisor
 * and workers), kyud-metrics, kyu web and kyu. The db modules are the
 * only ones that talk to Connector/C. A connection runs one statement (or
 * multi-statement) at a time and hands back every result as plain rows of
 * strings, so that no other module sees a MYSQL handle.
 *
 * This module drives the round trips; beside it, each included here so
 * that users include db.h alone: db_session.h (which server, and the
 * options and session variables every session gets), db_reply.h (the
 * replies and the memory they live in) and db_quote.h (SQL literals).
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

#include "attr.h"
#include "config.h"
#include "db_quote.h"
#include "db_reply.h"
#include "db_session.h"
#include "util.h"

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
KYU_MUSTCHECK int db_connect_async(struct db *db, const struct kyu_config *cfg, db_done_fn *done,
				   void *arg);
/* Send sql (taken over: sb is left empty) on an idle connection. done may
 * run before db_send returns, when the reply is already there. Returns 0,
 * or -1 without sending when the connection is not idle or the statement
 * is larger than the server accepts (db_error says which; done is not
 * called). */
KYU_MUSTCHECK int db_send(struct db *db, struct strbuf *sb, db_done_fn *done, void *arg);

/* Blocking forms. db_query's reply stays valid until the next call or
 * db_free. */
KYU_MUSTCHECK int db_connect(struct db *db, const struct kyu_config *cfg);
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

#endif
