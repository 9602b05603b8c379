/* Schema versions: which versions of the database schema this build knows,
 * the rule that says whether a database can be worked on. See schema.h. */
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mysqld_error.h>

static bool read_number(const struct db_result *r, unsigned col, long long *v)
{
	const char *c;
	char *end;

	if (r->n_rows != 1 || r->n_cols <= col || !(c = db_cell(r, 0, col)))
		return false;
	*v = strtoll(c, &end, 10);
	return end != c && *end == '\0';
}

void schema_state_read(const struct db_reply *reply, struct schema_state *st)
{
	const struct db_result *meta;
	long long n_jobs = 0;

	memset(st, 0, sizeof(*st));
	st->found = SCHEMA_UNREADABLE;
	if (reply->n < 1 || reply->r[0].err_no || !read_number(&reply->r[0], 0, &n_jobs)) {
		snprintf(st->err, sizeof(st->err), "%s", reply->err ? reply->err : "no reply");
		return;
	}
	if (reply->n < 2) {
		snprintf(st->err, sizeof(st->err), "%s",
			 reply->err ? reply->err : "no reply from kyu_meta");
		return;
	}
	meta = &reply->r[1];
	switch (meta->err_no) {
	case 0:
		break;
	case ER_NO_SUCH_TABLE:
		/* Version 1 had no version table: every installation without
		 * one is of version 1 or older, and step 1 brings older ones
		 * to version 1. */
		st->found = n_jobs > 0 ? SCHEMA_NO_META : SCHEMA_EMPTY;
		st->version = st->compat = n_jobs > 0;
		return;
	case ER_TABLEACCESS_DENIED_ERROR:
	case ER_COLUMNACCESS_DENIED_ERROR:
		/* Also what an account with grants on single tables gets for a
		 * kyu_meta that does not exist yet. */
		st->found = SCHEMA_DENIED;
		snprintf(st->err, sizeof(st->err), "%s", meta->err);
		return;
	default:
		snprintf(st->err, sizeof(st->err), "error %u: %s", meta->err_no, meta->err);
		return;
	}
	/* sql/schema.sql creates kyu_meta first and records the version
	 * last: without the row, it is still being loaded (or stopped
	 * part-way), which is no version at all. */
	if (!read_number(meta, 0, &st->version)) {
		st->found = SCHEMA_EMPTY;
		st->version = st->compat = 0;
		return;
	}
	if (!read_number(meta, 1, &st->compat))
		st->compat = 1;
	st->found = SCHEMA_FOUND;
}

enum schema_verdict schema_judge(const struct schema_state *st, int knows, int needs, char *msg,
				 size_t len)
{
	const char *older = st->found == SCHEMA_NO_META ? " or older (no kyu_meta table)" : "";

	msg[0] = '\0';
	if (st->version < needs) {
		snprintf(msg, len,
			 "database schema is version %lld%s, this kyud needs version %d: "
			 "run `kyu schema upgrade` (kyu(1)), then start kyud again",
			 st->version, older, needs);
		return SCHEMA_TOO_OLD;
	}
	if (st->compat > knows) {
		snprintf(
			msg, len,
			"database schema is version %lld and needs a kyud that knows version %lld or "
			"later; this one knows %d: install a newer kyu",
			st->version, st->compat, knows);
		return SCHEMA_TOO_NEW;
	}
	if (st->version > knows) {
		snprintf(msg, len,
			 "database schema is version %lld, newer than the %d this kyud knows, and "
			 "compatible with it (schema_compat %lld): running",
			 st->version, knows, st->compat);
		return SCHEMA_NEWER;
	}
	return SCHEMA_OK;
}

bool schema_is_refusal(unsigned err_no)
{
	return err_no == ER_SIGNAL_EXCEPTION ||
	       (err_no >= SCHEMA_ERR_FIRST && err_no <= SCHEMA_ERR_LAST);
}
