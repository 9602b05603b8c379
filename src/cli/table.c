/* How kyu prints a result set: the one printer behind every listing (list,
 * queues, schedules, locks, daemons, causes, stats) and kyu show. See
 * table.h. */
#include "table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "human.h"
#include "common/text.h"
#include "common/util.h"

static enum table_format form = TABLE_TSV;
static bool out_raw; /* --raw: the bytes as stored */
static enum escape out_escape = ESCAPE_FIELD;
static bool out_terminal; /* stdout is a terminal */
static bool now_read;     /* now holds the server's NOW() */
static long long now;

/* What "…" takes: one column, three bytes. */
#define ELLIPSIS "\xE2\x80\xA6"
/* The columns between two of the table. */
#define GAP 2

int table_format_parse(const char *s, enum table_format *ret)
{
	if (strcmp(s, "tsv") == 0)
		*ret = TABLE_TSV;
	else if (strcmp(s, "table") == 0)
		*ret = TABLE_ALIGNED;
	else if (strcmp(s, "json") == 0)
		*ret = TABLE_JSON;
	else
		return -1;
	return 0;
}

void table_setup(enum table_format f, bool raw, bool terminal)
{
	form = f;
	out_raw = raw;
	out_terminal = terminal;
	out_escape = terminal || f == TABLE_ALIGNED ? ESCAPE_TERMINAL : ESCAPE_FIELD;
}

enum table_format table_format(void)
{
	return form;
}

void table_read_now(struct db *db)
{
	static const char q[] = "SELECT NOW()";
	const struct db_reply *reply;
	const char *v;

	if (form != TABLE_ALIGNED || now_read)
		return;
	if (db_query(db, q, sizeof(q) - 1, &reply) == DB_OK && reply->n > 0 &&
	    reply->r[0].n_rows == 1 && (v = db_cell(&reply->r[0], 0, 0)))
		now_read = human_time_parse(v, &now, NULL);
}

size_t table_columns(void)
{
	struct winsize ws;
	const char *c = getenv("COLUMNS");
	int64_t n;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	if (c && parse_i64(c, 10, 100000, &n) == 0)
		return (size_t)n;
	return 80;
}

void table_escape(struct strbuf *sb, const char *v, size_t len)
{
	if (!v)
		sb_adds(sb, form == TABLE_TSV ? "NULL" : "-");
	else if (out_raw)
		sb_add(sb, v, len);
	else
		text_escape(sb, v, len, out_escape);
}

/* How the table form reads a column, by its name: kyu's own columns of
 * bytes and of seconds. */
enum reading { READ_TEXT, READ_SIZE, READ_SECONDS };

static enum reading reading_of(const char *name)
{
	static const char *const seconds[] = { "duration",   "cpu_user",   "cpu_sys", "cpu",
					       "time_limit", "lease_left", NULL };

	if (strcmp(name, "max_rss") == 0)
		return READ_SIZE;
	for (size_t i = 0; seconds[i]; i++)
		if (strcmp(name, seconds[i]) == 0)
			return READ_SECONDS;
	return READ_TEXT;
}

/* Whether v is a number as the server prints one: an integer or a
 * decimal, optionally negative. */
static bool is_number(const char *v, size_t len)
{
	size_t i = v && len && v[0] == '-' ? 1 : 0, d = 0, dots = 0;

	if (!v || i == len)
		return false;
	for (; i < len; i++) {
		if (v[i] == '.' && d && !dots)
			dots++;
		else if (v[i] >= '0' && v[i] <= '9')
			d++;
		else
			return false;
	}
	return d > 0 && v[len - 1] != '.';
}

/* The zone part of a time's text (" UTC" -> "UTC"), or "" for none. */
static const char *zone_of(const char *end)
{
	return *end == ' ' ? end + 1 : end;
}

/* How a time reads: in full with its zone (show's lines), or in a cell of
 * the table, its zone in the header when the column shares one, and
 * shorter when how long ago says the rest: the time of day within 20
 * hours of now, else without the year within the same one. */
