/* The watcher's decisions (src/watch): row images decoded, the hints that
 * binary-log events give, and the short poll's comparisons. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "common/config.h"
#include "watch/changes.h"
#include "watch/follow.h"
#include "watch/rowimage.h"

/* A table map like kyu_jobs' first eleven columns: seq, id, queue,
 * command, argv, env, cwd, status, priority, run_at, max_attempts. */
enum { NCOLS = 11 };
static const uint8_t types[NCOLS] = { 8, 15, 15, 252, 252, 252, 15, 254, 3, 18, 3 };
static const uint8_t meta[] = {
	0xfc, 0x03,  /* id VARCHAR(255) utf8mb4: 1020 bytes */
	0x00, 0x01,  /* queue: 256 bytes */
	2, 2, 2,     /* command, argv, env: TEXT */
	0x00, 0x40,  /* cwd: 16384 bytes */
	247, 1,      /* status: ENUM, one byte */
	6,           /* run_at: DATETIME(6) */
};

struct img {
	uint8_t b[512];
	size_t n;
};

static void put(struct img *im, const void *p, size_t n)
{
	memcpy(im->b + im->n, p, n);
	im->n += n;
}

static void put_var(struct img *im, const char *s, unsigned pre)
{
	size_t n = strlen(s);
	uint8_t l[2] = { (uint8_t)n, (uint8_t)(n >> 8) };
	put(im, l, pre);
	put(im, s, n);
}

/* A full image: every column present; command NULL. */
static void full_row(struct img *im, const char *queue, uint8_t status, uint8_t run_at_last)
{
	uint8_t nulls[2] = { 1 << 3, 0 }, seq[8] = { 7 }, prio[4] = { 0 };
	uint8_t run_at[8] = { 0x99, 0xb8, 0x2a, 0x00, 0x00, 0x00, 0x00, run_at_last };
	uint8_t maxa[4] = { 3 };

	put(im, nulls, 2);
	put(im, seq, 8);
	put_var(im, "job-1", 2);
	put_var(im, queue, 2);
	put_var(im, "[\"true\"]", 2);
	put_var(im, "{}", 2);
	put_var(im, "/tmp", 2);
	put(im, &status, 1);
	put(im, prio, 4);
	put(im, run_at, 8);
	put(im, maxa, 4);
}

static struct kyu_config cfg;
static const uint8_t all[2] = { 0xff, 0x07 };

static void map_event(struct follow *f, uint64_t id, const char *db, const char *table)
{
	struct binlog_event ev = { .kind = BINLOG_TABLE_MAP };
	ev.u.map.table_id = id;
	ev.u.map.db = db;
	ev.u.map.db_len = strlen(db);
	ev.u.map.table = table;
	ev.u.map.table_len = strlen(table);
	ev.u.map.n_cols = NCOLS;
	ev.u.map.types = types;
	ev.u.map.meta = meta;
	ev.u.map.meta_len = sizeof(meta);
	follow_event(f, &ev);
}

static unsigned rows(struct follow *f, uint64_t id, enum binlog_rows_type type, const uint8_t *present,
		     const uint8_t *after, const struct img *im)
{
	struct binlog_event ev = { .kind = BINLOG_ROWS };
	ev.u.rows.type = type;
	ev.u.rows.table_id = id;
	ev.u.rows.n_cols = NCOLS;
	ev.u.rows.present = present;
	ev.u.rows.present_after = after;
	ev.u.rows.data = im->b;
	ev.u.rows.len = im->n;
	follow_event(f, &ev);
	return follow_take(f, false);
}

static unsigned update(struct follow *f, uint8_t from, uint8_t to, uint8_t run_at_from, uint8_t run_at_to)
{
	struct img im = { .n = 0 };
	full_row(&im, "a", from, run_at_from);
	full_row(&im, "a", to, run_at_to);
	return rows(f, 42, BINLOG_UPDATE, all, all, &im);
}

static unsigned query(struct follow *f, const char *db, const char *text, bool slow_ok)
{
	struct binlog_event ev = { .kind = BINLOG_QUERY };
	ev.u.query.db = db;
	ev.u.query.db_len = strlen(db);
	ev.u.query.text = text;
	ev.u.query.text_len = strlen(text);
	follow_event(f, &ev);
	return follow_take(f, slow_ok);
}

