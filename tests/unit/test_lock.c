/* kyu lock without a server: the statements on their text, the reading of
 * the acquisition's reply on replies built by hand, and the arguments. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/db.h"
#include "cli/lock.h"
#include "check.h"

static void test_acquire(void)
{
	struct strbuf sb = { 0 };

	lock_sql_acquire(&sb, "nightly", 1, 42, "web-1", 1234, 30);
	CHECK_STR(sb.buf,
		  "INSERT IGNORE INTO kyu_locks (name, slot) VALUES ('nightly', 0); "
		  "UPDATE kyu_locks SET holder = 42, host = 'web-1', pid = 1234, acquired_at = UTC_TIMESTAMP(6), "
		  "expires = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND WHERE name = 'nightly' AND slot < 1 "
		  "AND (holder IS NULL OR expires < UTC_TIMESTAMP(6)) ORDER BY slot LIMIT 1; "
		  "SELECT slot FROM kyu_locks WHERE name = 'nightly' AND holder = 42 ORDER BY slot");
	sb_reset(&sb);

	/* A pool: one row per slot, the lowest free one taken; quoting of the
	 * name and host; tokens above 2^32 printed whole. */
	lock_sql_acquire(&sb, "it's", 3, 9223372036854775807ULL, "h'1", 7, 1);
	CHECK_STR(sb.buf,
		  "INSERT IGNORE INTO kyu_locks (name, slot) VALUES ('it\\'s', 0), ('it\\'s', 1), ('it\\'s', 2); "
		  "UPDATE kyu_locks SET holder = 9223372036854775807, host = 'h\\'1', pid = 7, "
		  "acquired_at = UTC_TIMESTAMP(6), expires = UTC_TIMESTAMP(6) + INTERVAL 1 SECOND "
		  "WHERE name = 'it\\'s' AND slot < 3 AND (holder IS NULL OR expires < UTC_TIMESTAMP(6)) "
		  "ORDER BY slot LIMIT 1; "
		  "SELECT slot FROM kyu_locks WHERE name = 'it\\'s' AND holder = 9223372036854775807 ORDER BY slot");
	sb_free(&sb);
}

static void test_extend_release_list(void)
{
	struct strbuf sb = { 0 };

	lock_sql_extend(&sb, "nightly", 2, 42, 30);
	CHECK_STR(sb.buf, "UPDATE kyu_locks SET expires = UTC_TIMESTAMP(6) + INTERVAL 30 SECOND "
			  "WHERE name = 'nightly' AND slot = 2 AND holder = 42 AND expires >= UTC_TIMESTAMP(6)");
	sb_reset(&sb);
	lock_sql_release(&sb, "a\\b", 0, 42);
	CHECK_STR(sb.buf, "UPDATE kyu_locks SET holder = NULL, host = NULL, pid = NULL, acquired_at = NULL, "
			  "expires = NULL WHERE name = 'a\\\\b' AND slot = 0 AND holder = 42");
	sb_reset(&sb);
	lock_sql_list(&sb, NULL);
	CHECK(strstr(sb.buf, "FROM kyu_locks ORDER BY name, slot") != NULL);
	CHECK(strstr(sb.buf, "WHEN holder IS NULL THEN 'free'") != NULL);
	CHECK(strstr(sb.buf, "WHEN expires < UTC_TIMESTAMP(6) THEN 'expired'") != NULL);
	CHECK(strstr(sb.buf, "WHERE") == NULL);
	sb_reset(&sb);
	lock_sql_list(&sb, "x'y");
	CHECK(strstr(sb.buf, "FROM kyu_locks WHERE name = 'x\\'y' ORDER BY name, slot") != NULL);
	sb_free(&sb);
}

/* A reply of three results, the last with the given slot cells. */
static void make_reply(struct db_reply *reply, struct db_result *r, char **cells, size_t n)
{
	static const char *names[] = { "slot" };

	memset(reply, 0, sizeof(*reply));
	memset(r, 0, 3 * sizeof(*r));
	r[0].affected = 1;
	r[1].affected = n ? 1 : 0;
	r[2].n_cols = 1;
	r[2].n_rows = n;
	r[2].cells = cells;
	r[2].names = names;
	reply->n = 3;
	reply->r = r;
}

static void test_read(void)
{
	struct db_reply reply;
	struct db_result r[3];
	char *one[] = { "2" }, *two[] = { "3", "1" }, *bad[] = { "x" }, *null[] = { NULL };
	unsigned slot = 99;

	make_reply(&reply, r, NULL, 0);
	CHECK(lock_read_acquired(&reply, &slot) == 0);
	CHECK(slot == 99);
	make_reply(&reply, r, one, 1);
	CHECK(lock_read_acquired(&reply, &slot) == 1);
	CHECK(slot == 2);
	/* Two (a lost reply sent again): the lowest. */
	make_reply(&reply, r, two, 2);
	CHECK(lock_read_acquired(&reply, &slot) == 2);
	CHECK(slot == 1);
	make_reply(&reply, r, bad, 1);
	CHECK(lock_read_acquired(&reply, &slot) == -1);
	make_reply(&reply, r, null, 1);
	CHECK(lock_read_acquired(&reply, &slot) == -1);
	/* Not the shape of the acquisition. */
	make_reply(&reply, r, one, 1);
	reply.n = 2;
	CHECK(lock_read_acquired(&reply, &slot) == -1);
	make_reply(&reply, r, one, 1);
	reply.fail = DB_LOST;
	CHECK(lock_read_acquired(&reply, &slot) == -1);
}

