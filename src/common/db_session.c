/* The server and the options of a kyu session (db_session.h). */
#include "db_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "secret.h"
#include "util.h"

/* The only character set kyu's sessions run in (db_session_check). */
#define DB_CHARSET "utf8mb4"
#define SQL_MODE "sql_mode = 'STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

static void format_peer(const struct host_port *h, char *buf, size_t len)
{
	snprintf(buf, len, strchr(h->name, ':') ? "[%s]:%u" : "%s:%u", h->name, h->port);
}

/* The node to avoid, if it is in the list, goes to its end (once). */
static void avoid_last(struct db_session *s)
{
	char p[300];

	for (int i = 0; s->avoid[0] && i < s->n_hosts - 1; i++) {
		format_peer(&s->hosts[i], p, sizeof(p));
		if (strcmp(p, s->avoid) == 0) {
			struct host_port h = s->hosts[i];
			memmove(&s->hosts[i], &s->hosts[i + 1],
				(size_t)(s->n_hosts - 1 - i) * sizeof(h));
			s->hosts[s->n_hosts - 1] = h;
			break;
		}
	}
	s->avoid[0] = '\0';
}

void db_session_free(struct db_session *s)
{
	free(s->user);
	secret_free(s->password);
	free(s->name);
	free(s->socket);
	s->user = s->password = s->name = s->socket = NULL;
	s->n_hosts = s->host_at = 0;
}

void db_session_set(struct db_session *s, const struct kyu_config *cfg)
{
	const bool sock = cfg->db_socket && *cfg->db_socket;
	int rc;

	db_session_free(s);
	s->connect_timeout = (unsigned)cfg->db_connect_timeout;
	if (sock) {
		s->socket = xstrdup(cfg->db_socket);
	} else {
		/* The configuration was checked when it was read; an empty
		 * list means Connector/C's default, localhost. */
		rc = hosts_parse(cfg->db_host, (unsigned)cfg->db_port, s->hosts, HOSTS_MAX,
				 &s->n_hosts);
		if (rc < 0 || s->n_hosts == 0) {
			snprintf(s->hosts[0].name, sizeof(s->hosts[0].name), "localhost");
			s->hosts[0].port = (unsigned)cfg->db_port;
			s->n_hosts = 1;
		}
		avoid_last(s);
	}
	s->host_at = 0;
	s->user = dup_or_null(cfg->db_user);
	s->password = dup_or_null(cfg->db_password);
	s->name = dup_or_null(cfg->db_name);
}

struct st_mysql *db_session_open(const struct db_session *s, bool in_loop, char *peer,
				 size_t peerlen)
{
	unsigned int timeout = s->connect_timeout;
	my_bool off = 0;
	MYSQL *my = mysql_init(NULL);

	if (!my)
		return NULL;
	if (s->socket)
		snprintf(peer, peerlen, "%s", s->socket);
	else
		format_peer(&s->hosts[s->host_at], peer, peerlen);
	mysql_options(my, MYSQL_OPT_NONBLOCK, 0);
	mysql_options(my, MYSQL_OPT_CONNECT_TIMEOUT, &timeout);
	mysql_options(my, MYSQL_OPT_RECONNECT, &off);
	/* A row lock is held by another transaction for as long as it likes
	 * (a submitter that keeps its INSERT uncommitted): a worker, whose one
	 * connection also renews its leases, waits a second at most and then
	 * goes round it (ER_LOCK_WAIT_TIMEOUT is not re-sent, see db.c's
	 * statement_done); the command-line tools wait 3 s a try. A fixed
	 * sql_mode makes the escaping of db_quote exact (no
	 * NO_BACKSLASH_ESCAPES) and refuses bad values instead of mangling
	 * them. */
	/* First, and after the server's init_connect (which may SET NAMES
	 * sjis), whatever the handshake got: a server with
	 * skip-character-set-client-handshake ignores the charset asked for
	 * there. db_session_check makes sure it held. */
	mysql_options(my, MYSQL_INIT_COMMAND, "SET NAMES " DB_CHARSET);
	mysql_options(my, MYSQL_INIT_COMMAND,
		      in_loop ? "SET SESSION innodb_lock_wait_timeout = 1, " SQL_MODE
			      : "SET SESSION innodb_lock_wait_timeout = 3, " SQL_MODE);
	/* Under REPEATABLE READ the claim's ORDER BY ... LIMIT scan takes gap
	 * locks that make concurrent claims and finishes deadlock; READ
	 * COMMITTED locks only the rows it marks (notes/DESIGN.md). */
	mysql_options(my, MYSQL_INIT_COMMAND,
		      "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	mysql_options(my, MYSQL_INIT_COMMAND, "SET " DB_SESSION_START " = NOW(6)");
	mysql_options(my, MYSQL_SET_CHARSET_NAME, DB_CHARSET);
	return my;
}

int db_session_check(struct st_mysql *my, const struct db_result *r, const char *peer, char *err,
		     size_t errlen)
{
	static const char *const names[] = { "character_set_client", "character_set_connection",
					     "character_set_results" };
	/* What Connector/C believes: its own escaping (which kyu does not use)
	 * and its conversions follow it. */
	const char *client = mysql_character_set_name(my);

	if (!client || strcmp(client, DB_CHARSET) != 0) {
		snprintf(err, errlen,
			 "cannot use %s: Connector/C set up the session in %s, not " DB_CHARSET
			 " (kyu quotes text for " DB_CHARSET " only)",
			 peer, client ? client : "an unknown character set");
		return -1;
	}
	if (r->err_no || r->n_rows != 1 || r->n_cols != 4) {
		snprintf(err, errlen,
			 "cannot use %s: could not read the session's character set (%s)", peer,
			 r->err_no ? r->err : "unexpected reply");
		return -1;
	}
	for (unsigned i = 0; i < 3; i++) {
		const char *v = r->cells[i];
		if (!v || strcmp(v, DB_CHARSET) != 0) {
			snprintf(
				err, errlen,
				"cannot use %s: the session's %s is %s after SET NAMES " DB_CHARSET
				"; kyu quotes text for " DB_CHARSET
				" only, and in another character "
				"set a quoted text could end its literal. Let the session keep the "
				"character set the client asks for (no init_connect that runs SET "
				"NAMES, no proxy that rewrites it)",
				peer, names[i], v ? v : "NULL");
			return -1;
		}
	}
	if (r->cells[3] && strstr(r->cells[3], "NO_BACKSLASH_ESCAPES")) {
		snprintf(
			err, errlen,
			"cannot use %s: the session's sql_mode has NO_BACKSLASH_ESCAPES after kyu set "
			"it; kyu quotes text with backslashes (is a proxy rewriting SET statements?)",
			peer);
		return -1;
	}
	return 0;
}
