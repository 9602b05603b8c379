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

#endif