enum time_form { TIME_FULL, TIME_CELL, TIME_CELL_NO_ZONE };

static void put_time(struct strbuf *sb, const char *v, long long t, const char *end,
		     enum time_form tf)
{
	long long d = now - t;
	char buf[32];

	if (tf != TIME_FULL && now_read && d < 20LL * 3600 && d > -20LL * 3600)
		sb_add(sb, v + 11, 8);
	else if (tf != TIME_FULL && now_read && d < 180LL * 86400 && d > -180LL * 86400)
		sb_add(sb, v + 5, 14);
	else
		sb_add(sb, v, 19);
	if (*end && tf != TIME_CELL_NO_ZONE)
		sb_printf(sb, " %s", zone_of(end));
	if (now_read) {
		human_ago(buf, sizeof(buf), d);
		sb_printf(sb, " (%s)", buf);
	}
}

/* The reading of one value: a time to the second, a size or a duration
 * with units, else the escaped text. */
static void human(struct strbuf *sb, const char *name, const char *v, size_t len, enum time_form tf)
{
	enum reading rd = reading_of(name);
	long long t;
	const char *end;
	char buf[64];

	if (!v) {
		sb_adds(sb, "-");
		return;
	}
	if (!out_raw && len == strlen(v) && human_time_parse(v, &t, &end) &&
	    (*end == '\0' || (*end == ' ' && strchr(end + 1, ' ') == NULL))) {
		put_time(sb, v, t, end, tf);
		return;
	}
	if (rd != READ_TEXT && is_number(v, len)) {
		double x = strtod(v, NULL);
		if (rd == READ_SIZE)
			human_size(buf, sizeof(buf), x);
		else
			human_duration(buf, sizeof(buf), x);
		sb_adds(sb, buf);
		return;
	}
	table_escape(sb, v, len);
}

void table_human(struct strbuf *sb, const char *name, const char *v, size_t len)
{
	human(sb, name, v, len, TIME_FULL);
}

bool table_escapes_text(void)
{
	return out_terminal && !out_raw;
}

void table_put_text(const char *s, size_t len, bool escape)
{
	struct strbuf sb = { 0 };
	size_t from = 0;

	if (!escape) {
		fwrite(s, 1, len, stdout);
		return;
	}
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '\n' && s[i] != '\t')
			continue;
		sb_reset(&sb);
		text_escape(&sb, s + from, i - from, ESCAPE_TERMINAL);
		if (sb.len)
			fwrite(sb.buf, 1, sb.len, stdout);
		if (i < len)
			putchar(s[i]);
		from = i + 1;
	}
	sb_free(&sb);
}

/* ---- tsv: the rows as they always were */

static void print_tsv(const struct db_result *r, bool vertical)
{
	struct strbuf sb = { 0 };

	if (!vertical) {
		for (unsigned i = 0; i < r->n_cols; i++)
			printf("%s%s", i ? "\t" : "", r->names[i]);
		printf("\n");
	}
	for (size_t row = 0; row < r->n_rows; row++) {
		for (unsigned i = 0; i < r->n_cols; i++) {
			const char *v = db_cell(r, row, i);

			if (vertical)
				printf("%12s: ", r->names[i]);
			else if (i)
				putchar('\t');
			sb_reset(&sb);
			table_escape(&sb, v, v ? r->lens[row * r->n_cols + i] : 0);
			fwrite(sb.buf, 1, sb.len, stdout);
			if (vertical)
				putchar('\n');
		}
		if (!vertical)
			printf("\n");
	}
	sb_free(&sb);
}

/* ---- table: aligned and cut to the width */

struct col {
	size_t width;   /* the widest of the header and the cells, in columns */
	size_t natural; /* width before any cut */
	size_t floor;   /* how narrow a cut may make it */
	bool right;     /* numbers: aligned right */
	bool cuttable;  /* free text: cut first */
	char zone[64];  /* the zone of every time of the column, "" if none or mixed */
};

