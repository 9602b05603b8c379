/* What a queue needs, and the order of it. See attention.h. */
#include "attention.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "db_quote.h"
#include "util.h"

const char *attention_name(enum attention a)
{
	static const char *const names[] = { "failing", "stuck", "failed", "busy", "idle" };

	return (unsigned)a < sizeof(names) / sizeof(*names) ? names[a] : "idle";
}

static size_t name_hash(const char *s, size_t len)
{
	size_t h = 1469598103934665603ULL & SIZE_MAX;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * (1099511628211ULL & SIZE_MAX);
	return h;
}

static void rehash(struct attention_table *t, size_t n_slots)
{
	free(t->slot);
	t->slot = xcalloc(n_slots, sizeof(*t->slot));
	t->n_slots = n_slots;
	for (size_t i = 0; i < t->n; i++) {
		size_t k = name_hash(t->e[i].name, t->e[i].len) & (n_slots - 1);
		while (t->slot[k])
			k = (k + 1) & (n_slots - 1);
		t->slot[k] = i + 1;
	}
}

struct attention_queue *attention_get(struct attention_table *t, const char *name, size_t len)
{
	struct attention_queue *e;
	size_t k, want = 2048;

	/* Room for one more first: then a slot always names an entry. */
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 1024;
		t->e = xrealloc(t->e, t->cap * sizeof(*t->e));
	}
	if (2 * (t->n + 1) > t->n_slots) {
		while (want < 2 * (t->n + 1))
			want *= 2;
		rehash(t, t->n_slots ? 2 * t->n_slots : want);
	}
	for (k = name_hash(name, len) & (t->n_slots - 1); t->slot[k];
	     k = (k + 1) & (t->n_slots - 1)) {
		e = &t->e[t->slot[k] - 1];
		if (e->len == len && memcmp(e->name, name, len) == 0)
			return e;
	}
	e = &t->e[t->n];
	memset(e, 0, sizeof(*e));
	e->name = xmalloc(len + 1);
	memcpy(e->name, name, len);
	e->name[len] = '\0';
	e->len = len;
	t->slot[k] = ++t->n;
	return e;
}

static long long cell_ll(const struct db_result *r, size_t row, unsigned col)
{
	const char *v = col < r->n_cols ? r->cells[row * r->n_cols + col] : NULL;

	return v ? strtoll(v, NULL, 10) : 0;
}

/* The row's queue: NULL (no such row's queue) reads as "". */
static struct attention_queue *row_queue(struct attention_table *t, const struct db_result *r,
					 size_t row)
{
	const char *v = r->cells[row * r->n_cols];

	return attention_get(t, v ? v : "", v ? r->lens[row * r->n_cols] : 0);
}

void attention_add_oldest(struct attention_table *t, const struct db_result *r)
{
	for (size_t i = 0; r->n_cols >= 3 && i < r->n_rows; i++) {
		struct attention_queue *q = row_queue(t, r, i);
		const char *age = r->cells[i * r->n_cols + 1];
		q->age = age ? strtod(age, NULL) : 0;
		q->waiting = true;
		q->due = cell_ll(r, i, 2) != 0;
	}
}

long long attention_add_running(struct attention_table *t, const struct db_result *r)
{
	long long sum = 0;

	for (size_t i = 0; r->n_cols >= 2 && i < r->n_rows; i++) {
		row_queue(t, r, i)->running = cell_ll(r, i, 1);
		sum += cell_ll(r, i, 1);
	}
	return sum;
}

void attention_add_hour(struct attention_table *t, const struct db_result *r)
{
	for (size_t i = 0; r->n_cols >= 4 && i < r->n_rows; i++) {
		struct attention_queue *q = row_queue(t, r, i);
		const char *const *v = (const char *const *)&r->cells[i * r->n_cols];
		if (v[1]) {
			q->succeeded = cell_ll(r, i, 1);
			q->succeeded_known = true;
		}
		if (v[2])
			q->failed = cell_ll(r, i, 2);
		if (v[3]) {
			q->retried = cell_ll(r, i, 3);
			q->retried_known = true;
		}
	}
}

