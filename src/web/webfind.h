/* The filters of the dashboard's job lists (kyu web: the Jobs tabs and
 * Retrying): a status, a queue, a time range on updated_at and a search in
 * ids, commands, errors and output, paged older and newer, each page
 * bounded whatever the table's size. A module of its own because the
 * statements it writes depend on which filters the indexes can serve
 * (below), and webpages.c's other lists have none of that.
 *
 * What an index serves exactly, it filters exactly:
 *   - a status: kyu_jobs_finished (status, updated_at), last changed
 *     first, keyset on (updated_at, seq), the time range a range of it;
 *   - a status and a queue: kyu_jobs_queue_status (queue, status), whose
 *     entries end with seq: newest submitted first, keyset on seq.
 * The rest (the search, retrying's attempts > 0, a time range with a
 * queue) is a residual filter: it reads the rows of a window of at most
 * WEBFIND_SCAN index entries from the cursor, and a page that is not full
 * when the window ends says how far it searched and hands the window's end
 * as the cursor of the next page. */
#ifndef KYU_WEBFIND_H
#define KYU_WEBFIND_H

#include <stdbool.h>

#include <jansson.h>

#include "webdb.h"

/* Index entries a residual filter reads for one page. */
#define WEBFIND_SCAN 5000
/* Totals are counted up to this many, then said to be more. */
#define WEBFIND_COUNT_CAP 10000

/* A request's parameters, as the query string gives them (NULL: absent). */
struct webfind_args {
	const char *status; /* ignored when retrying */
	const char *queue;
	const char *since;  /* updated_at >= since, database time */
	const char *until;  /* updated_at < until */
	const char *text;   /* search */
	const char *before; /* cursor: the page older than it */
	const char *after;  /* cursor: the page newer than it */
};

/* /api/jobs (retrying false) and /api/retrying: HTTP status, *out the page
 * (webpages.h's conventions; "next" older, "newer", "total"). */
unsigned webfind_jobs(struct webdb *d, const struct webfind_args *a, bool retrying, json_t **out);

#endif
