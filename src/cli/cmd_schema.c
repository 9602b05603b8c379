/* kyu schema status|upgrade and kyu check: the database's schema version
 * against this build's, the upgrade steps embedded in it. See cmd_schema.h. */
#include "cmd_schema.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mysqld_error.h>

#include "common/config.h"
#include "common/db.h"
#include "common/schema.h"
#include "common/util.h"
#include "common/wake.h"
#include "cli.h"

/* An index built on a large kyu_jobs may take long; the server stops a
 * statement whose client went away, so the client must not give up. */
#define UPGRADE_DEADLINE (7 * 86400.)
/* DDL waits for the metadata lock behind open transactions on its table,
 * and every statement that comes after it waits behind the DDL: give up
 * soon rather than stall claims and INSERTs (the steps are idempotent;
 * run the upgrade again). */
#define DEFAULT_LOCK_WAIT 5

static int read_state(struct db *db, struct schema_state *st)
{
	const struct db_reply *reply;
	enum db_fail f = db_query(db, SCHEMA_STATE_SQL, strlen(SCHEMA_STATE_SQL), &reply);

	if (f == DB_LOST) {
		memset(st, 0, sizeof(*st));
		st->found = SCHEMA_UNREADABLE;
		snprintf(st->err, sizeof(st->err), "%s", db_error(db));
		return -1;
	}
	schema_state_read(reply, st);
	return st->found == SCHEMA_UNREADABLE || st->found == SCHEMA_DENIED ? -1 : 0;
}

static void print_state_error(const struct schema_state *st, const char *what)
{
	if (st->found == SCHEMA_DENIED)
		fprintf(stderr,
			"kyu: %s: cannot read the schema version, kyu_meta is not readable by this "
			"account (%s): grant it SELECT on kyu_meta, or use another account (-c FILE)\n",
			what, st->err);
	else
		fprintf(stderr, "kyu: %s: cannot read the schema version: %s\n", what, st->err);
}

static int connect_db(struct db *db, const struct kyu_config *cfg, const char *what)
{
	if (db_connect(db, cfg) == 0)
		return 0;
	fprintf(stderr, "kyu: %s: %s\n", what, db_error(db));
	return -1;
}

static int schema_status(const struct kyu_config *cfg)
{
	struct db *db = db_new(NULL, 30);
	struct schema_state st;
	int rc = 1;

	if (connect_db(db, cfg, "schema status") < 0) {
		rc = EXIT_UNAVAILABLE;
		goto out;
	}
	if (read_state(db, &st) < 0) {
		print_state_error(&st, "schema status");
		goto out;
	}
	if (st.found == SCHEMA_EMPTY)
		printf("installed\tnone (no kyu_jobs, or no version recorded, in database %s)\n",
		       cfg->db_name);
	else if (st.found == SCHEMA_NO_META)
		printf("installed\t1 (or older: no kyu_meta table)\n");
	else
		printf("installed\t%lld (compat %lld)\n", st.version, st.compat);
	printf("expected\t%d (this kyu: steps 1 to %d; kyud needs %d or newer)\n", SCHEMA_VERSION,
	       schema_n_steps, SCHEMA_NEEDS);
	if (st.found == SCHEMA_EMPTY || st.found == SCHEMA_NO_META || st.version < SCHEMA_VERSION)
		printf("upgrade needed: run `kyu schema upgrade`\n");
	else if (st.version > SCHEMA_VERSION)
		printf("the database is newer than this kyu knows\n");
	else
		printf("up to date\n");
	rc = 0;
out:
	db_free(db);
	return rc;
}

/* The version the database is at, for deciding which steps to run: 0 when
 * nothing is installed, and also without kyu_meta: such an installation
 * may be older than version 1, and step 1 brings it there. -1 when it
 * cannot be read. */
static long long current_version(struct db *db)
{
	struct schema_state st;

	if (read_state(db, &st) < 0) {
		print_state_error(&st, "schema upgrade");
		return -1;
	}
	return st.found == SCHEMA_EMPTY || st.found == SCHEMA_NO_META ? 0 : st.version;
}

