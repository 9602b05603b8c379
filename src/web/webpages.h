/* The dashboard's pages but the overview and the job lists (kyu web): the
 * running jobs, one job, the schedules, the locks and the daemons, each a statement or two through webdb.h answered as a
 * JSON document. Without HTTP: webapi.c hands each its request's
 * parameters. The overview is a module of its own (weboverview.h): it is
 * as long as these together, and keeps a cache between requests; these
 * keep nothing. The job lists, with their filters, are webfind.h's.
 *
 * Lists are pages of at most WEBPAGES_PAGE rows found by keyset on indexed
 * columns (never OFFSET), so that a page costs the same on a table of
 * millions; a page answers "next", the cursor of the following page, or
 * null. Each function returns the HTTP status and sets *out to the
 * document, which is {"error": "..."} for anything but 200. */
#ifndef KYU_WEBPAGES_H
#define KYU_WEBPAGES_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/attr.h"
#include "webdb.h"

#define WEBPAGES_PAGE 50

/* The time zone the session reads DATETIMEs in, by name: the server's
 * own when the session's is SYSTEM. */
#define WEBPAGES_ZONE "IF(@@session.time_zone = 'SYSTEM', @@system_time_zone, @@session.time_zone)"

/* /api/running?before=SEQ */
unsigned webpages_running(struct webdb *d, const char *before, json_t **out);
/* /api/job?id=ID: every column of the job; with workflows (schema
 * version 5), those of kyu_jobs(7) "Workflows" too. webflow_job adds
 * the rest of the page. */
unsigned webpages_job(struct webdb *d, const char *id, bool workflows, json_t **out);
/* /api/schedules?after=NAME or ?from=NAME (that one first) */
unsigned webpages_schedules(struct webdb *d, const char *after, const char *from, json_t **out);
/* /api/locks */
unsigned webpages_locks(struct webdb *d, json_t **out);
/* /api/daemons */
unsigned webpages_daemons(struct webdb *d, json_t **out);

/* Parse a cursor "TIME,SEQ" as the list pages hand it out (TIME as the
 * server prints a DATETIME(6)). Returns 0 or -EINVAL. */
KYU_MUSTCHECK int webpages_parse_cursor(const char *s, char *time, size_t timelen,
					unsigned long long *seq);

#endif
