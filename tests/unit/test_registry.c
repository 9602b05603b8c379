/* The daemon registry: tokens, the refresh and remove statements, and what
 * their replies say. */
#include <stdint.h>
#include <string.h>

#include <mysqld_error.h>

#include "common/config.h"
#include "common/registry.h"
#include "check.h"

/* The reply of a refresh or remove that failed: the handler's row of the
 * error number and message, then the compound statement's OK. */
static enum registry_result read_of(const char *errno_text, const char *msg, char *out)
{
	char *cells[] = { (char *)(uintptr_t)errno_text, (char *)(uintptr_t)msg };
	unsigned long lens[2] = { 0 };
	struct db_result r[2] = { { .n_cols = 2, .n_rows = 1, .cells = cells, .lens = lens },
				  { .affected = 0 } };
	struct db_reply reply = { .fail = DB_OK, .n = 2, .r = r };

	return registry_read(&reply, out, 256);
}

/* One that was done: the compound statement's OK alone. */
static enum registry_result read_done(char *out)
{
	struct db_result r[1] = { { .affected = 1 } };
	struct db_reply reply = { .fail = DB_OK, .n = 1, .r = r };

	return registry_read(&reply, out, 256);
}

static int parse(const char *text, struct kyu_config *cfg, char *err)
{
	return config_parse("t.ini", text, strlen(text), cfg, err, 256);
}

int main(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	char id[REGISTRY_ID_MAX], msg[256], err[256];
	struct db_reply lost = { .fail = DB_LOST, .err = "gone" };

	registry_make_id(id, sizeof(id), "web-1.example", 4242);
	CHECK(strncmp(id, "web-1.example:4242:", 19) == 0 && strlen(id) == 19 + 16);
	CHECK(registry_id_valid(id));
	/* Whatever the host name holds, the token is one --daemon-id takes. */
	registry_make_id(id, sizeof(id), "we'ird \\host:x", 1);
	CHECK(registry_id_valid(id) && strncmp(id, "we_ird__host_x:1:", 17) == 0);
	CHECK(!registry_id_valid(""));
	CHECK(!registry_id_valid("a'b"));
	CHECK(!registry_id_valid("a b"));

	CHECK(parse("[kyud]\nlease = 60\nqueues = mail, bulk\nlisten = 127.0.0.3:7711\n", &cfg, err) == 0);
	/* Twice the lease: the default lease refreshes every 120 s. */
	CHECK(registry_interval(&cfg) == 120.0);
	registry_refresh_build(&sb, &cfg, "h:1:ab", "h", 1, 5, false);
	CHECK(strncmp(sb.buf, "SET STATEMENT innodb_lock_wait_timeout = 0 FOR BEGIN NOT ATOMIC ", 64) == 0);
	CHECK(strstr(sb.buf, "INSERT INTO kyu_daemons") != NULL);
	CHECK(strstr(sb.buf, "'h:1:ab', 'h', 1, '127.0.0.3:7711', 'mail,bulk', ") != NULL);
	/* Its slots (2 workers x 8 by default) and running jobs, written on
	 * every refresh; the drain read only when set. */
	CHECK(strstr(sb.buf, "', 16, 5, NOW(6), NOW(6), ") != NULL);
	CHECK(strstr(sb.buf, "slots = VALUES(slots), running = VALUES(running)") != NULL);
	CHECK(strstr(sb.buf, "IF (SELECT drain FROM kyu_daemons WHERE id = 'h:1:ab') IS NOT NULL THEN "
			     "SELECT 'kyu_drain', drain, drain_by FROM kyu_daemons WHERE id = 'h:1:ab'; END IF; ") != NULL);
	CHECK(strstr(sb.buf, "NOW(6) + INTERVAL 360 SECOND") != NULL);
	CHECK(strstr(sb.buf, "DELETE FROM kyu_daemons WHERE live_until < NOW(6)") != NULL);
	/* Only when an expired row exists, tested in a condition (which the
	 * server counts as no statement). */
	CHECK(strstr(sb.buf, "IF (SELECT MIN(live_until) FROM kyu_daemons) < NOW(6) THEN") != NULL);
	CHECK(strstr(sb.buf, "DECLARE EXIT HANDLER FOR SQLEXCEPTION") != NULL);
	sb_free(&sb);
	config_free(&cfg);
	/* A long lease: at most every 600 s. */
	CHECK(parse("[kyud]\nlease = 3600\n", &cfg, err) == 0);
	CHECK(registry_interval(&cfg) == REGISTRY_MAX_INTERVAL);
	config_free(&cfg);
	/* No listen: no address; a short lease still refreshes every 20 s. */
	CHECK(parse("[kyud]\nlease = 6\nlisten =\n", &cfg, err) == 0);
	CHECK(registry_interval(&cfg) == REGISTRY_MIN_INTERVAL);
	registry_refresh_build(&sb, &cfg, "h:1:ab", "h", 1, 0, false);
	CHECK(strstr(sb.buf, "'h', 1, NULL, '', ") != NULL);
	sb_free(&sb);
	/* On a schema older than version 9: as before it. */
	registry_refresh_build(&sb, &cfg, "h:1:ab", "h", 1, 3, true);
	CHECK(strstr(sb.buf, "(id, host, pid, wake_addr, queues, version, started, last_seen, live_until)") != NULL);
	CHECK(strstr(sb.buf, "slots") == NULL && strstr(sb.buf, "drain") == NULL);
	sb_free(&sb);
	config_free(&cfg);
	registry_remove_build(&sb, "h:1:ab");
	CHECK(strstr(sb.buf, "DELETE FROM kyu_daemons WHERE id = 'h:1:ab'") != NULL);
	CHECK(strncmp(sb.buf, "SET STATEMENT innodb_lock_wait_timeout = 2 FOR ", 47) == 0);
	sb_free(&sb);

	CHECK(read_done(msg) == REG_DONE);
	{
		/* Written, and asked to drain: the row, then the OK. */
		char *cells[] = { "kyu_drain", "2026-11-29 03:00:00.000000", "ops@db1" };
		unsigned long lens[3] = { 0 };
		struct db_result r[2] = { { .n_cols = 3, .n_rows = 1, .cells = cells, .lens = lens },
					  { .affected = 0 } };
		struct db_reply reply = { .fail = DB_OK, .n = 2, .r = r };

		CHECK(registry_read(&reply, msg, sizeof(msg)) == REG_DRAIN);
		CHECK(strcmp(msg, "2026-11-29 03:00:00.000000 by ops@db1") == 0);
		cells[2] = NULL;
		CHECK(registry_read(&reply, msg, sizeof(msg)) == REG_DRAIN);
		CHECK(strcmp(msg, "2026-11-29 03:00:00.000000") == 0);
	}
	CHECK(read_of("0", NULL, msg) == REG_FAILED);
	CHECK(read_of("1205", "Lock wait timeout exceeded", msg) == REG_LOCKED);
	CHECK(read_of("1213", "Deadlock found", msg) == REG_LOCKED);
	CHECK(read_of("1146", "Table 'k.kyu_daemons' doesn't exist", msg) == REG_MISSING);
	CHECK(strstr(msg, "kyu_daemons") != NULL);
	CHECK(read_of("1142", "INSERT command denied", msg) == REG_FAILED);
	CHECK(strcmp(msg, "INSERT command denied") == 0);
	CHECK(read_of("1054", "Unknown column 'slots' in 'INSERT INTO'", msg) == REG_OLD);
	CHECK(registry_read(&lost, msg, sizeof(msg)) == REG_FAILED);
	return check_done("registry");
}