static void test_rowimage(void)
{
	struct rowimage_table t;
	struct rowimage_cols c;
	struct img im = { .n = 0 };
	long n;

	CHECK(rowimage_table_init(&t, types, NCOLS, meta, sizeof(meta)) == 0);
	CHECK(t.is_jobs);
	full_row(&im, "mail", RI_WAITING, 0);
	n = rowimage_read(&t, all, im.b, im.n, &c);
	CHECK(n == (long)im.n);
	CHECK(c.has_queue && c.queue_len == 4 && memcmp(c.queue, "mail", 4) == 0);
	CHECK(c.has_status && c.status == RI_WAITING);
	CHECK(c.has_run_at && c.run_at_len == 8);
	/* Every length is checked against the bytes there are. */
	for (size_t cut = 0; cut < im.n; cut++)
		CHECK(rowimage_read(&t, all, im.b, cut, &c) < 0);
	/* A truncated metadata block is refused. */
	CHECK(rowimage_table_init(&t, types, NCOLS, meta, sizeof(meta) - 1) < 0);
	/* A table whose columns are not kyu_jobs' is readable but not kyu's. */
	{
		uint8_t other[NCOLS];
		memcpy(other, types, NCOLS);
		other[7] = 3;
		CHECK(rowimage_table_init(&t, other, NCOLS, meta, sizeof(meta)) == 0);
		CHECK(!t.is_jobs);
	}
}

static void test_follow(void)
{
	struct follow f;
	struct img im = { .n = 0 };
	char *queues[] = { "a" };

	cfg.db_name = "kyu";
	follow_init(&f, &cfg);
	map_event(&f, 42, "kyu", "kyu_jobs");
	map_event(&f, 43, "kyu", "kyu_queues");
	map_event(&f, 44, "other", "kyu_jobs");
	map_event(&f, 45, "kyu", "kyu_schedules");

	/* Inserts: waiting or running wake; blocked does not. */
	full_row(&im, "a", RI_WAITING, 0);
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == FOLLOW_WAKE);
	im.n = 0;
	full_row(&im, "a", RI_BLOCKED, 0);
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == 0);
	/* A burst of rows in one event is one hint. */
	im.n = 0;
	full_row(&im, "a", RI_BLOCKED, 0);
	full_row(&im, "a", RI_WAITING, 0);
	full_row(&im, "a", RI_WAITING, 0);
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == FOLLOW_WAKE);
	/* Another database's kyu_jobs is not ours. */
	im.n = 0;
	full_row(&im, "a", RI_WAITING, 0);
	CHECK(rows(&f, 44, BINLOG_WRITE, all, NULL, &im) == 0);

	/* Updates: kyud's claims, heartbeats and results wake nothing. */
	CHECK(update(&f, RI_WAITING, RI_RUNNING, 0, 0) == 0);
	CHECK(update(&f, RI_RUNNING, RI_RUNNING, 0, 0) == 0);
	CHECK(update(&f, RI_RUNNING, RI_SUCCEEDED, 0, 0) == 0);
	CHECK(update(&f, RI_RUNNING, RI_FAILED, 0, 0) == 0);
	/* Due again: an SQL retry, a retry, a released job, an earlier run_at. */
	CHECK(update(&f, RI_FAILED, RI_WAITING, 0, 0) == FOLLOW_WAKE);
	CHECK(update(&f, RI_RUNNING, RI_WAITING, 0, 1) == FOLLOW_WAKE);
	CHECK(update(&f, RI_BLOCKED, RI_WAITING, 0, 0) == FOLLOW_WAKE);
	CHECK(update(&f, RI_WAITING, RI_WAITING, 5, 1) == FOLLOW_WAKE);
	CHECK(update(&f, RI_WAITING, RI_WAITING, 5, 5) == 0);
	/* A running job cancelled, or deleted: the cancel hint. */
	CHECK(update(&f, RI_RUNNING, RI_CANCELLED, 0, 0) == FOLLOW_CANCEL);
	CHECK(update(&f, RI_WAITING, RI_CANCELLED, 0, 0) == 0);
	im.n = 0;
	full_row(&im, "a", RI_RUNNING, 0);
	CHECK(rows(&f, 42, BINLOG_DELETE, all, NULL, &im) == FOLLOW_CANCEL);
	im.n = 0;
	full_row(&im, "a", RI_SUCCEEDED, 0);
	CHECK(rows(&f, 42, BINLOG_DELETE, all, NULL, &im) == 0);

	/* A minimal image: the before image is the key, the after image the
	 * columns changed. A heartbeat's lease alone wakes nothing. */
	{
		const uint8_t key[2] = { 0x01, 0 }, lease[2] = { 0, 0x04 }, status[2] = { 0x80, 0 };
		struct img m = { .n = 0 };
		uint8_t seq[8] = { 7 }, nulls = 0, st = RI_WAITING, other[4] = { 9 };
		put(&m, &nulls, 1);
		put(&m, seq, 8);
		put(&m, &nulls, 1); /* an after image of a column kyu does not read */
		put(&m, other, 4);
		CHECK(rows(&f, 42, BINLOG_UPDATE, key, lease, &m) == 0);
		m.n = 0;
		put(&m, &nulls, 1);
		put(&m, seq, 8);
		put(&m, &nulls, 1);
		put(&m, &st, 1);
		/* Made waiting: its queue is not in the image, so it may be ours. */
		CHECK(rows(&f, 42, BINLOG_UPDATE, key, status, &m) == FOLLOW_WAKE);
	}

	/* An image that cannot be read wakes every queue. */
	im.n = 0;
	full_row(&im, "a", RI_BLOCKED, 0);
	im.n -= 3;
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == FOLLOW_WAKE);
	CHECK(f.unreadable == 1);

	/* kyu_queues: any change wakes; kyu_schedules: the schedules hint. */
	CHECK(rows(&f, 43, BINLOG_UPDATE, all, all, &im) == FOLLOW_WAKE);
	CHECK(rows(&f, 45, BINLOG_UPDATE, all, all, &im) == FOLLOW_SCHEDULES);

	/* Only the queues this daemon serves. */
	cfg.queues[0] = queues[0];
	cfg.n_queues = 1;
	im.n = 0;
	full_row(&im, "b", RI_WAITING, 0);
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == 0);
	im.n = 0;
	full_row(&im, "a", RI_WAITING, 0);
	CHECK(rows(&f, 42, BINLOG_WRITE, all, NULL, &im) == FOLLOW_WAKE);
	cfg.n_queues = 0;

	/* Statements: an INSERT wakes at once, the rest at most once a second. */
	CHECK(query(&f, "kyu", "INSERT INTO kyu_jobs (command) VALUES ('x')", false) == FOLLOW_WAKE);
	CHECK(query(&f, "kyu", "/* app */ insert into KYU_JOBS (command) values ('x')", false) == FOLLOW_WAKE);
	CHECK(query(&f, "kyu", "UPDATE kyu_jobs SET status = 'waiting' WHERE id = 'x'", false) == 0);
	CHECK(follow_take(&f, true) == FOLLOW_WAKE);
	CHECK(query(&f, "kyu", "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'x'", true) ==
	      (FOLLOW_WAKE | FOLLOW_CANCEL));
	CHECK(query(&f, "other", "INSERT INTO kyu_jobs (command) VALUES ('x')", true) == 0);
	CHECK(query(&f, "other", "INSERT INTO kyu.kyu_jobs (command) VALUES ('x')", true) == FOLLOW_WAKE);
	CHECK(query(&f, "kyu", "BEGIN", true) == 0);
}

