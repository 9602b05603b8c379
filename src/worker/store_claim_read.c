/* Reading the claim's reply: the rows it took, checked as they come out of
 * the result set, and what else its statements answered (the directory,
 * the next due time, the settle probe, the fan's walk). The other half of
 * store_claim.h, apart from store_claim.c, which builds the statements. */
#include "store_claim.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static char *dup_field(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* A text column with a NUL byte would be cut short by every C string
 * function on the way to exec: such a row is refused, not run shortened. */
static void check_nul(struct claimed *c, const struct db_result *r, size_t row, unsigned col,
		      const char *name)
{
	const char *v = db_cell(r, row, col);
	const char *z;
	char msg[128];

	if (c->bad || !v)
		return;
	z = memchr(v, 0, r->lens[row * r->n_cols + col]);
	if (!z)
		return;
	snprintf(msg, sizeof(msg), "%s contains a NUL byte (at byte %zu): refused", name,
		 (size_t)(z - v));
	c->bad = xstrdup(msg);
}

static bool all_zero(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != '0')
			return false;
	return true;
}

/* The INSERT trigger kyu_jobs_traceparent_check refuses a bad value, but
 * an UPDATE can write one after it: checked again here, the same rule
 * (W3C Trace Context: VV-TRACEID-PARENTID-FLAGS, lowercase hex, version
 * not ff, ids not all zeros), so that a job never sees a value its
 * tracer would choke on. */
bool store_traceparent_valid(const char *tp)
{
	static const char shape[] = "xx-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx-xxxxxxxxxxxxxxxx-xx";

	if (strlen(tp) != sizeof(shape) - 1)
		return false;
	for (size_t i = 0; shape[i]; i++) {
		if (shape[i] == '-' ? tp[i] != '-' : !strchr("0123456789abcdef", tp[i]) || !tp[i])
			return false;
	}
	return strncmp(tp, "ff", 2) != 0 && !all_zero(tp + 3, 32) && !all_zero(tp + 36, 16);
}

static void check_traceparent(struct claimed *c)
{
	char msg[256];

	if (c->bad || !c->traceparent || store_traceparent_valid(c->traceparent))
		return;
	snprintf(msg, sizeof(msg),
		 "traceparent = '%.60s': not a W3C traceparent (VV-TRACEID32-PARENTID16-FLAGS, "
		 "lowercase hex, not all zeros): refused",
		 c->traceparent);
	c->bad = xstrdup(msg);
}

/* Columns are INT UNSIGNED; a row may hold any value of that range. */
static unsigned to_uint(const char *s)
{
	unsigned long long v = s ? strtoull(s, NULL, 10) : 0;
	return v > UINT32_MAX ? UINT32_MAX : (unsigned)v;
}

