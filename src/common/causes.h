/* Failures grouped by cause (cause.h): kyu causes and the dashboard's
 * "Failed by cause" section. A group holds the failed jobs (status
 * failed) and the retrying ones (waiting after a failed attempt: their
 * error is the last attempt's) whose error's first line folds to one
 * cause. Both kinds, because they answer the two actions of a group:
 * retry the failed ones once the cause is fixed, cancel the retrying ones
 * while it is not (a retry storm).
 *
 * The read is bounded: the server groups the latest CAUSES_SCAN failed
 * rows and the retrying among the latest CAUSES_SCAN waiting rows (by
 * updated_at) by their CAUSE_LINE_SQL and queue, and this folds and
 * merges the distinct lines. Its statements go through action_run_fn, so
 * that kyu and kyu web run them on their own connections. */
#ifndef KYU_CAUSES_H
#define KYU_CAUSES_H

#include <stdbool.h>
#include <stdint.h>

#include "attr.h"
#include "action.h"
#include "cause.h"

#define CAUSES_SCAN 20000
/* The queues a group names; beyond, it counts them. */
#define CAUSES_QUEUES 8

struct cause_group {
	char text[CAUSE_MAX];
	uint32_t id;
	long long failed, retrying;
	/* updated_at of the oldest and newest, as the server prints it. */
	char first[32], last[32];
	char *queues[CAUSES_QUEUES]; /* by name */
	int n_queues, more_queues;
};

struct causes {
	struct cause_group *g; /* most jobs first, then the latest */
	size_t n, cap;
	/* A window was full: older failures were not read. */
	bool window_full;
};

/* Read the groups of queue (NULL: every queue) into c (zeroed first;
 * read_prefix: as action_walk's). 0, or -1 when a statement failed. */
KYU_MUSTCHECK int causes_read(struct causes *c, const char *queue, const char *read_prefix,
			      action_run_fn *run, void *ctx);
void causes_free(struct causes *c);
/* The group with that id, or NULL. */
const struct cause_group *causes_find(const struct causes *c, uint32_t id);

/* The cause an operator names: an id of kyu causes (8 hex digits: the
 * groups of queue are read to find it) or a line, folded. 0 with the
 * cause in text (CAUSE_MAX bytes); 1 when no group has that id; -1 when
 * the read failed. */
KYU_MUSTCHECK int causes_resolve(const char *key, const char *queue, const char *read_prefix,
				 action_run_fn *run, void *ctx, char *text);

/* One job of a group, as "show them" lists it. */
struct cause_job {
	char *id, *queue, *updated, *line;
	bool retrying;
};
/* The jobs (latest first, at most max) of queue (NULL: any) whose cause
 * is text, among the latest CAUSES_SCAN candidates the server finds by
 * cause_like. *ret malloc'd (causes_jobs_free), *n of them. 0 or -1. */
KYU_MUSTCHECK int causes_jobs(const char *text, const char *queue, size_t max,
			      const char *read_prefix, action_run_fn *run, void *ctx,
			      struct cause_job **ret, size_t *n);
void causes_jobs_free(struct cause_job *jobs, size_t n);

#endif