static int schema_upgrade(struct kyu_config *cfg, int argc, char **argv)
{
	struct db *db = NULL;
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	int64_t lock_wait = DEFAULT_LOCK_WAIT;
	long long v;
	int c, rc = 1, applied = 0;

	optind = 1;
	while ((c = getopt(argc, argv, "u:w:")) != -1) {
		switch (c) {
		case 'u':
			/* Another account on the same server: root over the
			 * socket (unix_socket) needs no password; one that does
			 * goes in a file of its own (-c). */
			free(cfg->db_user);
			free(cfg->db_password);
			cfg->db_user = xstrdup(optarg);
			cfg->db_password = NULL;
			break;
		case 'w':
			if (parse_i64(optarg, 1, 86400, &lock_wait) < 0) {
				fprintf(stderr,
					"kyu: schema upgrade: -w: bad number of seconds '%s'\n",
					optarg);
				return EXIT_USAGE;
			}
			break;
		default:
			fprintf(stderr, "usage: kyu schema upgrade [-u USER] [-w SECONDS]\n");
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "usage: kyu schema upgrade [-u USER] [-w SECONDS]\n");
		return EXIT_USAGE;
	}
	db = db_new(NULL, UPGRADE_DEADLINE);
	if (connect_db(db, cfg, "schema upgrade") < 0) {
		rc = EXIT_UNAVAILABLE;
		goto out;
	}
	sb_printf(&sb, "SET SESSION lock_wait_timeout = %lld", (long long)lock_wait);
	if (db_query(db, sb.buf, sb.len, &reply) != DB_OK) {
		cli_die_db(db, "schema upgrade: setting lock_wait_timeout");
		goto out;
	}
	v = current_version(db);
	if (v < 0)
		goto out;
	if (v >= SCHEMA_VERSION) {
		printf("schema is at version %lld%s: nothing to do\n", v,
		       v > SCHEMA_VERSION ? ", newer than this kyu knows" : "");
		rc = 0;
		goto out;
	}
	for (int i = 0; i < schema_n_steps; i++) {
		const struct schema_step *s = &schema_steps[i];

		if (s->number <= v)
			continue;
		/* Another upgrade (another host) may have got here first:
		 * then this step is done and must not run after later ones. */
		if (applied > 0 || i > 0) {
			v = current_version(db);
			if (v < 0)
				goto out;
			if (s->number <= v) {
				printf("step %03d-%s: already applied (by another upgrade)\n",
				       s->number, s->name);
				continue;
			}
		}
		printf("step %03d-%s: applying... ", s->number, s->name);
		fflush(stdout);
		if (db_query(db, s->sql, s->len, &reply) != DB_OK) {
			unsigned e = reply && reply->n > 0 ? reply->r[reply->n - 1].err_no : 0;
			printf("failed\n");
			fprintf(stderr,
				"kyu: schema upgrade: step %03d-%s.sql failed: %s; the steps before it are "
				"applied, the ones after it are not (every step can run again)\n",
				s->number, s->name, db_error(db));
			if (e == ER_TABLEACCESS_DENIED_ERROR || e == ER_DBACCESS_DENIED_ERROR ||
			    e == ER_SPECIFIC_ACCESS_DENIED_ERROR)
				fprintf(stderr,
					"kyu: schema upgrade: it needs an account that may create and "
					"alter kyu's tables (e.g. -u root on the database host)\n");
			if (e == ER_LOCK_WAIT_TIMEOUT)
				fprintf(stderr,
					"kyu: schema upgrade: a transaction held the table for more "
					"than -w %lld s; try again, or with a larger -w\n",
					(long long)lock_wait);
			goto out;
		}
		printf("done\n");
		applied++;
	}
	v = current_version(db);
	if (v < 0)
		goto out;
	if (v < SCHEMA_VERSION) {
		fprintf(stderr,
			"kyu: schema upgrade: the steps ran but the database records version %lld, "
			"not %d\n",
			v, SCHEMA_VERSION);
		goto out;
	}
	printf("schema is now at version %lld\n", v);
	rc = 0;
out:
	sb_free(&sb);
	db_free(db);
	return rc;
}

int cmd_schema(struct kyu_config *cfg, int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "status") == 0)
		return schema_status(cfg);
	if (argc >= 2 && strcmp(argv[1], "upgrade") == 0)
		return schema_upgrade(cfg, argc - 1, argv + 1);
	fprintf(stderr, "usage: kyu schema status | kyu schema upgrade [-u USER] [-w SECONDS]\n");
	return EXIT_USAGE;
}

/* ---- kyu check ------------------------------------------------------------ */

