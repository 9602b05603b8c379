/* What every kyu session is, whatever it then sends: the server it goes
 * to (the socket, or the first of a host list that answers, with a
 * Galera node that refused to serve tried last) and the options and
 * session variables it is opened with. Kept apart from db.c, which drives the
 * round trips, because none of this depends on how a round trip is
 * driven: it is read from the configuration once per connect. db.c is
 * its only user; db.h includes this header for DB_SESSION_START, which
 * statements of every program name (minutes.c). */
#ifndef KYU_DB_SESSION_H
#define KYU_DB_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "attr.h"
#include "config.h"
#include "db_reply.h"
#include "hosts.h"

/* A session variable set when each session begins: NOW(6) then, by the
 * server's clock (minutes.c tells rows this session changed by it). */
#define DB_SESSION_START "@kyu_session_start"

/* Connector/C's handle (MYSQL), without its header for every user of
 * db.h. */
struct st_mysql;

struct db_session {
	/* Copies of what the connect in flight uses: a reload may free the
	 * configuration it came from before Connector/C is done with it. */
	char *user, *password, *name, *socket;
	struct host_port hosts[HOSTS_MAX];
	int n_hosts, host_at; /* the servers to try, in order, and the one being tried */
	unsigned connect_timeout;
	char avoid[300]; /* a Galera node that refused to serve: the next connect tries it last */
};

/* Take the server (cfg's socket, else its host list with the node to
 * avoid moved to the end) and credentials from cfg, in place of the
 * previous ones; host_at 0. */
void db_session_set(struct db_session *s, const struct kyu_config *cfg);
/* Free the copies (avoid stays, for the next connect). */
void db_session_free(struct db_session *s);

/* A new non-blocking handle for the server at host_at, set up as every
 * kyu session is, its name (HOST:PORT or the socket) in peer. in_loop: for
 * a process with an event loop, else for a command-line tool. NULL when
 * out of memory. */
struct st_mysql *db_session_open(const struct db_session *s, bool in_loop, char *peer,
				 size_t peerlen);

/* The session's character set, checked once it is set up: the statement
 * (one result set) db.c sends with its set-up, and the check of its reply
 * and of Connector/C's own view. Every kyu session asks for utf8mb4 twice,
 * in the handshake and with SET NAMES as its first init command (which
 * runs after the server's init_connect), because db_quote escapes for
 * utf8mb4 and a server or proxy that imposes a multibyte charset whose
 * characters may end in a backslash byte (gbk, sjis, big5, cp932,
 * gb18030) would let a quoted text close its literal: SQL from a job's
 * output or a search. The mode db_quote relies on (no
 * NO_BACKSLASH_ESCAPES) is checked with it. */
#define DB_SESSION_CHECK_SQL                                                                       \
	"SELECT @@character_set_client, @@character_set_connection, @@character_set_results, "     \
	"@@sql_mode"
/* 0 when the session is utf8mb4 on both sides and backslashes escape;
 * else -1 with err naming the server (peer), what it found, and the fix. */
KYU_MUSTCHECK int db_session_check(struct st_mysql *my, const struct db_result *r, const char *peer,
				   char *err, size_t errlen);

#endif
