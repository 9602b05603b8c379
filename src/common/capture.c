/* Bounded capture of a job's output: the first and the last half of the
 * limit are kept, whatever the job writes. See capture.h. */
#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "utf8.h"

void capture_init(struct capture *c, size_t limit)
{
	memset(c, 0, sizeof(*c));
	c->head_cap = limit / 2;
	c->tail_cap = limit - c->head_cap;
	/* Buffers are allocated on first output: most jobs print nothing. */
}

void capture_add(struct capture *c, const char *data, size_t n)
{
	c->total += n;
	if (c->head_len < c->head_cap) {
		size_t take = c->head_cap - c->head_len;
		if (take > n)
			take = n;
		if (!c->head)
			c->head = xmalloc(c->head_cap);
		memcpy(c->head + c->head_len, data, take);
		c->head_len += take;
		data += take;
		n -= take;
	}
	if (n == 0 || c->tail_cap == 0)
		return;
	if (!c->tail)
		c->tail = xmalloc(c->tail_cap);
	if (n >= c->tail_cap) {
		/* Only the last tail_cap bytes of this chunk can survive. */
		memcpy(c->tail, data + n - c->tail_cap, c->tail_cap);
		c->tail_len = c->tail_cap;
		c->tail_pos = 0;
		return;
	}
	while (n > 0) {
		size_t room = c->tail_cap - c->tail_pos;
		size_t take = n < room ? n : room;
		memcpy(c->tail + c->tail_pos, data, take);
		c->tail_pos = (c->tail_pos + take) % c->tail_cap;
		c->tail_len = c->tail_len + take > c->tail_cap ? c->tail_cap : c->tail_len + take;
		data += take;
		n -= take;
	}
}

void capture_render(const struct capture *c, struct strbuf *sb)
{
	uint64_t omitted = c->total - c->head_len - c->tail_len;
	size_t head = c->head_len, tail = c->tail_len, cut = 0;
	char mark[64];
	int m = 0;

	if (omitted) {
		/* The marker takes its room from the kept bytes, so that the
		 * column never holds more than the limit; the bytes it replaces
		 * are counted as omitted, which may lengthen it by a digit. */
		for (int i = 0; i < 3; i++) {
			m = snprintf(mark, sizeof(mark), "\n[kyu: %llu bytes omitted]\n",
				     (unsigned long long)omitted + cut);
			cut = (size_t)m < head + tail ? (size_t)m : head + tail;
		}
		tail -= cut < tail ? cut : tail;
		head -= cut - (c->tail_len - tail);
	}
	if (head)
		sb_add(sb, c->head, head);
	if (omitted)
		sb_add(sb, mark, (size_t)m);
	if (tail && c->tail_len < c->tail_cap) {
		sb_add(sb, c->tail + (c->tail_len - tail), tail);
	} else if (tail) {
		/* The ring is full: its oldest byte sits at tail_pos; skip the
		 * oldest tail_len - tail bytes. */
		size_t start = (c->tail_pos + (c->tail_len - tail)) % c->tail_cap;
		size_t first = c->tail_cap - start < tail ? c->tail_cap - start : tail;
		sb_add(sb, c->tail + start, first);
		sb_add(sb, c->tail, tail - first);
	}
}

void capture_free(struct capture *c)
{
	free(c->head);
	free(c->tail);
	c->head = c->tail = NULL;
}

/* The last n bytes of the ring (n <= tail_len), oldest first. */
static void ring_last(const struct capture *c, size_t n, struct strbuf *sb)
{
	size_t oldest = c->tail_len < c->tail_cap ? 0 : c->tail_pos;
	size_t start = (oldest + c->tail_len - n) % (c->tail_cap ? c->tail_cap : 1);
	size_t first = c->tail_cap - start < n ? c->tail_cap - start : n;

	sb_add(sb, c->tail + start, first);
	sb_add(sb, c->tail, n - first);
}

size_t capture_live_len(const struct capture *c, size_t max)
{
	/* Only bytes that follow each other in what the job wrote: once
	 * something was cut, the ring alone. */
	size_t kept =
		c->total > c->head_len + c->tail_len ? c->tail_len : c->head_len + c->tail_len;

	return kept < max ? kept : max;
}

void capture_live(const struct capture *c, unsigned attempt, size_t max, struct strbuf *sb)
{
	size_t n = capture_live_len(c, max);
	/* The ring holds the newest bytes; the rest come from the head's end
	 * (only while nothing was cut, by capture_live_len). */
	size_t from_head = n > c->tail_len ? n - c->tail_len : 0;
	struct strbuf t = { 0 };
	size_t skip = 0;

	if (from_head)
		sb_add(&t, c->head + c->head_len - from_head, from_head);
	if (n - from_head)
		ring_last(c, n - from_head, &t);
	/* A cut may fall inside a UTF-8 sequence: begin with the next
	 * character rather than with bytes a page shows as garbage. */
	while (n < c->total && skip < 3 && skip < t.len &&
	       ((unsigned char)t.buf[skip] & 0xc0) == 0x80)
		skip++;
	n -= skip;
	if (n == c->total)
		sb_printf(sb, CAPTURE_LIVE_PREFIX "%u: %llu bytes so far]\n", attempt,
			  (unsigned long long)c->total);
	else
		sb_printf(sb, CAPTURE_LIVE_PREFIX "%u: the last %zu of %llu bytes so far]\n",
			  attempt, n, (unsigned long long)c->total);
	if (n)
		sb_add(sb, t.buf + skip, n);
	sb_free(&t);
}