void store_claim_read_plan(const struct db_reply *r, const struct claim_layout *lay, uint64_t token,
			   double claimed_at, struct claim_reply *out)
{
	const struct db_result *sel;
	int cap;

	memset(out, 0, sizeof(*out));
	out->next_due_us = INT64_MIN;
	if (lay->fin_at >= 0 && r->n > lay->fin_at && r->r[lay->fin_at].err_no == 0 &&
	    (r->fail == DB_OK || r->n - 1 > lay->fin_at)) {
		out->fin_done = true;
		out->fin_rejected = lay->n_fin - (int)r->r[lay->fin_at].affected;
	}
	if (lay->dir_at >= 0 && r->n > lay->dir_at && r->r[lay->dir_at].err_no == 0 &&
	    (r->fail == DB_OK || r->n - 1 > lay->dir_at))
		out->dir = &r->r[lay->dir_at];
	out->fail = r->fail;
	if (r->fail != DB_OK || r->n < lay->n_stmts) {
		if (out->fail == DB_OK)
			out->fail = DB_ERROR;
		out->got = -1;
		return;
	}
	sel = &r->r[lay->sel_at];
	/* Count what came back rather than the UPDATEs' affected rows: with
	 * CLIENT_FOUND_ROWS an UPDATE IGNORE counts the row it skipped. */
	cap = lay->asked;
	out->rows = xcalloc((size_t)(cap > 0 ? cap : 1), sizeof(*out->rows));
	for (size_t i = 0; i < sel->n_rows; i++) {
		struct claimed *c;
		if (i == 0) {
			const char *next = db_cell(sel, i, 11);
			const char *todo = db_cell(sel, i, 16);
			const char *db_now = sel->n_cols > 18 ? db_cell(sel, i, 18) : NULL;
			out->next_due_us = next ? strtoll(next, NULL, 10) : INT64_MAX;
			out->db_now_us = db_now ? strtoll(db_now, NULL, 10) : 0;
			out->settle = todo && strcmp(todo, "0") != 0;
			if (lay->fan_page > 0 && sel->n_cols > 20) {
				const char *fan_n = db_cell(sel, i, 19);
				out->fan_names = fan_n ? (int)strtol(fan_n, NULL, 10) : 0;
				out->fan_end = db_cell(sel, i, 20);
			}
			if (lay->dir_cut && sel->n_cols > 21)
				out->fan_from = db_cell(sel, i, 21);
		}
		if (!db_cell(sel, i, 0) || out->got >= cap)
			continue;
		c = &out->rows[out->got++];
		c->seq = strtoull(db_cell(sel, i, 0), NULL, 10);
		c->token = token;
		c->claimed_at = claimed_at;
		c->id = dup_field(db_cell(sel, i, 1));
		c->queue = dup_field(db_cell(sel, i, 2));
		c->command = dup_field(db_cell(sel, i, 3));
		c->argv_json = dup_field(db_cell(sel, i, 4));
		c->env_json = dup_field(db_cell(sel, i, 5));
		c->cwd = dup_field(db_cell(sel, i, 6));
		c->attempts = to_uint(db_cell(sel, i, 7));
		c->tempfails = to_uint(db_cell(sel, i, 8));
		c->max_attempts = to_uint(db_cell(sel, i, 9));
		c->time_limit = to_uint(db_cell(sel, i, 10));
		c->key = dup_field(db_cell(sel, i, 12));
		c->waited_us = db_cell(sel, i, 13) ? strtoll(db_cell(sel, i, 13), NULL, 10) : -1;
		c->after_json = dup_field(db_cell(sel, i, 14));
		c->downstream = db_cell(sel, i, 15) && strcmp(db_cell(sel, i, 15), "0") != 0;
		check_nul(c, sel, i, 1, "id");
		check_nul(c, sel, i, 2, "queue");
		check_nul(c, sel, i, 3, "command");
		check_nul(c, sel, i, 4, "argv");
		check_nul(c, sel, i, 5, "env");
		check_nul(c, sel, i, 6, "cwd");
		check_nul(c, sel, i, 14, "after");
		c->traceparent = dup_field(db_cell(sel, i, 17));
		check_traceparent(c);
	}
	if (out->got == lay->asked)
		out->next_due_us = INT64_MIN;
}

void store_claim_read(const struct db_reply *r, int n, int n_fin, uint64_t token, double claimed_at,
		      struct claim_reply *out)
{
	struct claim_layout lay = {
		.fin_at = n_fin > 0 ? 0 : -1,
		.dir_at = -1,
		.n_fin = n_fin,
		.asked = n,
		.sel_at = n_fin > 0 ? 2 : 1,
		.n_stmts = n_fin > 0 ? 3 : 2,
	};
	store_claim_read_plan(r, &lay, token, claimed_at, out);
}

void store_claimed_clear(struct claimed *c)
{
	free(c->id);
	free(c->queue);
	free(c->command);
	free(c->argv_json);
	free(c->env_json);
	free(c->cwd);
	free(c->key);
	free(c->after_json);
	free(c->traceparent);
	free(c->bad);
	memset(c, 0, sizeof(*c));
}

void store_claimed_free(struct claimed *rows, int n)
{
	if (!rows)
		return;
	for (int i = 0; i < n; i++)
		store_claimed_clear(&rows[i]);
	free(rows);
}