static void test_changes(void)
{
	struct changes c;
	const char *a[CHANGES_COLS] = { "2026-11-28 10:00:00.000001", "2026-11-28 10:00:00.000001", NULL,
					 NULL, "2026-11-28 10:00:01.000000" };

	changes_reset(&c);
	CHECK(changes_compare(&c, a) == FOLLOW_WAKE); /* the first answer */
	CHECK(changes_compare(&c, a) == 0);
	/* A new waiting row. */
	a[0] = "2026-11-28 10:00:02.000000";
	a[4] = "2026-11-28 10:00:03.000000";
	CHECK(changes_compare(&c, a) == FOLLOW_WAKE);
	/* A lease renewed into the future moves the earliest due time, but
	 * nothing became due. */
	a[1] = "2026-11-28 10:01:00.000000";
	CHECK(changes_compare(&c, a) == 0);
	/* A row committed late, due before the others. */
	a[1] = "2026-11-28 09:59:00.000000";
	CHECK(changes_compare(&c, a) == FOLLOW_WAKE);
	/* A cancel; a queue's settings. */
	a[2] = "2026-11-28 10:00:04.000000";
	CHECK(changes_compare(&c, a) == FOLLOW_CANCEL);
	a[3] = "2026-11-28 10:00:05.000000";
	CHECK(changes_compare(&c, a) == FOLLOW_WAKE);
	CHECK(changes_compare(&c, a) == 0);
}

int main(void)
{
	test_rowimage();
	test_follow();
	test_changes();
	return check_done("watch");
}
