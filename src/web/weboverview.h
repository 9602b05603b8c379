/* The dashboard's overview (kyu web, /api/overview): per queue, its
 * waiting, due, running and retrying jobs, the oldest due job's age, the
 * jobs that ended and the attempts that failed in the last hour minute by
 * minute, and its settings; the hour's figures for all queues too; and
 * whether any kyud is live. A page of queues at a time, those that need
 * attention first: what orders them is read for every queue from indexes
 * and kyu_minutes (a dive per queue), what only shows is read for the
 * page's queues alone, so that a page costs the same with 10,000 queues as
 * with ten. The order (common/attention.h, which kyu queues shares) is
 * made over plain structs, one per queue; only the page's queues become
 * JSON. A module of its own: it is as long as all the other pages
 * together (webpages.h), and the only one that keeps something between
 * requests (struct weboverview). */
#ifndef KYU_WEBOVERVIEW_H
#define KYU_WEBOVERVIEW_H

#include <stdbool.h>

#include <jansson.h>

#include "webdb.h"

/* The overview counts waiting and due jobs up to one more than this: the
 * exact number of a larger backlog is not worth a read of all of it. */
#define WEBOVERVIEW_COUNT_CAP 1000

/* Queues per page: by default, and at most (?limit=). */
#define WEBOVERVIEW_PAGE 100
#define WEBOVERVIEW_PAGE_MAX 500
/* With more queues than a page in kyu_minutes' last hour, its reading for
 * all queues (every row of the hour: thousands a minute) is made at most
 * this often (s); the page's queues' bars are read each time. */
#define WEBOVERVIEW_MINUTES_CACHE 10.0

struct weboverview_sum;

/* What the overview keeps between requests. Without kyu_minutes: the
 * last-hour rows, [queue, succeeded?, minutes ago, count], for all queues
 * (0) and per queue (1), read at hour_at. Zeroed: nothing yet. */
struct weboverview {
	json_t *hour[2];
	double hour_at;
	bool hour_per_queue;
	/* With kyu_minutes: the hour's sums per queue (sums: n_sums of them,
	 * plain structs, as there is one per queue that ended jobs in the
	 * hour), and per minute for all queues, [minutes ago, ...] (minutes),
	 * read at minutes_at; kept WEBOVERVIEW_MINUTES_CACHE seconds when
	 * more than WEBOVERVIEW_PAGE_MAX queues ended jobs in the hour. */
	struct weboverview_sum *sums;
	size_t n_sums;
	json_t *minutes;
	double minutes_at;
};

void weboverview_clear(struct weboverview *cache);

/* The request's parameters, as given (NULL: absent): limit and offset
 * (decimal), sort ("attention", the default, or "name"). */
struct weboverview_args {
	const char *limit, *offset, *sort;
};

/* GET /api/overview: 200 and the document in *out, 400 for bad
 * parameters, or 503 and {"error": ...}. */
unsigned weboverview_get(struct weboverview *cache, struct webdb *d,
			 const struct weboverview_args *a, json_t **out);

#endif
