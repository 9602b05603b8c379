/* Why a queue of the overview (kyu web) is not moving: for each queue with
 * due jobs, the reasons kyud would not start them now -- paused, at
 * max_running, its rate used up, its oldest due jobs waiting for a
 * concurrency key that a running job holds, no live daemon serving it --
 * read from kyu_queues, kyu_queue_starts, kyu_jobs and kyu_daemons as the
 * claim reads them (kyu_jobs(7)). A module of its own: the overview counts
 * what is there; this explains, with statements of its own, each bounded
 * by an index whatever the backlog. */
#ifndef KYU_WEBSTUCK_H
#define KYU_WEBSTUCK_H

#include <jansson.h>

#include "webdb.h"

/* How many of a queue's oldest due jobs are checked for a held key. */
#define WEBSTUCK_KEY_SAMPLE 20

/* queues: the overview's array of queue objects (queue, due, running,
 * paused, max_running, rate_limit, rate_period). Sets on each "why": an
 * array of {"reason": ..., "detail": ...} (empty: nothing holds it back,
 * or nothing is due), and "daemons": the live daemons serving it (null:
 * no kyu_daemons table). 0 or -1 (webdb's error). */
int webstuck_explain(struct webdb *d, json_t *queues);

#endif