static int parse(struct lock_opts *o, char *err, size_t errlen, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;

	va_start(ap, errlen);
	argv[argc++] = "lock";
	while (argc < 15 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	argv[argc] = NULL;
	va_end(ap);
	err[0] = '\0';
	return lock_parse_args(argc, argv, o, err, errlen);
}

static void test_args(void)
{
	struct lock_opts o;
	char err[256];

	CHECK(parse(&o, err, sizeof(err), "n", "--", "sh", "-c", "x", (char *)NULL) == 0);
	CHECK_STR(o.name, "n");
	CHECK(o.ttl == 30 && o.wait == 0 && o.slots == 1);
	CHECK(o.argc == 3);
	CHECK_STR(o.argv[0], "sh");
	CHECK_STR(o.argv[1], "-c");
	CHECK(o.argv[3] == NULL);

	/* Options before and after the name, both spellings. */
	CHECK(parse(&o, err, sizeof(err), "--ttl", "5", "n", "--wait=7", "--slots", "3", "--", "true",
		    (char *)NULL) == 0);
	CHECK(o.ttl == 5 && o.wait == 7 && o.slots == 3);
	CHECK_STR(o.name, "n");
	CHECK_STR(o.argv[0], "true");

	/* Without --: the word after the name starts the command, and its
	 * options are its own. */
	CHECK(parse(&o, err, sizeof(err), "n", "ls", "--ttl", "1", (char *)NULL) == 0);
	CHECK(o.ttl == 30 && o.argc == 3);
	CHECK_STR(o.argv[0], "ls");
	/* After --, even a word like an option is the command. */
	CHECK(parse(&o, err, sizeof(err), "n", "--", "--ttl", (char *)NULL) == 0);
	CHECK_STR(o.argv[0], "--ttl");

	CHECK(parse(&o, err, sizeof(err), "n", (char *)NULL) < 0);
	CHECK(strstr(err, "no command") != NULL);
	CHECK(parse(&o, err, sizeof(err), "n", "--", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "--", "true", (char *)NULL) < 0);
	CHECK(strstr(err, "no lock name") != NULL);
	CHECK(parse(&o, err, sizeof(err), (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--ttl", "0", "--", "true", (char *)NULL) < 0);
	CHECK(strstr(err, "--ttl: '0' is not a whole number from 1 to") != NULL);
	CHECK(parse(&o, err, sizeof(err), "n", "--ttl", "1.5", "--", "true", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--wait", "-1", "--", "true", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--wait=0", "--", "true", (char *)NULL) == 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--slots", "0", "--", "true", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--slots", "1001", "--", "true", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--slots", "1000", "--", "true", (char *)NULL) == 0);
	CHECK(parse(&o, err, sizeof(err), "n", "--ttl", (char *)NULL) < 0);
	CHECK(strstr(err, "--ttl needs a value") != NULL);
	CHECK(parse(&o, err, sizeof(err), "n", "--tt", "3", "--", "true", (char *)NULL) < 0);
	CHECK(strstr(err, "unknown option '--tt'") != NULL);
	CHECK(parse(&o, err, sizeof(err), "n", "--ttlx=3", "--", "true", (char *)NULL) < 0);
	CHECK(parse(&o, err, sizeof(err), "", "--", "true", (char *)NULL) < 0);
}

static void test_names(void)
{
	char name[4 * LOCK_NAME_MAX + 8];

	CHECK(lock_name_problem("backup") == NULL);
	CHECK(lock_name_problem("caf\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x94\x92") == NULL);
	CHECK(lock_name_problem("") != NULL);
	CHECK(lock_name_problem("\xff") != NULL);
	CHECK(lock_name_problem("\xc3") != NULL);          /* cut short */
	CHECK(lock_name_problem("\xc0\xaf") != NULL);      /* overlong */
	CHECK(lock_name_problem("\xed\xa0\x80") != NULL);  /* surrogate */
	CHECK(lock_name_problem("\xf4\x90\x80\x80") != NULL); /* above U+10FFFF */
	/* 191 characters fit, whatever their bytes; 192 do not. */
	memset(name, 'a', LOCK_NAME_MAX);
	name[LOCK_NAME_MAX] = '\0';
	CHECK(lock_name_problem(name) == NULL);
	name[LOCK_NAME_MAX] = 'a';
	name[LOCK_NAME_MAX + 1] = '\0';
	CHECK(lock_name_problem(name) != NULL);
	name[0] = '\0';
	for (int i = 0; i < LOCK_NAME_MAX; i++)
		strcat(name, "\xf0\x9f\x94\x92");
	CHECK(lock_name_problem(name) == NULL);
	strcat(name, "a");
	CHECK(lock_name_problem(name) != NULL);
}

int main(void)
{
	test_acquire();
	test_extend_release_list();
	test_read();
	test_args();
	test_names();
	return check_done("lock");
}
