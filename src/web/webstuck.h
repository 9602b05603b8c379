/* Why a queue of the overview (kyu web) is not moving: for each queue with
 * due jobs, the reasons kyud would not start them now -- paused, at
 * max_running, its rate used up, its oldest due jobs waiting for a
 * concurrency key that a running job holds, no live daemon serving it --
 * read from kyu_queues, kyu_queue_starts, kyu_jobs and kyu_daemons as the
 * claim reads them (kyu_jobs(7)); for each queue with blocked jobs, which
 * upstream jobs its oldest one waits for (kyu_after), and whether anyone
 * settles the workflows at all (kyu_after_todo). The same for one blocked
 * job, on its page. A module of its own: the overview counts what is
 * there; this explains, with statements of its own, each bounded by an
 * index whatever the backlog. */
#ifndef KYU_WEBSTUCK_H
#define KYU_WEBSTUCK_H

#include <stdbool.h>

#include <jansson.h>

#include "common/attr.h"
#include "webdb.h"

/* How many of a queue's oldest due jobs are checked for a held key. */
#define WEBSTUCK_KEY_SAMPLE 20

/* The upstream jobs that have not ended named in a blocked job's reason. */
#define WEBSTUCK_UPSTREAMS 3
/* A workflow change (an item of kyu_after_todo) older than this, in
 * seconds, is one nobody settles: no kyud of schema version 5 runs. */
#define WEBSTUCK_SETTLE_LATE 60
/* The items of kyu_after_todo counted, then said to be more. */
#define WEBSTUCK_TODO_CAP 1000

/* queues: the overview's array of queue objects (queue, due, running,
 * paused, max_running, rate_limit, rate_period, blocked). Sets on each
 * "why": an array of {"reason": ..., "detail": ...} (empty: nothing holds
 * it back, or nothing is due or blocked), and "daemons": the live daemons
 * serving it (null: no kyu_daemons table). With workflows (the schema has
 * kyu_after), a queue with blocked jobs gets the reason "blocked", with
 * "job" (its oldest blocked job's id) and "waits_for" ([{"id", "status"}],
 * null: nothing to name), and "unsettled" when kyu_after_todo holds items
 * older than WEBSTUCK_SETTLE_LATE; *unsettled is set to {"items",
 * "capped", "oldest_age"} (null without workflows). count_cap: the cap of
 * the queues' counts ("more than" beyond). 0 or -1 (webdb's error). */
/* quiet_no_daemon: no kyud is live at all (the overview says so once, in
 * its banner), so no queue gets the reason "no daemon". */
KYU_MUSTCHECK int webstuck_explain(struct webdb *d, json_t *queues, bool workflows,
				   long long count_cap, bool quiet_no_daemon, json_t **unsettled);

/* Why one job does not start: for a blocked one (job: /api/job's job
 * object, with seq, status and after_left), the reason "blocked" naming
 * the upstream jobs it waits for, as for a queue; for anything else, no
 * reason. *why gets the array. 0 or -1 (webdb's error). */
KYU_MUSTCHECK int webstuck_job(struct webdb *d, const json_t *job, json_t **why);

#endif