/* The zone shared by every time of column c, so that its header says it
 * once and its cells leave it out. */
static void common_zone(const struct db_result *r, unsigned c, struct col *col)
{
	bool any = false;

	col->zone[0] = '\0';
	for (size_t row = 0; row < r->n_rows; row++) {
		const char *v = db_cell(r, row, c), *end;
		long long t;
		if (!v || !human_time_parse(v, &t, &end))
			continue;
		if (!*end || strlen(zone_of(end)) >= sizeof(col->zone) ||
		    (any && strcmp(col->zone, zone_of(end)) != 0)) {
			col->zone[0] = '\0';
			return;
		}
		snprintf(col->zone, sizeof(col->zone), "%s", zone_of(end));
		any = true;
	}
}

/* Narrow the columns until the row fits width: the widest free text
 * first, down to its floor; then the longest free text down to 4 columns;
 * then the widest of any (times and numbers last: cut, they mislead). */
static void fit_columns(struct col *cols, unsigned n, size_t width)
{
	size_t total = n ? (n - 1) * GAP : 0;

	for (unsigned i = 0; i < n; i++)
		total += cols[i].width;
	for (int pass = 0; pass < 3 && total > width; pass++) {
		while (total > width) {
			unsigned w = n;
			for (unsigned i = 0; i < n; i++) {
				size_t floor = pass == 0 ? cols[i].floor : pass == 1 ? 4 : 3;
				if ((pass == 2 || cols[i].cuttable) && cols[i].width > floor &&
				    (w == n || (pass == 1 ? cols[i].natural > cols[w].natural
							  : cols[i].width > cols[w].width)))
					w = i;
			}
			if (w == n)
				break;
			cols[w].width--;
			total--;
		}
	}
}

/* One cell padded (or cut, ending in "…") to width columns. */
static void put_cell(const char *s, size_t len, size_t width, bool right, bool last)
{
	size_t w = human_width(s, len);

	if (w > width) {
		size_t keep = human_cut(s, len, width ? width - 1 : 0);
		fwrite(s, 1, keep, stdout);
		if (width)
			fputs(ELLIPSIS, stdout);
		return;
	}
	if (right)
		printf("%*s", (int)(width - w), "");
	fwrite(s, 1, len, stdout);
	if (!right && !last)
		printf("%*s", (int)(width - w), "");
}

static void print_aligned(const struct db_result *r)
{
	unsigned n = r->n_cols;
	struct col *cols = xcalloc(n + 1, sizeof(*cols));
	struct strbuf *cells = xcalloc(r->n_rows * n + 1, sizeof(*cells));
	struct strbuf *heads = xcalloc(n + 1, sizeof(*heads));

	for (unsigned c = 0; c < n; c++) {
		bool numbers = true, times = true, any = false;

		common_zone(r, c, &cols[c]);
		sb_adds(&heads[c], r->names[c]);
		if (cols[c].zone[0])
			sb_printf(&heads[c], " (%s)", cols[c].zone);
		cols[c].width = human_width(heads[c].buf, heads[c].len);
		for (size_t row = 0; row < r->n_rows; row++) {
			const char *v = db_cell(r, row, c);
			size_t len = v ? r->lens[row * n + c] : 0;
			struct strbuf *sb = &cells[row * n + c];
			long long t;

			human(sb, r->names[c], v, len,
			      cols[c].zone[0] ? TIME_CELL_NO_ZONE : TIME_CELL);
			if (!sb->buf)
				sb_adds(sb, "");
			if (v) {
				any = true;
				numbers = numbers && is_number(v, len);
				times = times && human_time_parse(v, &t, NULL);
			}
			if (human_width(sb->buf, sb->len) > cols[c].width)
				cols[c].width = human_width(sb->buf, sb->len);
		}
		cols[c].natural = cols[c].width;
		cols[c].right = any && numbers;
		cols[c].cuttable = !(any && (numbers || times));
		/* A cut text keeps a few characters and its "…" (a status
		 * whole); any other column cut at all keeps a little. */
		cols[c].floor = cols[c].cuttable ? 10 : 3;
		if (cols[c].floor > cols[c].width)
			cols[c].floor = cols[c].width;
	}
	fit_columns(cols, n, table_columns());
	for (size_t row = 0; row <= r->n_rows; row++) {
		for (unsigned c = 0; c < n; c++) {
			const struct strbuf *sb = row ? &cells[(row - 1) * n + c] : &heads[c];
			if (c)
				printf("%*s", GAP, "");
			put_cell(sb->buf, sb->len, cols[c].width, cols[c].right, c + 1 == n);
		}
		putchar('\n');
	}
	for (size_t i = 0; i < r->n_rows * n; i++)
		sb_free(&cells[i]);
	for (unsigned c = 0; c < n; c++)
		sb_free(&heads[c]);
	free(cells);
	free(heads);
	free(cols);
}

