/* What comes back from a round trip: each statement's result as plain
 * rows of strings (struct db_reply, what every user of db.h reads), and
 * the store db.c builds it in, statement by statement, from Connector/C's
 * results. Kept apart from db.c, which drives the round trips, because the
 * memory of a reply (which cell points where, and until when) is a job
 * of its own. db.h includes this header; the store is db.c's alone. */
#ifndef KYU_DB_REPLY_H
#define KYU_DB_REPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a round trip ended, for the caller to act on. */
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
	/* per column: the server sends a number (an integer, a DECIMAL, a
	 * float), for a reader that types values (kyu's JSON) */
	bool *numeric;
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

/* Connector/C's handle and result set (MYSQL, MYSQL_RES), without its
 * header for every user of db.h. */
struct st_mysql;
struct st_mysql_res;
struct db_reply_stored; /* what a result keeps of Connector/C's */

/* The results of the round trip in flight, and the reply handed out. A
 * result set's cells point into its MYSQL_RES, kept until the reply is
 * reset. */
struct db_reply_store {
	struct db_result *r;
	struct db_reply_stored *st;
	int n, cap;
	struct db_reply reply;
};

/* Free every result and clear the reply, keeping the arrays for the next
 * round trip. */
void db_reply_reset(struct db_reply_store *s);
/* Result sets point into memory tied to the connection: before it is
 * closed under a reply, keep only what needs no connection. */
void db_reply_drop_rows(struct db_reply_store *s);
/* A new result, zeroed, at the end. */
struct db_result *db_reply_add(struct db_reply_store *s);
/* The statement at hand failed on my: record it as the last result. */
void db_reply_add_error(struct db_reply_store *s, struct st_mysql *my);
/* A result set, kept (and freed with the reply). */
void db_reply_add_rows(struct db_reply_store *s, struct st_mysql_res *res);
/* The arrays, after db_reply_reset. */
void db_reply_free(struct db_reply_store *s);

#endif
