/* The benchmark helpers that use kyuworker (src/common/config.c, src/common/db.c): only the
 * programs linked to it (limit, latency) have this file; common.h declares
 * them. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/db.h"
#include "common/util.h"

/* One "key = value" line of an ini text; values with what inih would read
 * differently (a comment, a line break) are refused. */
static void ini_line(struct bench_buf *b, const char *key, const char *value)
{
	if (value == NULL)
		return;
	if (strpbrk(value, ";#\r\n") != NULL) {
		fprintf(stderr, "bench: %s must not contain ';', '#' or a line break\n", key);
		exit(2);
	}
	bench_buf_printf(b, "%s = %s\n", key, value);
}

void bench_kyu_config(const struct bench_db *db, const char *kyud, struct kyu_config *cfg)
{
	struct bench_buf b = { 0 };
	char err[512], port[16];

	snprintf(port, sizeof port, "%u", db->port);
	bench_buf_printf(&b, "[database]\n");
	ini_line(&b, "host", db->host);
	ini_line(&b, "port", port);
	ini_line(&b, "socket", db->socket && *db->socket ? db->socket : NULL);
	ini_line(&b, "user", db->user);
	ini_line(&b, "password", db->password);
	ini_line(&b, "database", db->database);
	bench_buf_printf(&b, "[kyud]\n%s\n", kyud ? kyud : "");
	if (config_parse("bench.ini", b.p, b.len, cfg, err, sizeof err) != 0) {
		fprintf(stderr, "bench: %s\n", err);
		exit(2);
	}
	free(b.p);
}

struct db *bench_kyu_connect(const struct kyu_config *cfg, double deadline)
{
	struct db *db = db_new(NULL, deadline);
	if (db_connect(db, cfg) != 0) {
		fprintf(stderr, "bench: connect: %s\n", db_error(db));
		exit(1);
	}
	return db;
}

const struct db_reply *bench_kyu_query(struct db *db, const char *sql, size_t len)
{
	const struct db_reply *r;
	enum db_fail f = db_query(db, sql, len, &r);
	if (f == DB_OK || f == DB_RETRY)
		return r;
	fprintf(stderr, "bench: query failed: %s\n  %.200s\n", r->err ? r->err : db_error(db), sql);
	exit(1);
}

void bench_kyu_print(const struct db_reply *r)
{
	for (int i = 0; i < r->n; i++) {
		const struct db_result *res = &r->r[i];
		for (size_t row = 0; row < res->n_rows; row++) {
			for (unsigned c = 0; c < res->n_cols; c++) {
				const char *v = db_cell(res, row, c);
				printf("%s%s", c ? "\t" : "", v ? v : "NULL");
			}
			printf("\n");
		}
	}
}
