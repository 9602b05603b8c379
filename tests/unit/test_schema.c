/* Schema versions: the verdicts kyud and kyu check act on, reading the
 * state from a reply, and the embedded steps against sql/. */
#include <stdlib.h>

#include <mysqld_error.h>

#include "common/schema.h"
#include "check.h"

static enum schema_verdict judge(enum schema_found found, long long v, long long c, char *msg)
{
	struct schema_state st = { .found = found, .version = v, .compat = c };
	return schema_judge(&st, 2, 2, msg, 512);
}

/* A reply of two results: kyu_jobs' count, then kyu_meta's row or error. */
static void reply_of(const char *jobs, const char *version, const char *compat, unsigned meta_err,
		     struct schema_state *st)
{
	char *c0[] = { (char *)(uintptr_t)jobs }, *c1[] = { (char *)(uintptr_t)version,
							   (char *)(uintptr_t)compat };
	unsigned long l0[1] = { 0 }, l1[2] = { 0 };
	struct db_result r[2] = {
		{ .n_cols = 1, .n_rows = 1, .cells = c0, .lens = l0 },
		{ .err_no = meta_err, .err = "the server's message", .n_cols = meta_err ? 0 : 2,
		  .n_rows = meta_err ? 0 : 1, .cells = c1, .lens = l1 },
	};
	struct db_reply reply = { .fail = meta_err ? DB_ERROR : DB_OK, .n = 2, .r = r,
				  .err = meta_err ? "error" : NULL };
	schema_state_read(&reply, st);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 20);
	if (f && buf)
		buf[fread(buf, 1, (1 << 20) - 1, f)] = '\0';
	if (f)
		fclose(f);
	return buf;
}

int main(void)
{
	struct schema_state st;
	char msg[512], path[4096], want[128];
	const char *src = getenv("KYU_SRC");
	char *text;

	/* kyud knows 2, needs 2. */
	CHECK(judge(SCHEMA_FOUND, 2, 1, msg) == SCHEMA_OK);
	CHECK_STR(msg, "");
	CHECK(judge(SCHEMA_FOUND, 2, 2, msg) == SCHEMA_OK);
	CHECK(judge(SCHEMA_NO_META, 1, 1, msg) == SCHEMA_TOO_OLD);
	CONTAINS(msg, "version 1 or older (no kyu_meta table), this kyud needs version 2");
	CONTAINS(msg, "run `kyu schema upgrade`");
	CHECK(judge(SCHEMA_FOUND, 1, 1, msg) == SCHEMA_TOO_OLD);
	LACKS(msg, "or older");
	/* Newer but compatible: runs, with a notice. */
	CHECK(judge(SCHEMA_FOUND, 5, 2, msg) == SCHEMA_NEWER);
	CONTAINS(msg, "version 5, newer than the 2 this kyud knows");
	/* Needs a kyud that knows more than 2. */
	CHECK(judge(SCHEMA_FOUND, 5, 3, msg) == SCHEMA_TOO_NEW);
	CONTAINS(msg, "needs a kyud that knows version 3 or later; this one knows 2: install a newer kyu");
	/* A compat above the version (hand-edited) is still refused. */
	CHECK(judge(SCHEMA_FOUND, 2, 3, msg) == SCHEMA_TOO_NEW);

	reply_of("1", "2", "1", 0, &st);
	CHECK(st.found == SCHEMA_FOUND && st.version == 2 && st.compat == 1);
	/* kyu_meta without its row: sql/schema.sql is being loaded. */
	reply_of("1", NULL, NULL, 0, &st);
	CHECK(st.found == SCHEMA_EMPTY);
	reply_of("1", "2", NULL, 0, &st);
	CHECK(st.found == SCHEMA_FOUND && st.version == 2 && st.compat == 1);
	reply_of("1", NULL, NULL, ER_NO_SUCH_TABLE, &st);
	CHECK(st.found == SCHEMA_NO_META && st.version == 1);
	reply_of("0", NULL, NULL, ER_NO_SUCH_TABLE, &st);
	CHECK(st.found == SCHEMA_EMPTY);
	reply_of("1", NULL, NULL, ER_TABLEACCESS_DENIED_ERROR, &st);
	CHECK(st.found == SCHEMA_DENIED);
	CONTAINS(st.err, "the server's message");
	reply_of("1", NULL, NULL, ER_BAD_FIELD_ERROR, &st);
	CHECK(st.found == SCHEMA_UNREADABLE);

	/* The steps: 1..N in order, N the version this build knows, each
	 * recording its own number (step 1 is version 1's file, which has
	 * no version table). */
	CHECK(schema_n_steps == SCHEMA_VERSION);
	CHECK(SCHEMA_NEEDS <= SCHEMA_VERSION);
	for (int i = 0; i < schema_n_steps; i++) {
		CHECK(schema_steps[i].number == i + 1);
		CHECK(strlen(schema_steps[i].sql) == schema_steps[i].len);
		CONTAINS(schema_steps[i].sql, "Online");
		if (i > 0) {
			snprintf(want, sizeof(want), "('schema_version', %d)", i + 1);
			CONTAINS(schema_steps[i].sql, want);
			CONTAINS(schema_steps[i].sql, "GREATEST(value, VALUES(value))");
		}
	}
	/* sql/schema.sql records the newest version, and never lowers one. */
	CHECK(src != NULL);
	if (src) {
		snprintf(path, sizeof(path), "%s/sql/schema.sql", src);
		text = slurp(path);
		snprintf(want, sizeof(want), "('schema_version', %d)", SCHEMA_VERSION);
		CONTAINS(text, want);
		CONTAINS(text, "GREATEST(value, VALUES(value))");
		free(text);
	}
	return check_done("schema");
}
