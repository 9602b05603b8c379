/* What the commands of kyu (the cmd_*.c files) share: printing a result,
 * reporting a failed statement, waking kyud, building the JSON columns
 * from arguments. Its own module (cli.c) below the commands and main.c, so
 * that the commands depend on it and on nothing above them: main.c
 * dispatches to the cmd_*.c files, which use this, never main.c. */
#ifndef KYU_CLI_H
#define KYU_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"

/* The status of every usage error of kyu: an unknown command or option, a
 * bad option value, the wrong number of arguments (EX_USAGE). */
#define EXIT_USAGE 64
/* The status of every command that could not connect to the database
 * (EX_UNAVAILABLE, as kyu lock's): nothing was done, and trying again once
 * the server answers may succeed. Other failures exit 1. */
#define EXIT_UNAVAILABLE 69
/* How a job that was waited for ended, when not succeeded (0): the exit
 * statuses of kyu logs -f and kyu wait. */
#define EXIT_JOB_FAILED 2
#define EXIT_JOB_CANCELLED 3

/* One time format across kyu's tables: a DATETIME as the server prints
 * it, then the zone the session reads it in (the server's own when the
 * session's is SYSTEM), "2026-11-24 06:35:00.123456 UTC"; NULL stays
 * NULL. kyu_jobs' and kyu_daemons' times are in that zone; kyu_schedules'
 * and kyu_locks' are UTC, and CLI_UTC_TIME converts them to it first, so
 * that every time kyu prints reads in one zone. */
#define CLI_ZONE "IF(@@session.time_zone = 'SYSTEM', @@system_time_zone, @@session.time_zone)"
#define CLI_TIME(col) "CONCAT(" col ", ' ', " CLI_ZONE ") AS " col
#define CLI_UTC_TIME(expr)                                                                         \
	"CONCAT(CONVERT_TZ(" expr ", '+00:00', @@session.time_zone), ' ', " CLI_ZONE ")"

/* Print "kyu: WHAT: <the database's error>"; returns 1, the exit status. */
int cli_die_db(struct db *db, const char *what);
/* Run a statement and print its result set in the form main chose
 * (table.h): rows, or one "column: value" line each (vertical). Returns
 * the row count or -1. */
KYU_MUSTCHECK int cli_print_query(struct db *db, const char *sql, size_t len, bool vertical);
/* The printing of cli_print_query, for a result already read. */
void cli_print_result(const struct db_result *r, bool vertical);
/* One "name: value" line as cli_print_query's vertical form writes it
 * (v NULL: "NULL", or "-" in the table form, which also reads the value
 * as table.h says), with suffix (NULL: none) after the value, as is. */
void cli_print_field(const char *name, const char *v, size_t len, const char *suffix);
/* Send "kyu:QUEUE" to every live daemon of kyu_daemons that serves QUEUE
 * ("" : any queue, all of them; it also makes kyud read kyu_schedules
 * again), or, when there is none or the table cannot be read, to [kyud]
 * listen. 0 when one send succeeded, else -1 (with a message unless
 * quiet). */
int cli_send_wake(struct db *db, const struct kyu_config *cfg, const char *queue, bool quiet);
/* When no live daemon of kyu_daemons serves queue, say so on stderr (what
 * names the command): its jobs wait until one does. Silent when the table
 * cannot be read (an older schema, an account without the privilege). */
void cli_warn_unserved(struct db *db, const char *queue, const char *what);
/* Add "-e NAME=VALUE" to env; -1 with a message naming cmd and arg. */
KYU_MUSTCHECK int cli_env_add(json_t *env, char *arg, const char *cmd);
/* The argv column for argv[0..argc-1] (malloc'd JSON), or NULL with a
 * message when an argument is not UTF-8. */
char *cli_argv_json(int argc, char **argv, const char *cmd);

/* kyu list -s and the bulk actions' --status: the statuses of kyu_jobs,
 * and "retrying" (waiting after a failed attempt, as the dashboard's
 * Retrying page); NULL-terminated. */
extern const char *const cli_statuses[];

#endif
