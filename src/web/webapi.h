/* The dashboard's data (kyu web): each page's query against the kyu
 * tables, answered as a JSON document, and the actions (common/action.h) run on
 * behalf of a POST. No HTTP here: src/web/web.c maps requests onto these.
 * The one entry of kyuweb's data side: webapi.c routes a GET to its page
 * (weboverview.h, webpages.h, webfind.h, webflow.h) and runs the actions
 * itself; below them the
 * connection (webdb.h) and the JSON of rows (webjson.h).
 *
 * One blocking database connection per webapi, used by one thread at a
 * time (the HTTP server has one webapi per thread and lends it to each
 * request): every statement is bounded by max_statement_time, and the
 * connection by the db module's deadline. Lists are pages of at most
 * WEBPAGES_PAGE rows found by keyset on indexed columns (never OFFSET); a
 * page answers "next", the cursor of the following page, or null. */
#ifndef KYU_WEBAPI_H
#define KYU_WEBAPI_H

#include <stddef.h>

#include <jansson.h>

#include "common/attr.h"
#include "common/action.h"
#include "common/config.h"

struct webapi;

/* The caller's way to read a request parameter (NULL when absent). */
typedef const char *webapi_arg_fn(void *ctx, const char *name);

/* cfg is borrowed: it must outlive the webapi. */
struct webapi *webapi_new(const struct kyu_config *cfg);
void webapi_free(struct webapi *w);

/* GET of path (one of /api/overview, /api/running, /api/jobs,
 * /api/retrying, /api/causes, /api/job, /api/graph, /api/batch, /api/schedules,
 * /api/locks, /api/daemons).
 * Returns the HTTP status and sets *out to the document, which is
 * {"error": "..."} for anything but 200. */
unsigned webapi_get(struct webapi *w, const char *path, webapi_arg_fn *arg, void *ctx,
		    json_t **out);

/* Run action a on target (a job's id or a queue's name). 200 with
 * {"ok": true, "done": ...}; 409 when no row had a status the action
 * applies to; 400 for an empty target; 503 when the database failed.
 * After a cancel, retry or delete, ACTION_SETTLE_SQL in a round trip of
 * its own, so that the job's dependents move on now: "settled" says
 * whether it worked (a failure is logged, and changes nothing that was
 * done). Then the wake-up kyu sends after the same action
 * (action_wake_queue), so that what it made due starts now. */
unsigned webapi_action(struct webapi *w, enum action a, const char *target, json_t **out);
/* The bulk actions (common/action.h) on the jobs of a filtered list: the
 * list's filters as request parameters (status, which may be "retrying"
 * for cancel; queue, q: the search, since, until; cause: an id of
 * /api/causes or a cause's text, alone the failed jobs for retry and
 * delete, the retrying ones for cancel; 404 for an id no group has);
 * 400 without any.
 * GET /api/bulk?action=A&...: how many jobs A would change now, as
 * "count", and "upto", the highest seq among them (a string).
 * POST /api/jobs/A?...[&upto=SEQ]: A on those rows, none above upto (the
 * count's: what the user confirmed; absent: the rows there are now), in
 * batches of ACTION_BATCH rows, each its own transaction, each followed
 * by ACTION_SETTLE_SQL; for WEBAPI_BULK_SLICE_MS at most, so that the
 * thread's other connections keep being served: the reply's "count" is the rows
 * changed by this request, "more" says whether to POST again with its
 * "at_queue" and "after_seq" (the walk's position) added. Then one
 * wake-up, as after one job's action. */
#define WEBAPI_BULK_SLICE_MS 2000
unsigned webapi_bulk_count(struct webapi *w, webapi_arg_fn *arg, void *ctx, json_t **out);
unsigned webapi_bulk(struct webapi *w, enum action a, webapi_arg_fn *arg, void *ctx, json_t **out);
/* POST /api/daemon/drain?id=DAEMON: kyu drain's UPDATE (registry.h) on
 * the live daemon whose id, or host:pid, is daemon, then an any-queue
 * wake-up so that it reads it now. 404 when no live daemon is named so. */
unsigned webapi_drain(struct webapi *w, const char *daemon, json_t **out);
/* POST /api/schedule/ACTION?name=NAME: enable, disable or run-now (the
 * statements of kyu schedule, common/action.c); 404 when no schedule has
 * that name; run-now answers the new job's id as "job". Then the
 * wake-up kyu schedule sends: to every daemon, which reads kyu_schedules
 * again, or after run-now to those that serve the job's queue. */
unsigned webapi_schedule_action(struct webapi *w, enum action_schedule a, const char *name,
				json_t **out);

/* len bytes of text as a JSON string; bytes that are not UTF-8 (job
 * output is whatever the program wrote) become U+FFFD (webjson_text). */
json_t *webapi_text(const char *s, size_t len);

/* Parse a cursor "TIME,SEQ" as the list pages hand it out (TIME as the
 * server prints a DATETIME(6)). Returns 0 or -EINVAL
 * (webpages_parse_cursor). */
KYU_MUSTCHECK int webapi_parse_cursor(const char *s, char *time, size_t timelen,
				      unsigned long long *seq);

#endif
