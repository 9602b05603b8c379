/* The dashboard's workflow pages (kyu web; kyu_jobs(7), "Workflows"): a
 * job's upstream and downstream jobs on its page, the graph around a job,
 * and a batch. Read from the edges of kyu_after, which the INSERT's
 * triggers make (up_seq, down_seq: kyu_jobs.seq), joined to kyu_jobs for
 * each job's id and status. A module of its own: the job page itself
 * (webpages.h) is every column of one row; this walks edges, and every
 * walk is bounded whatever the graph's size (a job with ten thousand
 * dependents costs a page of them and a capped count).
 *
 * A schema older than version 5 has no kyu_after: the job page is then
 * webpages_job's alone, and the graph and batch pages say so (404). */
#ifndef KYU_WEBFLOW_H
#define KYU_WEBFLOW_H

#include <stdbool.h>

#include <jansson.h>

#include "common/attr.h"
#include "webdb.h"

/* Upstream and downstream jobs listed on a job's page, in seq order. */
#define WEBFLOW_LIST 50
/* Edges counted for "N more", then said to be more. */
#define WEBFLOW_COUNT_CAP 10000
/* The graph around a job: levels each way, by default and at most, and
 * the jobs it holds at most (the root included). */
#define WEBFLOW_DEPTH 3
#define WEBFLOW_DEPTH_MAX 6
#define WEBFLOW_NODES 200
/* The jobs of a batch counted by status, then said to be more. */
#define WEBFLOW_BATCH_CAP 10000

/* Whether the schema has workflows (the table kyu_after). 0 or -1. */
KYU_MUSTCHECK int webflow_present(struct webdb *d, bool *ret);

/* /api/job?id=ID: webpages_job's document, with the workflow columns,
 * and on a schema with workflows "upstream" and "downstream", each
 * {"rows": [{"seq", "id", "status", "queue", "state"}], "total",
 * "total_capped", "more"} (a deleted upstream: id and status null), and
 * "why" (webstuck_job). */
unsigned webflow_job(struct webdb *d, const char *id, json_t **out);

/* /api/graph?id=ID&depth=N: the jobs upstream and downstream of ID up to
 * depth levels each way and WEBFLOW_NODES jobs, and the edges between
 * them: {"root", "depth", "max_nodes", "truncated", "nodes": [{"seq",
 * "id", "status", "queue", "batch", "level"}], "edges": [{"up", "down",
 * "state"}]}; level < 0 upstream, > 0 downstream, by the shortest way. */
unsigned webflow_graph(struct webdb *d, const char *id, const char *depth, json_t **out);

/* /api/batch?label=L&after=SEQ: the jobs of batch L counted by status
 * (up to WEBFLOW_BATCH_CAP), a page of them in seq order, and the jobs
 * that wait for it by after_batch. */
unsigned webflow_batch(struct webdb *d, const char *label, const char *after, json_t **out);

#endif
