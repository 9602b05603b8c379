/* The server's binary log as a stream of events, for kyud's watcher
 * (src/watch). See db_binlog.h. */
#include "db_binlog.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mysql.h>
#include <mysqld_error.h>
#include <mariadb_rpl.h>

#include "db_session.h"

struct db_binlog {
	struct db_session session;
	MYSQL *my;
	MARIADB_RPL *rpl;
	MARIADB_RPL_EVENT *ev; /* the last event fetched; reused for the next */
	bool first_pending;    /* ev is the open's first event, not handed out yet */
	double clock_offset;
	char peer[300];
};

struct db_binlog *db_binlog_new(void)
{
	return calloc(1, sizeof(struct db_binlog));
}

void db_binlog_close(struct db_binlog *b)
{
	if (b->ev)
		mariadb_free_rpl_event(b->ev);
	b->ev = NULL;
	b->first_pending = false;
	if (b->rpl)
		mariadb_rpl_close(b->rpl);
	b->rpl = NULL;
	if (b->my)
		mysql_close(b->my);
	b->my = NULL;
}

void db_binlog_free(struct db_binlog *b)
{
	if (!b)
		return;
	db_binlog_close(b);
	db_session_free(&b->session);
	free(b);
}

const char *db_binlog_peer(const struct db_binlog *b)
{
	return b->peer;
}

double db_binlog_clock_offset(const struct db_binlog *b)
{
	return b->clock_offset;
}

uint32_t db_binlog_server_id(const char *id)
{
	/* FNV-1a: stable across builds and hosts, unlike a seeded hash. */
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)(id ? id : ""); *p; p++) {
		h ^= *p;
		h *= 16777619u;
	}
	return 0xC0000000u | (h & 0x3FFFFFFFu);
}

static void set_err(char *err, size_t errlen, MYSQL *my, const char *what)
{
	snprintf(err, errlen, "%s: error %u: %s", what, mysql_errno(my), mysql_error(my));
}

/* Connect to the first server of the list that answers. */
static int connect_any(struct db_binlog *b, const struct kyu_config *cfg, unsigned read_timeout,
		       char *err, size_t errlen)
{
	struct db_session *s = &b->session;
	int n;

	db_session_set(s, cfg);
	n = s->socket ? 1 : s->n_hosts;
	for (s->host_at = 0; s->host_at < n; s->host_at++) {
		b->my = db_session_open(s, false, b->peer, sizeof(b->peer));
		if (!b->my) {
			snprintf(err, errlen, "out of memory");
			return BINLOG_RETRY;
		}
		mysql_options(b->my, MYSQL_OPT_READ_TIMEOUT, &read_timeout);
		if (mysql_real_connect(b->my, s->socket ? NULL : s->hosts[s->host_at].name, s->user,
				       s->password, s->name,
				       s->socket ? 0 : s->hosts[s->host_at].port, s->socket, 0))
			return 0;
		snprintf(err, errlen, "%s: error %u: %s", b->peer, mysql_errno(b->my),
			 mysql_error(b->my));
		mysql_close(b->my);
		b->my = NULL;
	}
	return BINLOG_RETRY;
}

/* One row of strings from a query; the caller frees *res. */
static MYSQL_ROW query_row(MYSQL *my, const char *sql, MYSQL_RES **res)
{
	*res = NULL;
	if (mysql_query(my, sql) != 0 || !(*res = mysql_store_result(my)))
		return NULL;
	return mysql_fetch_row(*res);
}

static double realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What the server writes, and where it stands: refuse a server without a
 * binary log by name, and read the position to start at. */
