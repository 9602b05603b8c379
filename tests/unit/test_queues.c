/* The queue directory and the fair share of a claim (src/queues.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker/queues.h"
#include "check.h"

#define COLS 10

/* A directory reply: rows of name, us until due, paused, max_running,
 * rate_limit, rate_period, weight, lease expiry, window opening,
 * key_max_running (NULL where the string is NULL). */
struct fake {
	char *cells[64 * COLS];
	unsigned long lens[64 * COLS];
	struct db_result r;
};

static void fake_row10(struct fake *f, const char *name, const char *due_us, const char *paused,
		       const char *max_running, const char *rate_limit, const char *rate_period,
		       const char *weight, const char *expiry_us, const char *open_us,
		       const char *key_max)
{
	const char *v[COLS] = { name,        due_us, paused,    max_running, rate_limit,
				rate_period, weight, expiry_us, open_us,     key_max };
	size_t row = f->r.n_rows++;

	for (int i = 0; i < COLS; i++) {
		f->cells[row * COLS + (size_t)i] = (char *)(uintptr_t)v[i];
		f->lens[row * COLS + (size_t)i] = v[i] ? strlen(v[i]) : 0;
	}
	f->r.n_cols = COLS;
	f->r.cells = f->cells;
	f->r.lens = f->lens;
}

static void fake_row9(struct fake *f, const char *name, const char *due_us, const char *paused,
		      const char *max_running, const char *rate_limit, const char *rate_period,
		      const char *weight, const char *expiry_us, const char *open_us)
{
	fake_row10(f, name, due_us, paused, max_running, rate_limit, rate_period, weight,
		   expiry_us, open_us, "1");
}

static void fake_row8(struct fake *f, const char *name, const char *due_us, const char *paused,
		      const char *max_running, const char *rate_limit, const char *rate_period,
		      const char *weight, const char *expiry_us)
{
	fake_row9(f, name, due_us, paused, max_running, rate_limit, rate_period, weight, expiry_us,
		  NULL);
}

static void fake_row(struct fake *f, const char *name, const char *due_us, const char *paused,
		     const char *max_running, const char *rate_limit, const char *rate_period,
		     const char *weight)
{
	fake_row8(f, name, due_us, paused, max_running, rate_limit, rate_period, weight, NULL);
}

static void read_into(struct queues *d, struct fake *f, double now)
{
	struct queues nd = { 0 };
	CHECK(queues_read(d, &f->r, now, &nd) == 0);
	queues_free(d);
	*d = nd;
}

static int share(const struct qpart *p, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (p[i].name && strcmp(p[i].name, name) == 0)
			return p[i].n;
	return 0;
}

/* Claim n rows k times, every part served in full; count rows per queue. */
static void run_claims(struct queues *d, int n, int k, int *a, int *b, const char *na, const char *nb)
{
	struct qpart p[QUEUES_MAX_PARTS];
	int got[QUEUES_MAX_PARTS];

	for (int i = 0; i < k; i++) {
		int np = queues_plan(d, 100.0, n, p);
		for (int j = 0; j < np; j++)
			got[j] = p[j].n;
		*a += share(p, np, na);
		*b += share(p, np, nb);
		queues_claimed(d, p, np, got, 100.0, 100.0, 60);
	}
}

static void test_read(void)
{
	struct fake f = { 0 };
	struct queues d = { 0 };
	const struct qentry *e;

	fake_row(&f, "zeta", "-5", NULL, NULL, NULL, NULL, NULL);
	fake_row(&f, "alpha", "2000000", "1", "3", NULL, NULL, "4");
	fake_row(&f, "mid", "0", "0", NULL, "10", "5", "0");
	read_into(&d, &f, 100.0);
	CHECK(d.n == 3);
	CHECK_STR(d.e[0].name, "alpha"); /* sorted, for the lookups */
	CHECK_STR(d.e[2].name, "zeta");
	e = queues_find(&d, "alpha");
	CHECK(e && e->paused && e->restricted && !e->rated && e->weight == 4);
	CHECK(e && e->due_at > 101.9 && e->due_at < 102.1);
	e = queues_find(&d, "mid");
	CHECK(e && !e->paused && e->restricted && e->rated && e->weight == 1); /* 0 is read as 1 */
	CHECK(e && e->interval > 0.49 && e->interval < 0.51);
	e = queues_find(&d, "zeta");
	CHECK(e && !e->restricted && e->weight == 1);
	CHECK(queues_find(&d, "nope") == NULL);
	/* A result of another shape leaves the directory alone. */
	{
		struct db_result bad = { .n_cols = 3 };
		struct queues nd = { 0 };
		CHECK(queues_read(&d, &bad, 100.0, &nd) == -1);
		CHECK(nd.n == 0 && nd.e == NULL);
	}
	/* zeta due now; alpha paused and later; mid due */
	CHECK(queues_next_due_us(&d, 100.0) <= 0);
	CHECK(queues_any_due(&d, 100.0));
	CHECK(!queues_blocked_backlog(&d, 100.0));
	CHECK(queues_restricted_due(&d, 100.0)); /* mid */
	queues_free(&d);
	CHECK(d.n == 0 && d.e == NULL);
}

