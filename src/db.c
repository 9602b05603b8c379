#include "db.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <errmsg.h>
#include <mysqld_error.h>

#include "log.h"

int db_connect(struct db *db, const struct kyu_config *cfg)
{
	unsigned int timeout = (unsigned int)cfg->db_connect_timeout;
	/* A query that hangs longer than this is treated as a lost connection,
	 * so a wedged server cannot freeze a worker's loop for ever. */
	unsigned int rw_timeout = (unsigned int)(cfg->lease > 30 ? cfg->lease : 30);
	my_bool off = 0;
	const char *init =
		/* Claims wait on rows an INSERT has not committed yet; keep such
		 * waits short so a long transaction elsewhere only delays, never
		 * blocks, a worker. */
		"SET SESSION innodb_lock_wait_timeout = 3";
	const bool use_socket = cfg->db_socket && *cfg->db_socket;

	db_close(db);
	db->my = mysql_init(NULL);
	if (!db->my) {
		snprintf(db->err, sizeof(db->err), "out of memory");
		return -ENOMEM;
	}
	mysql_options(db->my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(db->my, MYSQL_OPT_READ_TIMEOUT, &rw_timeout);
	mysql_options(db->my, MYSQL_OPT_WRITE_TIMEOUT, &rw_timeout);
	mysql_options(db->my, MYSQL_OPT_RECONNECT, &off);
	mysql_options(db->my, MYSQL_INIT_COMMAND, init);
	/* Under REPEATABLE READ the claim's ORDER BY ... LIMIT scan takes gap
	 * locks that make concurrent claims and finishes deadlock; READ
	 * COMMITTED locks only the rows it marks (tests/bench: claims). */
	mysql_options(db->my, MYSQL_INIT_COMMAND, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	mysql_options(db->my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	if (!mysql_real_connect(db->my, use_socket ? NULL : cfg->db_host, cfg->db_user,
				cfg->db_password, cfg->db_name, use_socket ? 0 : (unsigned)cfg->db_port,
				use_socket ? cfg->db_socket : NULL,
				/* Multi-statements: a claim's UPDATE and SELECT share
				 * one round trip (store.c). Every value kyud puts in a
				 * statement is a number or goes through db_quote. */
				CLIENT_FOUND_ROWS | CLIENT_MULTI_STATEMENTS)) {
		db->err_no = mysql_errno(db->my);
		snprintf(db->err, sizeof(db->err), "%s (%u)", mysql_error(db->my), db->err_no);
		mysql_close(db->my);
		db->my = NULL;
		return -EIO;
	}
	return 0;
}

void db_close(struct db *db)
{
	if (db->my)
		mysql_close(db->my);
	db->my = NULL;
}

bool db_connected(const struct db *db)
{
	return db->my != NULL;
}

static enum db_fail classify(unsigned e)
{
	switch (e) {
	case ER_LOCK_DEADLOCK:
	case ER_LOCK_WAIT_TIMEOUT:
		return DB_RETRY;
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
	case CR_CONNECTION_ERROR:
	case CR_CONN_HOST_ERROR:
	case CR_SERVER_LOST_EXTENDED:
	case CR_COMMANDS_OUT_OF_SYNC:
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
	case ER_QUERY_INTERRUPTED:
	case 4031: /* ER_CLIENT_INTERACTION_TIMEOUT */
		return DB_LOST;
	default:
		/* Connector/C reports most client-side failures as 2xxx. */
		return e >= 2000 && e < 3000 ? DB_LOST : DB_ERROR;
	}
}

enum db_fail db_exec(struct db *db, const char *sql, size_t len)
{
	enum db_fail f = DB_LOST;

	if (!db->my) {
		snprintf(db->err, sizeof(db->err), "not connected");
		return DB_LOST;
	}
	for (int attempt = 0; attempt < 5; attempt++) {
		if (mysql_real_query(db->my, sql, (unsigned long)len) == 0)
			return DB_OK;
		db->err_no = mysql_errno(db->my);
		snprintf(db->err, sizeof(db->err), "%s (%u)", mysql_error(db->my), db->err_no);
		f = classify(db->err_no);
		if (f != DB_RETRY)
			break;
		db->deadlocks++;
	}
	if (f == DB_LOST)
		db_close(db);
	return f;
}

enum db_fail db_next_result(struct db *db)
{
	enum db_fail f;
	int r;

	if (!db->my) {
		snprintf(db->err, sizeof(db->err), "not connected");
		return DB_LOST;
	}
	r = mysql_next_result(db->my);
	if (r == 0)
		return DB_OK;
	if (r < 0) {
		snprintf(db->err, sizeof(db->err), "expected another result set");
		db_close(db);
		return DB_ERROR;
	}
	db->err_no = mysql_errno(db->my);
	snprintf(db->err, sizeof(db->err), "%s (%u)", mysql_error(db->my), db->err_no);
	f = classify(db->err_no);
	/* A failed statement ends a multi-statement: the server runs none
	 * after it, so the connection is in step again unless it is gone. */
	if (f == DB_LOST)
		db_close(db);
	else if (f == DB_RETRY)
		db->deadlocks++;
	return f;
}

uint64_t db_affected(const struct db *db)
{
	return db->my ? (uint64_t)mysql_affected_rows(db->my) : 0;
}

void db_quote(struct db *db, struct strbuf *sb, const char *s, size_t len)
{
	if (!s) {
		sb_adds(sb, "NULL");
		return;
	}
	sb_reserve(sb, len * 2 + 2);
	sb->buf[sb->len++] = '\'';
	sb->len += mysql_real_escape_string(db->my, sb->buf + sb->len, s, (unsigned long)len);
	sb->buf[sb->len++] = '\'';
	sb->buf[sb->len] = '\0';
}
