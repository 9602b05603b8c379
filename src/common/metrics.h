/* The Prometheus text exposition (format 0.0.4) of the scoreboard and of
 * the per-queue figures read from the table. Pure: what it renders comes
 * from its arguments, so that the format is unit-tested line by line
 * (tests/unit/test_metrics.c). Used by kyud-metrics (src/metrics), which
 * serves it, and the supervisor (src/kyud), which opens its listening
 * socket (metrics_listen) before it starts that process. */
#ifndef KYU_METRICS_H
#define KYU_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attr.h"
#include "board.h"
#include "util.h"

#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* One queue's rows, as the table showed them at the last reading. */
struct metrics_queue {
	char *name;
	uint64_t waiting, due, running, blocked;
	double oldest_due_age; /* seconds; 0 when nothing is due */
	/* Waiting jobs whose last attempt failed; the attempts that failed
	 * in the last hour, on every daemon (kyu_minutes: retried and
	 * failed for good). */
	uint64_t retrying, failed_attempts_1h;
};

struct metrics_table {
	bool read;   /* a reading was ever attempted */
	bool ok;     /* the last reading succeeded */
	double age;  /* seconds since the reading shown */
	double took; /* seconds the reading took */
	struct metrics_queue *queues;
	int n;
	/* Whether retrying and failed_attempts_1h were read: each has a
	 * statement of its own, which an older schema (no kyu_minutes) or a
	 * huge backlog (retrying reads every waiting row) may fail alone. */
	bool has_retrying, has_failed_1h;
};

/* Append the whole exposition to sb. */
void metrics_render(struct strbuf *sb, const struct board *b, int workers,
		    const struct metrics_table *t);

/* The name of every metric family rendered, for the documentation test;
 * NULL past the last. */
const char *metrics_family_at(size_t i);

void metrics_table_clear(struct metrics_table *t);

/* A listening TCP socket on the numeric "ADDR:PORT" or "[V6]:PORT" (the
 * supervisor's, so that a taken address is an error at start). Returns the
 * descriptor (close-on-exec) or -errno with a message naming the address
 * in err. */
KYU_MUSTCHECK int metrics_listen(const char *hostport, char *err, size_t errlen);

#endif
