/* The replies of round trips (db_reply.h). */
#include "db_reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysql.h>

#include "util.h"

struct db_reply_stored {
	MYSQL_RES *res;
	char err[256];
};

void db_reply_reset(struct db_reply_store *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->st[i].res)
			mysql_free_result(s->st[i].res);
		free(s->r[i].cells);
		free(s->r[i].lens);
		free(s->r[i].names);
		free(s->r[i].numeric);
	}
	s->n = 0;
	memset(&s->reply, 0, sizeof(s->reply));
}

void db_reply_drop_rows(struct db_reply_store *s)
{
	for (int i = 0; i < s->n; i++) {
		if (s->st[i].res)
			mysql_free_result(s->st[i].res);
		s->st[i].res = NULL;
		free(s->r[i].cells);
		free(s->r[i].lens);
		free(s->r[i].names);
		free(s->r[i].numeric);
		s->r[i].cells = NULL;
		s->r[i].lens = NULL;
		s->r[i].names = NULL;
		s->r[i].numeric = NULL;
		s->r[i].n_rows = 0;
	}
}

struct db_result *db_reply_add(struct db_reply_store *s)
{
	struct db_result *r;
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 4;
		s->r = xrealloc(s->r, (size_t)s->cap * sizeof(*s->r));
		s->st = xrealloc(s->st, (size_t)s->cap * sizeof(*s->st));
	}
	r = &s->r[s->n];
	memset(r, 0, sizeof(*r));
	memset(&s->st[s->n], 0, sizeof(s->st[0]));
	s->n++;
	return r;
}

void db_reply_add_error(struct db_reply_store *s, struct st_mysql *my)
{
	struct db_result *r = db_reply_add(s);
	struct db_reply_stored *st = &s->st[s->n - 1];
	r->err_no = mysql_errno(my);
	snprintf(st->err, sizeof(st->err), "%s", mysql_error(my));
	r->err = st->err;
	if (!r->err_no)
		r->err_no = CR_UNKNOWN_ERROR;
}

void db_reply_add_rows(struct db_reply_store *s, struct st_mysql_res *res)
{
	struct db_result *r = db_reply_add(s);
	MYSQL_ROW row;
	size_t i = 0;

	s->st[s->n - 1].res = res;
	r->n_cols = mysql_num_fields(res);
	r->n_rows = (size_t)mysql_num_rows(res);
	r->cells = xcalloc(r->n_rows * r->n_cols + 1, sizeof(*r->cells));
	r->lens = xcalloc(r->n_rows * r->n_cols + 1, sizeof(*r->lens));
	r->names = xcalloc(r->n_cols + 1, sizeof(*r->names));
	r->numeric = xcalloc(r->n_cols + 1, sizeof(*r->numeric));
	for (unsigned c = 0; c < r->n_cols; c++) {
		const MYSQL_FIELD *f = mysql_fetch_field_direct(res, c);
		r->names[c] = f->name;
		r->numeric[c] = IS_NUM(f->type);
	}
	/* A stored result is all in memory: fetching does no I/O. */
	while (i < r->n_rows && (row = mysql_fetch_row(res))) {
		unsigned long *lens = mysql_fetch_lengths(res);
		for (unsigned c = 0; c < r->n_cols; c++) {
			r->cells[i * r->n_cols + c] = row[c];
			r->lens[i * r->n_cols + c] = lens[c];
		}
		i++;
	}
}

void db_reply_free(struct db_reply_store *s)
{
	free(s->r);
	free(s->st);
}