static int read_position(struct db_binlog *b, char *gtid, size_t gtidlen, char *err, size_t errlen)
{
	MYSQL_RES *res;
	MYSQL_ROW row = query_row(b->my,
				  "SELECT @@GLOBAL.log_bin, @@GLOBAL.gtid_binlog_pos, "
				  "UNIX_TIMESTAMP(NOW(6))",
				  &res);
	int rc = 0;

	if (!row) {
		set_err(err, errlen, b->my, "reading the binary log's position");
		rc = BINLOG_RETRY;
		goto out;
	}
	if (!row[0] || strcmp(row[0], "1") != 0) {
		snprintf(err, errlen, "the server %s writes no binary log (log_bin is OFF)",
			 b->peer);
		rc = BINLOG_IMPOSSIBLE;
		goto out;
	}
	/* Digits, '-' and ',' only: it goes into a statement as it is. */
	if (!row[1] || strspn(row[1], "0123456789-,") != strlen(row[1]) ||
	    strlen(row[1]) >= gtidlen) {
		snprintf(err, errlen, "the server %s gave an unexpected gtid_binlog_pos", b->peer);
		rc = BINLOG_RETRY;
		goto out;
	}
	snprintf(gtid, gtidlen, "%s", row[1]);
	b->clock_offset = row[2] ? strtod(row[2], NULL) - realtime_now() : 0;
out:
	mysql_free_result(res);
	return rc;
}

static bool access_denied(unsigned e)
{
	return e == ER_SPECIFIC_ACCESS_DENIED_ERROR || e == ER_ACCESS_DENIED_ERROR ||
	       e == ER_DBACCESS_DENIED_ERROR || e == ER_TABLEACCESS_DENIED_ERROR;
}

int db_binlog_open(struct db_binlog *b, const struct kyu_config *cfg, uint32_t server_id,
		   unsigned heartbeat_s, char *err, size_t errlen)
{
	char gtid[2048], sql[2400];
	int rc;

	db_binlog_close(b);
	rc = connect_any(b, cfg, heartbeat_s * 3 + 1, err, errlen);
	if (rc < 0)
		return rc;
	rc = read_position(b, gtid, sizeof(gtid), err, errlen);
	if (rc < 0)
		goto fail;
	/* A replica states what it can take: checksums as the server writes
	 * them, GTID events (capability 4, MariaDB's), its start as a GTID
	 * state, and a heartbeat (nanoseconds) while the log is quiet. */
	snprintf(sql, sizeof(sql),
		 "SET @master_binlog_checksum = @@GLOBAL.binlog_checksum, "
		 "@mariadb_slave_capability = 4, @slave_connect_state = '%s', "
		 "@slave_gtid_strict_mode = 0, @slave_gtid_ignore_duplicates = 0, "
		 "@master_heartbeat_period = %llu",
		 gtid, (unsigned long long)heartbeat_s * 1000000000ULL);
	if (mysql_query(b->my, sql) != 0) {
		set_err(err, errlen, b->my, "setting up the replication session");
		rc = BINLOG_RETRY;
		goto fail;
	}
	b->rpl = mariadb_rpl_init(b->my);
	if (!b->rpl) {
		snprintf(err, errlen, "out of memory");
		rc = BINLOG_RETRY;
		goto fail;
	}
	mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_SERVER_ID, server_id);
	mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_START, 4UL);
	mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_FILENAME, "", (size_t)0);
	mariadb_rpl_optionsv(b->rpl, MARIADB_RPL_FLAGS, 0);
	if (mariadb_rpl_open(b->rpl) != 0) {
		unsigned e = mysql_errno(b->my);
		snprintf(err, errlen, "opening the binary log on %s: error %u: %s", b->peer, e,
			 mysql_error(b->my));
		rc = access_denied(e) ? BINLOG_IMPOSSIBLE : BINLOG_RETRY;
		goto fail;
	}
	/* The server answers the dump request with its first events, or with
	 * the error (a missing privilege comes here, not at the request). */
	b->ev = mariadb_rpl_fetch(b->rpl, NULL);
	if (!b->ev) {
		unsigned e = mysql_errno(b->my);
		if (access_denied(e))
			snprintf(
				err, errlen,
				"reading the binary log on %s needs the REPLICATION SLAVE privilege "
				"(error %u: %s)",
				b->peer, e, mysql_error(b->my));
		else
			snprintf(err, errlen, "reading the binary log on %s: error %u: %s", b->peer,
				 e, mysql_error(b->my));
		rc = access_denied(e) ? BINLOG_IMPOSSIBLE : BINLOG_RETRY;
		goto fail;
	}
	b->first_pending = true;
	return 0;
