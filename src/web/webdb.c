/* A database connection of the dashboard (kyu web). See webdb.h. */
#include "webdb.h"

#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "webjson.h"

/* A little longer than WEBDB_STMT_LIMIT (webdb.h). */
#define DB_DEADLINE 8.0

void webdb_init(struct webdb *d, const struct kyu_config *cfg)
{
	d->cfg = cfg;
	d->db = db_new(NULL, DB_DEADLINE);
	d->down = (struct spell){ 0 };
}

void webdb_close(struct webdb *d)
{
	db_free(d->db);
	d->db = NULL;
}

static int run(struct webdb *d, const char *sql, size_t len, const struct db_reply **ret,
	       bool resend)
{
	const struct db_reply *reply = NULL;
	enum db_fail f = DB_LOST;

	for (int attempt = 0; attempt < (resend ? 2 : 1) && f == DB_LOST; attempt++) {
		if (!db_connected(d->db) && db_connect(d->db, d->cfg) < 0) {
			if (spell_begin(&d->down))
				log_warn("database: %s", db_error(d->db));
			return -1;
		}
		f = db_query(d->db, sql, len, &reply);
	}
	if (f != DB_OK || !reply || reply->n < 1) {
		/* Once per spell: every page refresh would repeat it. A
		 * statement that failed on a live connection ends a spell
		 * without a word: the server answered. */
		if (f == DB_LOST || !db_connected(d->db)) {
			if (spell_begin(&d->down))
				log_warn("database: %s", db_error(d->db));
		} else {
			spell_end(&d->down);
		}
		return -1;
	}
	if (spell_end(&d->down))
		log_notice("database reachable again");
	*ret = reply;
	return 0;
}

int webdb_run(struct webdb *d, const char *sql, size_t len, const struct db_result **res,
	      bool resend)
{
	const struct db_reply *reply;

	if (run(d, sql, len, &reply, resend) < 0)
		return -1;
	*res = &reply->r[reply->n - 1];
	return 0;
}

int webdb_read_each(struct webdb *d, const char *sql, size_t len, const struct db_reply **reply)
{
	return run(d, sql, len, reply, true);
}

int webdb_read(struct webdb *d, const char *sql, size_t len, const struct db_result **res)
{
	return webdb_run(d, sql, len, res, true);
}

unsigned webdb_failed(struct webdb *d, json_t **out, const char *what)
{
	return webjson_error(out, 503, "%s: database: %s", what, db_error(d->db));
}

int webdb_has_table(struct webdb *d, const char *table, bool *ret)
{
	struct strbuf sb = { 0 };
	const struct db_result *r;
	int rc;

	sb_adds(&sb, "SELECT COUNT(*) FROM information_schema.tables "
		     "WHERE table_schema = DATABASE() AND table_name = ");
	db_quotes(&sb, table);
	rc = webdb_read(d, sb.buf, sb.len, &r);
	if (rc == 0)
		*ret = r->n_rows == 1 && db_cell(r, 0, 0) && strcmp(db_cell(r, 0, 0), "0") != 0;
	sb_free(&sb);
	return rc;
}