/* What kyud does to each table (README.md, kyu_jobs(7)), and a statement
 * that needs exactly that privilege: EXPLAIN checks the privileges of the
 * statement it explains, roles included, and touches no row. */
static const struct {
	const char *table, *priv, *sql;
} kyud_needs[] = {
	{ "kyu_jobs", "SELECT", "EXPLAIN SELECT * FROM kyu_jobs WHERE 0" },
	{ "kyu_jobs", "INSERT", "EXPLAIN INSERT INTO kyu_jobs () VALUES ()" },
	{ "kyu_jobs", "UPDATE", "EXPLAIN UPDATE kyu_jobs SET status = DEFAULT WHERE 0" },
	{ "kyu_jobs", "DELETE", "EXPLAIN DELETE FROM kyu_jobs WHERE 0" },
	{ "kyu_queues", "SELECT", "EXPLAIN SELECT * FROM kyu_queues WHERE 0" },
	{ "kyu_queues", "UPDATE", "EXPLAIN UPDATE kyu_queues SET paused = DEFAULT WHERE 0" },
	{ "kyu_queue_starts", "SELECT", "EXPLAIN SELECT * FROM kyu_queue_starts WHERE 0" },
	{ "kyu_queue_starts", "INSERT", "EXPLAIN INSERT INTO kyu_queue_starts () VALUES ()" },
	{ "kyu_queue_starts", "DELETE", "EXPLAIN DELETE FROM kyu_queue_starts WHERE 0" },
	/* The fan's walk of queue names (schema version 10). */
	{ "kyu_queue_names", "SELECT", "EXPLAIN SELECT * FROM kyu_queue_names WHERE 0" },
	{ "kyu_queue_names", "INSERT", "EXPLAIN INSERT INTO kyu_queue_names () VALUES ()" },
	{ "kyu_queue_names_new", "SELECT", "EXPLAIN SELECT * FROM kyu_queue_names_new WHERE 0" },
	{ "kyu_queue_names_new", "DELETE", "EXPLAIN DELETE FROM kyu_queue_names_new WHERE 0" },
	{ "kyu_schedules", "SELECT", "EXPLAIN SELECT * FROM kyu_schedules WHERE 0" },
	{ "kyu_schedules", "UPDATE", "EXPLAIN UPDATE kyu_schedules SET enabled = DEFAULT WHERE 0" },
	{ "kyu_meta", "SELECT", "EXPLAIN SELECT * FROM kyu_meta WHERE 0" },
	{ "kyu_daemons", "SELECT", "EXPLAIN SELECT * FROM kyu_daemons WHERE 0" },
	{ "kyu_daemons", "INSERT", "EXPLAIN INSERT INTO kyu_daemons () VALUES ()" },
	{ "kyu_daemons", "UPDATE", "EXPLAIN UPDATE kyu_daemons SET queues = DEFAULT WHERE 0" },
	{ "kyu_daemons", "DELETE", "EXPLAIN DELETE FROM kyu_daemons WHERE 0" },
	{ "kyu_minutes", "SELECT", "EXPLAIN SELECT * FROM kyu_minutes WHERE 0" },
	{ "kyu_minutes", "INSERT", "EXPLAIN INSERT INTO kyu_minutes () VALUES ()" },
	{ "kyu_minutes", "UPDATE", "EXPLAIN UPDATE kyu_minutes SET succeeded = DEFAULT WHERE 0" },
	{ "kyu_minutes", "DELETE", "EXPLAIN DELETE FROM kyu_minutes WHERE 0" },
	/* [kyud] history; the job's DELETE removes its rows by trigger. */
	{ "kyu_attempts", "INSERT", "EXPLAIN INSERT INTO kyu_attempts () VALUES ()" },
	/* Workflows: the claim looks for items, retention reads the edges,
	 * and kyud calls the procedure (which acts as its definer). */
	{ "kyu_after", "SELECT", "EXPLAIN SELECT * FROM kyu_after WHERE 0" },
	{ "kyu_after_todo", "SELECT", "EXPLAIN SELECT * FROM kyu_after_todo WHERE 0" },
	{ "kyu_settle", "EXECUTE", "CALL kyu_settle(0)" },
};

