/* The server's binary log as a stream of events, for kyud's watcher
 * (src/watch): one replication connection, opened at the server's current
 * position, read with Connector/C's replication API (mariadb_rpl.h). Like
 * the other db modules, the only place that talks to Connector/C for it;
 * what it hands out are plain structs of bytes.
 *
 * A reader is a replica as far as the server is concerned: it needs the
 * REPLICATION SLAVE privilege, and a server id no real replica has
 * (db_binlog_server_id). It asks for no position of its own: every open
 * starts at the server's current GTID position (@@gtid_binlog_pos, which
 * any user may read), so a reconnect, a restart of the server or a move to
 * another node of a host list starts afresh, and whatever changed while no
 * stream was open is the caller's to cover (one wake-up for everything). */
#ifndef KYU_DB_BINLOG_H
#define KYU_DB_BINLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"
#include "config.h"

struct db_binlog;

enum binlog_kind {
	BINLOG_OTHER,     /* nothing kyu reads (format description, GTID, rotate...) */
	BINLOG_HEARTBEAT, /* the server is there and has nothing new */
	BINLOG_TABLE_MAP, /* a table's id and columns, for the rows events after it */
	BINLOG_ROWS,      /* rows written, updated or deleted (row format) */
	BINLOG_QUERY,     /* a statement (statement format, DDL, BEGIN) */
	BINLOG_COMMIT,    /* a transaction's end (XID) */
};

enum binlog_rows_type { BINLOG_WRITE, BINLOG_UPDATE, BINLOG_DELETE };

struct binlog_table_map {
	uint64_t table_id;
	const char *db, *table; /* not NUL-terminated */
	size_t db_len, table_len;
	uint32_t n_cols;
	const unsigned char *types; /* n_cols bytes, enum_field_types */
	const unsigned char *meta;  /* the columns' metadata, packed */
	size_t meta_len;
};

struct binlog_rows {
	enum binlog_rows_type type;
	uint64_t table_id;
	uint32_t n_cols;
	/* Which columns the images hold (bit i: column i): before (or only)
	 * image, and the after image of an update (NULL: the same). */
	const unsigned char *present, *present_after;
	const unsigned char *data; /* the row images, back to back */
	size_t len;
	bool compressed; /* not decoded: the caller treats it as unreadable */
};

struct binlog_event {
	enum binlog_kind kind;
	uint32_t timestamp; /* when the server wrote it, its clock (0: unknown) */
	union {
		struct binlog_table_map map;
		struct binlog_rows rows;
		struct {
			const char *db, *text;
			size_t db_len, text_len;
		} query;
	} u;
};

/* How an open failed: worth retrying later, or not possible on this
 * server with this configuration (no binary log, no privilege). */
enum binlog_fail { BINLOG_RETRY = -1, BINLOG_IMPOSSIBLE = -2 };

struct db_binlog *db_binlog_new(void);
void db_binlog_free(struct db_binlog *b);

/* Connect to cfg's server (the socket, or the first of the host list that
 * answers) and open a stream at its current position, as replica
 * server_id, asking for a heartbeat every heartbeat_s seconds while the
 * log is quiet. Returns 0, or an enum binlog_fail with the reason in err
 * (naming the missing setting or privilege for BINLOG_IMPOSSIBLE). */
KYU_MUSTCHECK int db_binlog_open(struct db_binlog *b, const struct kyu_config *cfg,
				 uint32_t server_id, unsigned heartbeat_s, char *err,
				 size_t errlen);
/* The next event, waiting for it (at most three heartbeats: a silent
 * server is a lost one). Returns 1 with ev filled in (valid until the
 * next call), or -1 when the stream is lost (err says why; open again). */
KYU_MUSTCHECK int db_binlog_next(struct db_binlog *b, struct binlog_event *ev, char *err,
				 size_t errlen);
/* Whether the next event can be read without waiting for the network:
 * false when the socket is empty (bytes Connector/C buffered may make
 * that answer early, never late). */
bool db_binlog_pending(struct db_binlog *b);
/* The server's clock minus this host's, in seconds, measured at open. */
double db_binlog_clock_offset(const struct db_binlog *b);
/* The server connected to: HOST:PORT, or the socket. */
const char *db_binlog_peer(const struct db_binlog *b);
void db_binlog_close(struct db_binlog *b);

/* A replica server id for the daemon named id (registry.h's token): in
 * 3,221,225,472-4,294,967,295 (the top quarter of the range, where real
 * replicas, numbered from 1 by hand, do not go), the same for the same
 * id. */
uint32_t db_binlog_server_id(const char *id);

#endif
