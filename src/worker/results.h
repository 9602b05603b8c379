/* Results waiting to be recorded. This module owns every finished
 * attempt's finish record and its buffers (error text, output) from the
 * moment the attempt ends until the database has taken it; store.c only
 * ever sees a read-only batch, and one place (results_batch) builds it.
 *
 * Ownership convention (kyu-wide): a module that allocates a thing frees
 * it; a pointer handed to another module is a loan for the duration of
 * the call unless the function says "takes"; moving a row from one owner
 * to the next is a struct copy followed by clearing the source. */
#ifndef KYU_RESULTS_H
#define KYU_RESULTS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/capture.h"
#include "outcome.h"
#include "status.h"
#include "store.h"

struct result_entry;

struct results {
	struct result_entry *plain, *other; /* plain successes; everything else */
	int n_plain, n_other, cap_plain, cap_other;
	struct finish *view; /* the batch last built */
	int cap_view, batch_plain;
	double oldest; /* monotonic time the oldest waiting result arrived */
	double newest; /* monotonic time the newest one arrived */
};

/* Queue the result of one attempt. out is rendered now (may be NULL).
 * downstream: the row has dependents (its end is settled after). */
void results_add(struct results *rs, uint64_t seq, uint64_t token, bool downstream, int pid,
		 const struct outcome_out *o, const struct capture *out);
/* The same for an attempt that ran, with what it said on its status
 * channel (copied; a job that never used it is recorded as by
 * results_add). */
void results_add_status(struct results *rs, uint64_t seq, uint64_t token, bool downstream, int pid,
			const struct outcome_out *o, const struct capture *out,
			const struct status_chan *st);
int results_count(const struct results *rs);

/* Results wait for the rest of their batch while jobs still run, so that
 * a batch of short jobs costs one UPDATE (or rides along with the claim
 * that refills the slots) rather than one per job: until none has arrived
 * for RESULTS_QUIET, at most RESULTS_LONG after the oldest, or until
 * RESULTS_BATCH wait. A lone result waits RESULTS_QUIET (those waiting on
 * its end: kyu wait, kyu logs -f, its dependents); a stream of ends waits
 * longer (notes/DESIGN.md, "Batching"). */
#define RESULTS_QUIET 0.01
#define RESULTS_LONG 0.05
#define RESULTS_BATCH 64
/* When the waiting results' batch is complete (monotonic; 0: none waits). */
double results_batch_done(const struct results *rs);
/* The waiting results, plain successes first, read-only and valid until
 * the next results_* call that changes the set. *n_plain counts the
 * leading plain successes. */
const struct finish *results_batch(struct results *rs, int *n, int *n_plain);
/* The first n of the last batch are recorded (or dropped): forget them. */
void results_forget(struct results *rs, int n);
/* The first n of the last batch went out in a round trip whose reply was
 * lost: they may be recorded already (finish.unsure). */
void results_unsure(struct results *rs, int n);
/* The statement recording row seq's result failed and will fail again as
 * it is (the server refused a value: 1366, 1406, 1264...). The first time,
 * keep the result but drop its output and put why in its error; the
 * second time, reduce it to its status and exit code with a plain ASCII
 * error saying what was refused, which no column can refuse. Returns
 * false (and forgets the result) only when it had been reduced already,
 * or for a plain success (there is nothing to reduce): the job then runs
 * again after its lease. */
bool results_strip(struct results *rs, uint64_t seq, const char *why);
void results_free(struct results *rs);

#endif