static void print_vertical(const struct db_result *r)
{
	struct strbuf sb = { 0 };

	for (size_t row = 0; row < r->n_rows; row++) {
		if (row)
			putchar('\n');
		for (unsigned c = 0; c < r->n_cols; c++) {
			const char *v = db_cell(r, row, c);
			sb_reset(&sb);
			human(&sb, r->names[c], v, v ? r->lens[row * r->n_cols + c] : 0, TIME_FULL);
			printf("%12s: %s\n", r->names[c], sb.buf ? sb.buf : "");
		}
	}
	sb_free(&sb);
}

/* ---- json */

json_t *table_json_cell(const struct db_result *r, size_t row, unsigned col)
{
	const char *v = db_cell(r, row, col);
	size_t len = v ? r->lens[row * r->n_cols + col] : 0;
	json_t *j;
	struct strbuf sb = { 0 };

	if (!v)
		return json_null();
	if (r->numeric && r->numeric[col] && is_number(v, len)) {
		char *end;
		if (!memchr(v, '.', len)) {
			long long i = strtoll(v, &end, 10);
			if (end == v + len)
				return json_integer(i);
		}
		return json_real(strtod(v, NULL));
	}
	j = json_stringn(v, len);
	if (j)
		return j;
	/* Not UTF-8: JSON cannot hold the bytes; their escaped text can. */
	sb_adds(&sb, "");
	text_escape(&sb, v, len, ESCAPE_TERMINAL);
	j = json_stringn(sb.buf, sb.len);
	sb_free(&sb);
	return j ? j : json_null();
}

json_t *table_json_row(const struct db_result *r, size_t row)
{
	json_t *o = json_object();

	for (unsigned c = 0; c < r->n_cols; c++)
		json_object_set_new(o, r->names[c], table_json_cell(r, row, c));
	return o;
}

int table_json_print(json_t *v)
{
	char *text = json_dumps(v, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(15));

	json_decref(v);
	if (!text) {
		fprintf(stderr, "kyu: cannot encode the result as JSON\n");
		return -1;
	}
	printf("%s\n", text);
	free(text);
	return 0;
}

void table_print(const struct db_result *r, bool vertical)
{
	if (form == TABLE_JSON) {
		json_t *a;
		if (vertical) {
			if (table_json_print(r->n_rows ? table_json_row(r, 0) : json_null()) < 0)
				fprintf(stderr,
					"kyu: cannot encode the row as JSON (out of memory?)\n");
			return;
		}
		a = json_array();
		for (size_t row = 0; row < r->n_rows; row++)
			json_array_append_new(a, table_json_row(r, row));
		if (table_json_print(a) < 0)
			fprintf(stderr, "kyu: cannot encode the rows as JSON (out of memory?)\n");
	} else if (form == TABLE_ALIGNED) {
		if (vertical)
			print_vertical(r);
		else
			print_aligned(r);
	} else {
		print_tsv(r, vertical);
	}
}
