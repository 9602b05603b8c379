/* The dashboard's failures by cause (kyu web): GET /api/causes, the
 * groups of common/causes.h as JSON, and the jobs of one cause (its "show
 * them"). Its actions are the bulk ones with a cause parameter
 * (webapi.h). */
#ifndef KYU_WEBCAUSES_H
#define KYU_WEBCAUSES_H

#include <jansson.h>

#include "common/attr.h"
#include "webdb.h"

/* The jobs of one cause listed. */
#define WEBCAUSES_JOBS 100

/* /api/causes[?queue=Q]: {"causes": [{"id", "text", "failed",
 * "retrying", "queues": [...], "more_queues", "first", "last"}],
 * "window_full", "scan", "now", "zone"}, most jobs first.
 * /api/causes?cause=KEY[&queue=Q] (KEY an id or a text): {"cause": {"id",
 * "text"}, "jobs": [{"id", "queue", "status", "updated", "error"}], "limit",
 * "now", "zone"}, the latest first; for an id no group has (any more),
 * "cause" null and no jobs. */
unsigned webcauses_get(struct webdb *d, const char *queue, const char *cause, json_t **out);

/* The action_run_fn (common/action.h) of d's reads, bounded as a page's. */
KYU_MUSTCHECK int webcauses_run(void *ctx, const char *sql, size_t len,
				const struct db_result **res);

#endif