void attention_add_names(struct attention_table *t, const struct db_result *r)
{
	for (size_t i = 0; r->n_cols >= 1 && i < r->n_rows; i++)
		row_queue(t, r, i);
}

/* Past this many queues, naming each minute with each queue (ranges of
 * the primary key) costs more to plan than a read of the hour. */
#define SUCCEEDED_BY_KEY 100

bool attention_sql_succeeded(struct strbuf *sb, const struct attention_table *t)
{
	size_t n = 0;

	for (size_t i = 0; i < t->n; i++)
		n += t->e[i].failed + t->e[i].retried >= ATTENTION_FAILING_MIN;
	if (n == 0)
		return false;
	sb_adds(sb, "SELECT queue, SUM(succeeded), NULL, NULL FROM kyu_minutes WHERE ");
	if (n <= SUCCEEDED_BY_KEY) {
		sb_adds(sb, "minute IN (");
		for (int m = 0; m < 60; m++)
			sb_printf(sb, "%s" MINUTES_NOW " - INTERVAL %d MINUTE", m ? ", " : "", m);
		sb_adds(sb, ")");
	} else {
		sb_adds(sb, "minute > " MINUTES_NOW " - INTERVAL 60 MINUTE");
	}
	sb_adds(sb, " AND queue IN (");
	n = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (t->e[i].failed + t->e[i].retried < ATTENTION_FAILING_MIN)
			continue;
		if (n++)
			sb_adds(sb, ", ");
		db_quote(sb, t->e[i].name, t->e[i].len);
	}
	sb_adds(sb, ") GROUP BY queue ORDER BY NULL");
	return true;
}

void attention_rank(struct attention_queue *q)
{
	long long failed = q->failed + q->retried;

	q->b = 0;
	if (failed >= ATTENTION_FAILING_MIN && failed >= q->succeeded) {
		q->att = ATT_FAILING;
		q->a = (double)failed;
	} else if (q->due && q->age >= ATTENTION_STUCK_AGE) {
		q->att = ATT_STUCK;
		q->a = q->age;
	} else if (failed > 0) {
		q->att = ATT_FAILED;
		q->a = (double)failed;
	} else if (q->running > 0 || q->due) {
		q->att = ATT_BUSY;
		q->a = (double)q->running;
		q->b = q->age;
	} else {
		q->att = ATT_IDLE;
		q->a = 0;
	}
}

/* By bytes, a shorter name first where one is the other's start: names
 * may hold any byte but NUL is not expected, so strcmp would do; the
 * lengths make it exact. */
static int name_order(const struct attention_queue *a, const struct attention_queue *b)
{
	int c = memcmp(a->name, b->name, a->len < b->len ? a->len : b->len);

	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

int attention_cmp(const void *pa, const void *pb)
{
	const struct attention_queue *a = pa, *b = pb;

	if (a->att != b->att)
		return a->att < b->att ? -1 : 1;
	if (a->a != b->a)
		return a->a > b->a ? -1 : 1;
	if (a->b != b->b)
		return a->b > b->b ? -1 : 1;
	return name_order(a, b);
}

int attention_cmp_name(const void *pa, const void *pb)
{
	return name_order(pa, pb);
}

void attention_sort(struct attention_table *t, bool by_name)
{
	for (size_t i = 0; i < t->n; i++)
		attention_rank(&t->e[i]);
	if (t->n)
		qsort(t->e, t->n, sizeof(*t->e), by_name ? attention_cmp_name : attention_cmp);
	/* The slots point at the old places. */
	free(t->slot);
	t->slot = NULL;
	t->n_slots = 0;
}

void attention_free(struct attention_table *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->e[i].name);
	free(t->e);
	free(t->slot);
	memset(t, 0, sizeof(*t));
}