bool capture_is_live(const char *out, size_t len, unsigned attempt)
{
	char want[64];
	int m = snprintf(want, sizeof(want), CAPTURE_LIVE_PREFIX "%u:", attempt);

	return out && m > 0 && len >= (size_t)m && memcmp(out, want, (size_t)m) == 0;
}

/* Room kept for the marker capture_render puts between head and tail:
 * it takes its bytes from the tail first, then from the head. */
#define MARK_ROOM 64

bool capture_holds(const struct capture *c, uint64_t from, uint64_t to)
{
	if (c->total == c->head_len + c->tail_len)
		return to <= c->total;
	if (to + MARK_ROOM <= c->head_len)
		return true;
	return from >= c->total - c->tail_len + MARK_ROOM && to <= c->total;
}

static bool line_sep(char ch)
{
	return ch == '\n' || ch == '\r';
}

/* Spaces and control characters other than the separators. */
static bool line_blank(char ch)
{
	return (unsigned char)ch <= ' ' || ch == 0x7f;
}

/* data[0..n) (no separator in it) continues the current line. */
static void line_extend(struct capture_line *l, const char *data, size_t n, uint64_t at)
{
	size_t i = 0, take;

	if (l->cur_len == 0) {
		while (i < n && line_blank(data[i]))
			i++;
		if (i == n)
			return;
		l->cur_from = at + i;
	}
	take = n - i < CAPTURE_LINE_MAX - l->cur_len ? n - i : CAPTURE_LINE_MAX - l->cur_len;
	if (take < n - i)
		l->cur_cut = true;
	if (take == 0)
		return;
	memcpy(l->cur + l->cur_len, data + i, take);
	l->cur_len += take;
	l->cur_to = at + i + take;
}

/* A separator: the current line, if it holds more than blanks, is the
 * last one now. */
static void line_end(struct capture_line *l)
{
	if (l->cur_len) {
		memcpy(l->last, l->cur, l->cur_len);
		l->last_len = l->cur_len;
		l->last_cut = l->cur_cut;
		l->last_from = l->cur_from;
		l->last_to = l->cur_to;
	}
	l->cur_len = 0;
	l->cur_cut = false;
}

static bool blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!line_blank(s[i]))
			return false;
	return true;
}

void capture_line_add(struct capture_line *l, const char *data, size_t n, uint64_t at)
{
	size_t p = n, e, s;

	/* Only the lines from the chunk's last one that is not blank on
	 * matter: look from its end. */
	while (p > 0 && !line_sep(data[p - 1]))
		p--;
	if (p == 0) {
		line_extend(l, data, n, at);
		return;
	}
	for (e = p - 1;; e = s - 1) {
		for (s = e; s > 0 && !line_sep(data[s - 1]); s--)
			;
		if (s == 0) {
			/* The first line of the chunk ends the current one. */
			line_extend(l, data, e, at);
			line_end(l);
			break;
		}
		if (!blank(data + s, e - s)) {
			l->cur_len = 0;
			l->cur_cut = false;
			line_extend(l, data + s, e - s, at + s);
			line_end(l);
			break;
		}
	}
	l->cur_len = 0;
	l->cur_cut = false;
	line_extend(l, data + p, n - p, at + p);
}

size_t capture_line_get(const struct capture_line *l, const struct capture *c, char *buf,
			size_t size)
{
	/* An unfinished line is the last one too (a message without '\n'). */
	bool open = l->cur_len > 0;
	const char *s = open ? l->cur : l->last;
	size_t n = open ? l->cur_len : l->last_len, room = size ? size - 1 : 0;
	bool more = open ? l->cur_cut : l->last_cut;
	static const char ellipsis[] = "\xe2\x80\xa6"; /* marks a line cut short */

	if (size == 0)
		return 0;
	buf[0] = '\0';
	if (n == 0 ||
	    !capture_holds(c, open ? l->cur_from : l->last_from, open ? l->cur_to : l->last_to))
		return 0;
	while (n > 0 && line_blank(s[n - 1]))
		n--;
	more = more || n > room;
	if (more && room >= sizeof(ellipsis))
		room -= sizeof(ellipsis) - 1;
	else
		more = false;
	n = utf8_cut(s, n, room);
	for (size_t i = 0; i < n; i++) {
		buf[i] = s[i];
		if (s[i] == '\t')
			buf[i] = ' ';
		else if (line_blank(s[i]) && s[i] != ' ')
			buf[i] = '?';
	}
	buf[n] = '\0';
	utf8_fix(buf);
	n = strlen(buf);
	if (more) {
		memcpy(buf + n, ellipsis, sizeof(ellipsis));
		n += sizeof(ellipsis) - 1;
	}
	return n;
}
