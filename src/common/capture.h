/* Bounded capture of a job's output: the first and the last half of the
 * limit are kept, whatever the job writes, with a marker for what was cut.
 * Used by kyud's workers (src/worker), which capture, and by kyu web
 * (src/web), which shows what was kept. */
#ifndef KYU_CAPTURE_H
#define KYU_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct capture {
	size_t head_cap, tail_cap;
	char *head;
	size_t head_len;
	char *tail; /* ring buffer of the most recent tail_cap bytes */
	size_t tail_len, tail_pos;
	uint64_t total;
};

void capture_init(struct capture *c, size_t limit);
void capture_add(struct capture *c, const char *data, size_t n);
/* Append the kept output to sb: head, then "[kyu: N bytes omitted]" and the
 * tail when something was cut. */
void capture_render(const struct capture *c, struct strbuf *sb);

/* The live tail of a running attempt (kyud.8, "Live output"): one line
 * saying what it is, then the last bytes written so far, at most max of
 * them, starting on a character. The line begins with CAPTURE_LIVE_PREFIX,
 * the attempt's number and a colon, so that a reader tells this attempt's
 * tail from an earlier attempt's output. */
#define CAPTURE_LIVE_PREFIX "[kyu: live output of attempt "
void capture_live(const struct capture *c, unsigned attempt, size_t max, struct strbuf *sb);
/* Bytes capture_live would put after its line (0: nothing kept yet). */
size_t capture_live_len(const struct capture *c, size_t max);
/* Whether out (len bytes) is a live tail of that attempt. */
bool capture_is_live(const char *out, size_t len, unsigned attempt);
void capture_free(struct capture *c);

/* Whether the text capture_render gives holds bytes [from, to) of what
 * the job wrote (offsets in it, 0 = its first byte): everything when
 * nothing was cut, else the head and the tail less the marker's room. */
bool capture_holds(const struct capture *c, uint64_t from, uint64_t to);

/* The last line of a stream that holds more than blanks: what a job that
 * failed with a bare exit code said last (kyu_jobs(7), "Error texts"),
 * fed the same chunks as its capture (stdout and stderr share one pipe:
 * a second pipe for stderr alone would cost each job a pipe and a
 * watcher, about 8% of kyud's CPU per job, and lose the output's order).
 * Lines end at '\n' or '\r'; at most CAPTURE_LINE_MAX bytes of one are
 * kept, from its first byte that is not blank. A chunk is read from its
 * end back to its last line that holds more than blanks. */
#define CAPTURE_LINE_MAX 200
struct capture_line {
	char last[CAPTURE_LINE_MAX], cur[CAPTURE_LINE_MAX];
	size_t last_len, cur_len;
	bool last_cut, cur_cut; /* bytes of the line were not kept */
	/* where the kept bytes lie in the capture the chunks were added to */
	uint64_t last_from, last_to, cur_from, cur_to;
};

/* data[0..n) follows what was added before; at is the offset of data[0]
 * in the capture that holds the same bytes (its total before they were
 * added to it). */
void capture_line_add(struct capture_line *l, const char *data, size_t n, uint64_t at);
/* The last line, at most size - 1 bytes of it, well-formed UTF-8 cut on a
 * character, control characters as '?', into buf; "" when there is none
 * or when c's rendered text does not hold it (an error must not show
 * what the output column does not). Returns its length. */
size_t capture_line_get(const struct capture_line *l, const struct capture *c, char *buf,
			size_t size);

#endif