fail:
	db_binlog_close(b);
	return rc;
}

static void fill(struct binlog_event *out, const MARIADB_RPL_EVENT *e)
{
	memset(out, 0, sizeof(*out));
	out->timestamp = e->timestamp;
	switch (e->event_type) {
	case HEARTBEAT_LOG_EVENT:
		out->kind = BINLOG_HEARTBEAT;
		out->timestamp = 0; /* a heartbeat's is not a time of writing */
		return;
	case XID_EVENT:
		out->kind = BINLOG_COMMIT;
		return;
	case QUERY_EVENT:
		out->kind = BINLOG_QUERY;
		out->u.query.db = e->event.query.database.str;
		out->u.query.db_len = e->event.query.database.length;
		out->u.query.text = e->event.query.statement.str;
		out->u.query.text_len = e->event.query.statement.length;
		return;
	case TABLE_MAP_EVENT: {
		const struct st_mariadb_rpl_table_map_event *m = &e->event.table_map;
		out->kind = BINLOG_TABLE_MAP;
		out->u.map.table_id = m->table_id;
		out->u.map.db = m->database.str;
		out->u.map.db_len = m->database.length;
		out->u.map.table = m->table.str;
		out->u.map.table_len = m->table.length;
		out->u.map.n_cols = m->column_count;
		out->u.map.types = (const unsigned char *)m->column_types.str;
		out->u.map.meta = (const unsigned char *)m->metadata.str;
		out->u.map.meta_len = m->metadata.length;
		/* Defensive: a map whose types are fewer than its columns is
		 * not one this reader can use. */
		if (m->column_types.length < m->column_count)
			out->u.map.n_cols = (uint32_t)m->column_types.length;
		return;
	}
	default:
		break;
	}
	if (IS_ROW_EVENT(e)) {
		const struct st_mariadb_rpl_rows_event *r = &e->event.rows;
		out->kind = BINLOG_ROWS;
		out->u.rows.type = r->type == WRITE_ROWS    ? BINLOG_WRITE
				   : r->type == UPDATE_ROWS ? BINLOG_UPDATE
							    : BINLOG_DELETE;
		out->u.rows.table_id = r->table_id;
		out->u.rows.n_cols = r->column_count;
		out->u.rows.present = r->column_bitmap;
		out->u.rows.present_after = r->column_update_bitmap;
		out->u.rows.data = r->row_data;
		out->u.rows.len = r->row_data ? r->row_data_size : 0;
		out->u.rows.compressed = r->compressed || !r->row_data || !r->column_bitmap;
		return;
	}
	out->kind = BINLOG_OTHER;
}

int db_binlog_next(struct db_binlog *b, struct binlog_event *ev, char *err, size_t errlen)
{
	if (!b->rpl) {
		snprintf(err, errlen, "no binary log stream open");
		return -1;
	}
	if (b->first_pending) {
		/* The first event came with the open. */
		b->first_pending = false;
		fill(ev, b->ev);
		return 1;
	}
	/* On failure the library frees the event it was given. */
	b->ev = mariadb_rpl_fetch(b->rpl, b->ev);
	if (!b->ev) {
		if (mysql_errno(b->my))
			snprintf(err, errlen, "reading the binary log on %s: error %u: %s", b->peer,
				 mysql_errno(b->my), mysql_error(b->my));
		else
			snprintf(err, errlen, "the server %s ended the binary log stream", b->peer);
		return -1;
	}
	fill(ev, b->ev);
	return 1;
}

bool db_binlog_pending(struct db_binlog *b)
{
	struct pollfd p;

	if (!b->my)
		return false;
	p.fd = (int)mysql_get_socket(b->my);
	p.events = POLLIN;
	p.revents = 0;
	return poll(&p, 1, 0) > 0;
}