static void test_plan_equal(void)
{
	struct fake f = { 0 };
	struct queues d = { 0 };
	struct qpart p[QUEUES_MAX_PARTS];
	int np, a = 0, b = 0;

	fake_row(&f, "big", "-100000000", NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	run_claims(&d, 64, 50, &a, &b, "big", "small");
	CHECK(a == 64 * 50);
	/* small appears: it starts level with big, not 3,200 jobs behind. */
	memset(&f, 0, sizeof(f));
	fake_row(&f, "big", "-100000000", NULL, NULL, NULL, NULL, NULL);
	fake_row(&f, "small", "-1", NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 2);
	CHECK(share(p, np, "big") == 32);
	CHECK(share(p, np, "small") == 32);
	CHECK(!p[0].reclaim && !p[1].reclaim);
	/* small had only 10: drained, big gets everything next. */
	{
		int got[2];
		for (int i = 0; i < np; i++)
			got[i] = strcmp(p[i].name, "small") == 0 ? 10 : p[i].n;
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 1 && share(p, np, "big") == 64);
	/* drained, not paused: looked at again a lease later */
	CHECK(queues_find(&d, "small")->drained);
	CHECK(queues_blocked_backlog(&d, 100.0));
	CHECK(queues_find(&d, "small")->retry_at > 159.9);
	np = queues_plan(&d, 161.0, 64, p);
	CHECK(share(p, np, "small") > 0);
	queues_free(&d);
}

static void test_plan_weights(void)
{
	struct fake f = { 0 };
	struct queues d = { 0 };
	int a = 0, b = 0;

	fake_row(&f, "w1", "-1", NULL, NULL, NULL, NULL, "1");
	fake_row(&f, "w3", "-1", NULL, NULL, NULL, NULL, "3");
	read_into(&d, &f, 100.0);
	run_claims(&d, 20, 100, &a, &b, "w3", "w1");
	/* Off by at most one chunk (32 x weight) from 3:1 at any point. */
	CHECK(a + b == 2000);
	CHECK(a >= 1500 - 96 && a <= 1500 + 96);
	/* odd sizes too */
	a = b = 0;
	run_claims(&d, 7, 400, &a, &b, "w3", "w1");
	CHECK(a + b == 2800);
	CHECK(a >= 2100 - 96 && a <= 2100 + 96);
	queues_free(&d);
}

static void test_plan_limits(void)
{
	struct fake f = { 0 };
	struct queues d = { 0 };
	struct qpart p[QUEUES_MAX_PARTS];
	int np;
	char names[40][8];

	/* Paused and future queues are never planned. */
	fake_row(&f, "paused", "-1", "1", NULL, NULL, NULL, NULL);
	fake_row(&f, "later", "5000000", NULL, NULL, NULL, NULL, NULL);
	fake_row(&f, "lim", "-1", "0", "2", NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 16, p);
	CHECK(np == 1 && p[0].restricted && strcmp(p[0].name, "lim") == 0 && p[0].n == 16);
	CHECK(!p[0].reclaim); /* no running row */
	CHECK(queues_blocked_backlog(&d, 100.0)); /* paused and due */
	CHECK(queues_next_due_us(&d, 100.0) <= 0); /* lim */
	/* lim came back empty: drained, retried a lease (60 s) later; later
	 * becomes due by itself at 105. */
	{
		int got[1] = { 0 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(queues_next_due_us(&d, 100.0) > 4900000);
	CHECK(queues_next_due_us(&d, 100.0) < 5100000);
	np = queues_plan(&d, 106.0, 16, p);
	CHECK(np == 1 && strcmp(p[0].name, "later") == 0);
	np = queues_plan(&d, 161.0, 64, p);
	CHECK(np == 2 && share(p, np, "lim") == 32 && share(p, np, "later") == 32);
	queues_free(&d);

	/* A restricted queue reclaims only when a running lease has expired. */
	memset(&f, 0, sizeof(f));
	fake_row8(&f, "gone", "-1", NULL, "2", NULL, NULL, NULL, "-3000000");
	fake_row8(&f, "live", "-1", NULL, "2", NULL, NULL, NULL, "40000000");
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 2);
	for (int i = 0; i < np; i++)
		CHECK(p[i].reclaim == (strcmp(p[i].name, "gone") == 0));
	np = queues_plan(&d, 141.0, 64, p); /* live's lease has run out by now */
	for (int i = 0; i < np; i++)
		CHECK(p[i].reclaim);
	/* Both came back short at 100: live is looked at again when its
	 * running lease expires (140), not a lease (60 s) later; gone, whose
	 * expiry has passed, a lease later. */
	np = queues_plan(&d, 100.0, 64, p);
	{
		int got[QUEUES_MAX_PARTS] = { 0 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(queues_find(&d, "live")->retry_at > 139.99 && queues_find(&d, "live")->retry_at < 140.01);
	CHECK(queues_find(&d, "gone")->retry_at > 159.99);
	CHECK(queues_next_due_us(&d, 100.0) > 39990000 && queues_next_due_us(&d, 100.0) < 40010000);
	queues_free(&d);

	/* Two blocked queues, each claim asking the one not drained and
	 * reading the directory: a read keeps what was drained (else they
	 * take turns in claim after claim, a busy loop); a wake-up undrains. */
	memset(&f, 0, sizeof(f));
	fake_row8(&f, "lim", "-1", NULL, "1", NULL, NULL, NULL, "50000000");
	fake_row(&f, "key", "-1", NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 2);
	{
		int got[QUEUES_MAX_PARTS] = { 0 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	read_into(&d, &f, 100.1);
	CHECK(queues_plan(&d, 100.1, 64, p) == 0);
	CHECK(queues_next_due_us(&d, 100.1) > 49000000); /* lim's lease at 150 */
	CHECK(queues_find(&d, "key")->retry_at > 159.9);
	queues_undrain(&d);
	CHECK(queues_plan(&d, 100.2, 64, p) == 2);
	queues_free(&d);

	/* A queue without limits that came back short because its next row is
	 * due later (the directory read after the claim says so: a retry's
	 * backoff) is not drained: it is due at that row's time, not a lease
	 * later; nor does a read keep it drained. */
	memset(&f, 0, sizeof(f));
	fake_row(&f, "later", "2000000", NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	{
		struct qpart part = { .name = "later", .n = 8 };
		int got[1] = { 3 };
		queues_claimed(&d, &part, 1, got, 100.0, 100.0, 60);
	}
	CHECK(!queues_find(&d, "later")->drained);
	CHECK(queues_next_due_us(&d, 100.0) > 1900000 && queues_next_due_us(&d, 100.0) < 2100000);
	/* One whose earliest row fell due while the claim ran (after it was
	 * sent at 99.99) was short of rows, not blocked: not drained. */
	fake_row(&f, "fell", "-1000", NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	{
		struct qpart part = { .name = "fell", .n = 8 };
		int got[1] = { 1 };
		queues_claimed(&d, &part, 1, got, 99.99, 100.0, 60);
		CHECK(!queues_find(&d, "fell")->drained);
		queues_claimed(&d, &part, 1, got, 100.0, 100.0, 60);
		CHECK(queues_find(&d, "fell")->drained); /* due before the claim: blocked */
	}
	/* A drained entry whose fresh read is not due is not kept drained. */
	((struct qentry *)(uintptr_t)queues_find(&d, "later"))->drained = true;
	((struct qentry *)(uintptr_t)queues_find(&d, "later"))->retry_at = 160.0;
	read_into(&d, &f, 100.5);
	CHECK(!queues_find(&d, "later")->drained);
	queues_free(&d);

	/* A rated queue whose window is full is looked at again when its
	 * oldest start leaves the window (the read says when: 0.3 s), not
	 * after an emission interval (0.5 s); nor later than a running
	 * lease's expiry when it also has max_running. */
	memset(&f, 0, sizeof(f));
	fake_row9(&f, "w", "-1", NULL, NULL, "4", "2", NULL, NULL, "300000");
	fake_row9(&f, "wm", "-1", NULL, "1", "4", "2", NULL, "100000", "300000");
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 2);
	{
		int got[QUEUES_MAX_PARTS] = { 0 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(queues_find(&d, "w")->retry_at > 100.29 && queues_find(&d, "w")->retry_at < 100.31);
	CHECK(queues_find(&d, "wm")->retry_at > 100.09 && queues_find(&d, "wm")->retry_at < 100.11);
	CHECK(queues_plan(&d, 100.2, 8, p) == 1 && strcmp(p[0].name, "wm") == 0);
	queues_free(&d);

	/* A rated queue that came back short is retried after one interval. */
	memset(&f, 0, sizeof(f));
	fake_row(&f, "r", "-1", NULL, NULL, "4", "2", NULL);
	read_into(&d, &f, 100.0);
	np = queues_plan(&d, 100.0, 8, p);
	CHECK(np == 1 && p[0].rated);
	{
		int got[1] = { 4 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(queues_plan(&d, 100.2, 8, p) == 0);
	CHECK(queues_plan(&d, 100.6, 8, p) == 1);
	CHECK(queues_next_due_us(&d, 100.0) == 500000);
	queues_free(&d);

	/* Many queues: one claim asks at most QUEUES_MAX_PARTS of them, and the
	 * next claim asks the others first. */
	memset(&f, 0, sizeof(f));
	for (int i = 0; i < 40; i++) {
		snprintf(names[i], sizeof(names[i]), "q%02d", i);
		fake_row(&f, names[i], "-1", NULL, NULL, NULL, NULL, NULL);
	}
	read_into(&d, &f, 100.0);
	/* Chunks of 32: a claim of 64 asks 2 queues; of 1,000, at most
	 * QUEUES_MAX_PARTS, each asked more. */
	np = queues_plan(&d, 100.0, 64, p);
	CHECK(np == 2);
	np = queues_plan(&d, 100.0, 1000, p);
	CHECK(np == QUEUES_MAX_PARTS);
	{
		int got[QUEUES_MAX_PARTS], seen = 0, total = 0;
		for (int i = 0; i < np; i++)
			total += p[i].n;
		CHECK(total == 1000);
		np = queues_plan(&d, 100.0, 64, p);
		for (int i = 0; i < np; i++)
			got[i] = p[i].n;
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
		/* The next claim asks queues not asked before. */
		np = queues_plan(&d, 100.0, 64, p);
		for (int i = 0; i < np; i++)
			seen += queues_find(&d, p[i].name)->pass < 1.0;
		CHECK(np == 2 && seen == 2);
	}
	queues_free(&d);
}

/* A queue with key_max_running > 1 is planned keyed; a keyed part that
 * got rows is not drained (its claim starts one row per key: the next
 * claim fills the next slots), one that got none is. */
static void test_keyed(void)
{
	struct fake f;
	struct queues d = { 0 };
	struct qpart p[QUEUES_MAX_PARTS];
	int np;

	memset(&f, 0, sizeof(f));
	fake_row10(&f, "k", "-1", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "2");
	fake_row10(&f, "one", "-1", NULL, NULL, NULL, NULL, NULL, NULL, NULL, "1");
	fake_row10(&f, "none", "-1", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	read_into(&d, &f, 100.0);
	CHECK(queues_find(&d, "k")->key_max == 2);
	CHECK(queues_find(&d, "one")->key_max == 1);
	CHECK(queues_find(&d, "none")->key_max == 1);
	np = queues_plan(&d, 100.0, 96, p);
	CHECK(np == 3);
	for (int i = 0; i < np; i++)
		CHECK(p[i].keyed == (strcmp(p[i].name, "k") == 0));
	{
		int got[QUEUES_MAX_PARTS] = { 1, 1, 1 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(!queues_find(&d, "k")->drained);
	CHECK(queues_find(&d, "one")->drained);
	np = queues_plan(&d, 100.0, 32, p);
	CHECK(np == 1 && p[0].keyed);
	{
		int got[1] = { 0 };
		queues_claimed(&d, p, np, got, 100.0, 100.0, 60);
	}
	CHECK(queues_find(&d, "k")->drained);
	queues_free(&d);
}

/* The fan serves plain queues with due rows; it leaves out paused,
 * limited, rated and keyed ones, which the directory keeps. */
static void test_fan_split(void)
{
	struct fake f = { 0 };
	struct queues d = { 0 };

	fake_row(&f, "plain", "-1", NULL, NULL, NULL, NULL, NULL);
	fake_row(&f, "later", "5000000", NULL, NULL, NULL, NULL, NULL);
	fake_row(&f, "paused", "-1", "1", NULL, NULL, NULL, NULL);
	fake_row(&f, "lim", "-1", "0", "2", NULL, NULL, NULL);
	fake_row(&f, "rated", "-1", "0", NULL, "10", "1", NULL);
	fake_row10(&f, "keyed", "-1", "0", NULL, NULL, NULL, NULL, NULL, NULL, "3");
	fake_row(&f, "plain2", "-1", NULL, NULL, NULL, NULL, "5");
	read_into(&d, &f, 100.0);
	CHECK(queues_count_plain(&d, 100.0) == 2);
	queues_keep_special(&d);
	CHECK(d.n == 4);
	CHECK(queues_find(&d, "paused") && queues_find(&d, "lim") && queues_find(&d, "rated") &&
	      queues_find(&d, "keyed"));
	CHECK(!queues_find(&d, "plain") && !queues_find(&d, "later") && !queues_find(&d, "plain2"));
	CHECK(queues_count_plain(&d, 100.0) == 0);
	queues_free(&d);
}

int main(void)
{
	test_read();
	test_plan_equal();
	test_plan_weights();
	test_plan_limits();
	test_keyed();
	test_fan_split();
	return check_done("queues");
}
