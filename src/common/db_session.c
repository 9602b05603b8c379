/* The server and the options of a kyu session (db_session.h). */
#include "db_session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysql.h>

#include "util.h"

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
			memmove(&s->hosts[i], &s->hosts[i + 1], (size_t)(s->n_hosts - 1 - i) * sizeof(h));
			s->hosts[s->n_hosts - 1] = h;
			break;
		}
	}
	s->avoid[0] = '\0';
}

void db_session_free(struct db_session *s)
{
	free(s->user);
	free(s->password);
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
		rc = hosts_parse(cfg->db_host, (unsigned)cfg->db_port, s->hosts, HOSTS_MAX, &s->n_hosts);
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

struct st_mysql *db_session_open(const struct db_session *s, bool in_loop, char *peer, size_t peerlen)
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
	mysql_options(my, MYSQL_INIT_COMMAND,
		      in_loop ? "SET SESSION innodb_lock_wait_timeout = 1, " SQL_MODE
			      : "SET SESSION innodb_lock_wait_timeout = 3, " SQL_MODE);
	/* Under REPEATABLE READ the claim's ORDER BY ... LIMIT scan takes gap
	 * locks that make concurrent claims and finishes deadlock; READ
	 * COMMITTED locks only the rows it marks (notes/DESIGN.md). */
	mysql_options(my, MYSQL_INIT_COMMAND, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
	mysql_options(my, MYSQL_INIT_COMMAND, "SET " DB_SESSION_START " = NOW(6)");
	mysql_options(my, MYSQL_SET_CHARSET_NAME, "utf8mb4");
	return my;
}
