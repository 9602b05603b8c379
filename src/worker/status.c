/* The status channel of a running attempt (kyu_jobs(7), "The status
 * channel"). See status.h. */
#include "status.h"

#include <stdio.h>
#include <string.h>

#include "common/utf8.h"

#define PROGRESS_WORD "progress"
#define RESULT_WORD "result"

void status_init(struct status_chan *s, size_t result_max)
{
	memset(s, 0, sizeof(*s));
	s->result_max = result_max;
	s->progress = -1;
}

size_t status_line_max(const struct status_chan *s)
{
	size_t progress = sizeof(PROGRESS_WORD " 100 ") - 1 + STATUS_NOTE_MAX;
	size_t result = sizeof(RESULT_WORD " ") - 1 + s->result_max;

	return result > progress ? result : progress;
}

static bool valid_utf8(const char *p, size_t n)
{
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_char_len(p + i, n - i)))
			return false;
	return true;
}

/* Count a malformed line; the first one's reason is kept, quoting at most
 * 40 bytes of what it was, cut on a character and made printable. */
static void bad(struct status_chan *s, const char *what, const char *p, size_t n)
{
	char quoted[48];
	size_t q = utf8_cut(p, n, 40);

	if (s->bad++)
		return;
	for (size_t i = 0; i < q; i++)
		quoted[i] = (char)((unsigned char)p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i]);
	quoted[q] = '\0';
	utf8_fix(quoted);
	if (p)
		snprintf(s->why, sizeof(s->why), "%s '%s%s'", what, quoted, q < n ? "..." : "");
	else
		snprintf(s->why, sizeof(s->why), "%s", what);
}

/* "progress P [NOTE]": P decimal digits, 0 to 100; NOTE the rest of the
 * line after one space. */
static void progress_line(struct status_chan *s, const char *p, size_t n)
{
	size_t i = 0;
	int v = 0;

	while (i < n && p[i] >= '0' && p[i] <= '9' && i < 4)
		v = v * 10 + (p[i++] - '0');
	if (i == 0 || i > 3 || v > 100 || (i < n && p[i] != ' ')) {
		bad(s, "progress is not an integer from 0 to 100:", p, n);
		return;
	}
	if (i < n)
		i++;
	if (n - i > STATUS_NOTE_MAX) {
		bad(s,
		    "progress note over "
		    "255"
		    " bytes:",
		    p + i, n - i);
		return;
	}
	if (!valid_utf8(p + i, n - i)) {
		bad(s, "progress note is not valid UTF-8:", p + i, n - i);
		return;
	}
	s->progress = v;
	s->has_note = i < n;
	s->note_len = n - i;
	memcpy(s->note, p + i, n - i);
	s->note[n - i] = '\0';
	s->gen++;
}

/* The line in s->line is complete: apply it. */
static void apply(struct status_chan *s)
{
	char *p = s->line.buf;
	size_t n = s->line.len;
	size_t pw = sizeof(PROGRESS_WORD) - 1, rw = sizeof(RESULT_WORD) - 1;

	if (n && p[n - 1] == '\r')
		n--;
	if (n == 0) {
		/* A blank line says nothing: not counted. */
	} else if (n > pw && memcmp(p, PROGRESS_WORD " ", pw + 1) == 0) {
		progress_line(s, p + pw + 1, n - pw - 1);
	} else if (n >= rw && memcmp(p, RESULT_WORD, rw) == 0 && (n == rw || p[rw] == ' ')) {
		/* Its JSON is checked by the database (results.c); here only
		 * that it is text the result column can hold. The line's
		 * buffer becomes the result's: no copy. */
		struct strbuf t = s->result;
		size_t skip = n > rw ? rw + 1 : rw;
		memmove(p, p + skip, n - skip);
		s->line.len = n - skip;
		p[s->line.len] = '\0';
		s->result = s->line;
		s->line = t;
		s->has_result = true;
	} else {
		size_t w = 0;
		while (w < n && p[w] != ' ')
			w++;
		bad(s, "unknown verb", p, w);
	}
	s->line.len = 0;
	if (s->line.buf)
		s->line.buf[0] = '\0';
}

void status_add(struct status_chan *s, const char *data, size_t n)
{
	size_t max = status_line_max(s);

	while (n > 0) {
		const char *nl = memchr(data, '\n', n);
		size_t take = nl ? (size_t)(nl - data) : n;

		if (!s->skipping && s->line.len + take > max) {
			char what[64];
			snprintf(what, sizeof(what), "line over %zu bytes:", max);
			bad(s, what, s->line.len ? s->line.buf : data,
			    s->line.len ? s->line.len : take);
			s->skipping = true;
			s->line.len = 0;
		}
		if (!s->skipping)
			sb_add(&s->line, data, take);
		if (nl) {
			if (!s->skipping)
				apply(s);
			s->skipping = false;
			take++;
		}
		data += take;
		n -= take;
	}
}

void status_end(struct status_chan *s)
{
	if (!s->skipping && s->line.len)
		apply(s);
	s->skipping = false;
	s->line.len = 0;
}

bool status_used(const struct status_chan *s)
{
	return s->progress >= 0 || s->has_result || s->bad;
}

void status_bad_message(const struct status_chan *s, char *buf, size_t size)
{
	if (!s->bad) {
		if (size)
			buf[0] = '\0';
		return;
	}
	snprintf(buf, size, "kyu: %llu malformed line%s on KYU_STATUS_FD ignored; the first: %s",
		 (unsigned long long)s->bad, s->bad == 1 ? "" : "s", s->why);
	utf8_fix(buf);
}

void status_free(struct status_chan *s)
{
	sb_free(&s->line);
	sb_free(&s->result);
}
