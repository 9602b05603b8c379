#include "capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
				     (unsigned long long)(omitted + cut));
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
	size_t kept = c->total > c->head_len + c->tail_len ? c->tail_len : c->head_len + c->tail_len;

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
	while (n < c->total && skip < 3 && skip < t.len && ((unsigned char)t.buf[skip] & 0xc0) == 0x80)
		skip++;
	n -= skip;
	if (n == c->total)
		sb_printf(sb, CAPTURE_LIVE_PREFIX "%u: %llu bytes so far]\n", attempt,
			  (unsigned long long)c->total);
	else
		sb_printf(sb, CAPTURE_LIVE_PREFIX "%u: the last %zu of %llu bytes so far]\n", attempt, n,
			  (unsigned long long)c->total);
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
