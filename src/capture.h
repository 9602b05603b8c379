/* Bounded capture of a job's output: the first and the last half of the
 * limit are kept, whatever the job writes, with a marker for what was cut. */
#ifndef KYU_CAPTURE_H
#define KYU_CAPTURE_H

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
void capture_free(struct capture *c);

#endif
