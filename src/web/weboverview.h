/* The dashboard's overview (kyu web, /api/overview): per queue, its
 * waiting, due and running jobs, the oldest due job's age, the jobs that
 * ended in the last hour minute by minute, and its settings; the hour's
 * figures for all queues too. A module of its own: it is as long as all
 * the other pages together (webpages.h), and the only one that keeps
 * something between requests (struct weboverview). */
#ifndef KYU_WEBOVERVIEW_H
#define KYU_WEBOVERVIEW_H

#include <stdbool.h>

#include <jansson.h>

#include "webdb.h"

/* The overview counts waiting and due jobs up to one more than this: the
 * exact number of a larger backlog is not worth a read of all of it. */
#define WEBOVERVIEW_COUNT_CAP 1000

/* What the overview keeps between requests. Without kyu_minutes: the
 * last-hour rows, [queue, succeeded?, minutes ago, count], for all queues
 * (0) and per queue (1), read at hour_at. Zeroed: nothing yet. */
struct weboverview {
	json_t *hour[2];
	double hour_at;
	bool hour_per_queue;
};

void weboverview_clear(struct weboverview *cache);

/* GET /api/overview: 200 and the document in *out, or 503 and
 * {"error": ...}. */
unsigned weboverview_get(struct weboverview *cache, struct webdb *d, json_t **out);

#endif
