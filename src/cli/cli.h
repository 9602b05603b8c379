/* What the commands of kyu (src/cli/main.c, src/cli/cmd_schedule.c) share: printing
 * a result, reporting a failed statement, waking kyud, building the JSON
 * columns from arguments. */
#ifndef KYU_CLI_H
#define KYU_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/config.h"
#include "common/db.h"

/* The status of every usage error of kyu: an unknown command or option, a
 * bad option value, the wrong number of arguments (EX_USAGE). */
#define EXIT_USAGE 64

/* Print "kyu: WHAT: <the database's error>"; returns 1, the exit status. */
int die_db(struct db *db, const char *what);
/* Run a statement and print its result set as tab-separated rows (or one
 * "column: value" line each, vertical). Returns the row count or -1. */
int print_query(struct db *db, const char *sql, size_t len, bool vertical);
/* Send "kyu:QUEUE" to every live daemon of kyu_daemons that serves QUEUE
 * ("" : any queue, all of them; it also makes kyud read kyu_schedules
 * again), or, when there is none or the table cannot be read, to [kyud]
 * listen. 0 when one send succeeded, else -1 (with a message unless
 * quiet). */
int send_wake(struct db *db, const struct kyu_config *cfg, const char *queue, bool quiet);
/* Add "-e NAME=VALUE" to env; -1 with a message naming cmd and arg. */
int cli_env_add(json_t *env, char *arg, const char *cmd);
/* The argv column for argv[0..argc-1] (malloc'd JSON), or NULL with a
 * message when an argument is not UTF-8. */
char *cli_argv_json(int argc, char **argv, const char *cmd);

/* kyu schedules; kyu schedule add|enable|disable|run-now|remove. */
int cmd_schedules(struct db *db);
int cmd_schedule(struct db *db, const struct kyu_config *cfg, int argc, char **argv);

/* kyu schema status|upgrade (cmd_schema.c); upgrade may replace the
 * account in cfg (-u). */
int cmd_schema(struct kyu_config *cfg, int argc, char **argv);
/* kyu check: reads the file at path itself (its errors are problems). */
int cmd_check(const char *path, int argc, char **argv);

#endif