/* One line per problem, on stderr. */
__attribute__((format(printf, 1, 2))) static void problem(const char *fmt, ...)
{
	va_list ap;

	fputs("kyu: check: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int check_privileges(struct db *db, const struct kyu_config *cfg)
{
	const char *missing = NULL;
	int problems = 0;

	for (size_t i = 0; i < sizeof(kyud_needs) / sizeof(kyud_needs[0]); i++) {
		const struct db_reply *reply;
		unsigned e;

		if (missing && strcmp(missing, kyud_needs[i].table) == 0)
			continue;
		if (db_query(db, kyud_needs[i].sql, strlen(kyud_needs[i].sql), &reply) == DB_OK)
			continue;
		problems++;
		e = reply->n > 0 ? reply->r[reply->n - 1].err_no : 0;
		if (e == ER_NO_SUCH_TABLE) {
			/* One line for the table, not one per privilege. */
			missing = kyud_needs[i].table;
			problem("table %s: missing in database %s (run `kyu schema upgrade`)",
				missing, cfg->db_name);
		} else {
			problem("privilege: %s on %s is not granted to %s (%s)", kyud_needs[i].priv,
				kyud_needs[i].table, cfg->db_user ? cfg->db_user : "(default user)",
				db_error(db));
		}
		if (!db_connected(db))
			break;
	}
	return problems;
}

static int check_schema(struct db *db, char *ok, size_t oklen)
{
	struct schema_state st;
	char msg[512];

	if (read_state(db, &st) < 0) {
		if (st.found == SCHEMA_DENIED)
			problem("schema: kyu_meta is not readable: %s", st.err);
		else
			problem("schema: cannot read the version: %s", st.err);
		return 1;
	}
	if (st.found == SCHEMA_EMPTY) {
		problem("schema: nothing installed (no kyu_jobs, or no version recorded in kyu_meta): "
			"run `kyu schema upgrade` or load sql/schema.sql");
		return 1;
	}
	switch (schema_judge(&st, SCHEMA_VERSION, SCHEMA_NEEDS, msg, sizeof(msg))) {
	case SCHEMA_OK:
		snprintf(ok, oklen, "schema version %lld", st.version);
		return 0;
	case SCHEMA_NEWER:
		snprintf(ok, oklen, "schema version %lld (newer, compatible)", st.version);
		return 0;
	case SCHEMA_TOO_OLD:
	case SCHEMA_TOO_NEW:
		break;
	}
	problem("schema: %s", msg);
	return 1;
}

/* The wake-up address must parse and be an address of this host that
 * kyud can bind; in use is fine (most likely the running kyud). */
static int check_listen(const struct kyu_config *cfg, char *ok, size_t oklen)
{
	char err[256];
	int fd;

	if (!cfg->listen || !*cfg->listen) {
		snprintf(ok, oklen, "wake-ups off");
		return 0;
	}
	fd = wake_socket(cfg->listen, true, err, sizeof(err));
	if (fd >= 0) {
		close(fd);
		snprintf(ok, oklen, "listen %s free", cfg->listen);
		return 0;
	}
	if (fd == -EADDRINUSE) {
		snprintf(ok, oklen, "listen %s in use (by a running kyud?)", cfg->listen);
		return 0;
	}
	problem("listen: [kyud] listen = '%s' in %s cannot be bound: %s", cfg->listen, cfg->path,
		err);
	return 1;
}

int cmd_check(const char *path, int argc, char **argv)
{
	struct kyu_config cfg;
	struct db *db = NULL;
	char err[512], schema_ok[128] = "", listen_ok[128] = "";
	int problems = 0;

	(void)argv;
	if (argc != 1) {
		fprintf(stderr, "usage: kyu [-c FILE] check\n");
		return EXIT_USAGE;
	}
	if (config_load(path, &cfg, err, sizeof(err)) < 0) {
		problem("config: %s", err);
		return 1;
	}
	problems += check_listen(&cfg, listen_ok, sizeof(listen_ok));
	db = db_new(NULL, 30);
	if (db_connect(db, &cfg) < 0) {
		problem("connection: %s", db_error(db));
		problems++;
	} else {
		problems += check_privileges(db, &cfg);
		if (db_connected(db))
			problems += check_schema(db, schema_ok, sizeof(schema_ok));
	}
	if (problems == 0)
		printf("ok: %s: connected to %s as %s; privileges; %s; %s\n", cfg.path,
		       cfg.db_name ? cfg.db_name : "(default database)",
		       cfg.db_user ? cfg.db_user : "(default user)", schema_ok, listen_ok);
	db_free(db);
	config_free(&cfg);
	return problems ? 1 : 0;
}
