/* The outcome policy: how an attempt's end becomes the row's new state.
 * Pure: plain values in, status, exit code, signal, error text and cost out, so
 * that every branch is unit-tested (tests/unit/test_outcome.c) instead of
 * only end to end. */
#ifndef KYU_OUTCOME_H
#define KYU_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>

#include "store.h"

/* Why kyud itself ended an attempt (END_NONE: it ended on its own). */
enum end_reason { END_NONE, END_TIMEOUT, END_CANCEL, END_LOST, END_FENCE, END_SHUTDOWN };

#define EXIT_TEMPFAIL 75 /* EX_TEMPFAIL: "try again later" */

struct outcome_in {
	enum end_reason reason;
	int wstatus;                 /* as from wait4 */
	const struct rusage *rusage; /* wait4's for the job's process; NULL: none */
	unsigned attempts, tempfails, max_attempts, time_limit;
	const int *permanent_codes;
	int n_permanent_codes;
	/* The last line the job wrote (capture_line_get), or NULL: an
	 * attempt that ended with an exit code and nothing more to say about
	 * it ("exit code 3", permanent or not) says this after it. */
	const char *said;
};

struct outcome_out {
	bool record; /* false: the row is another claim's now; write nothing */
	enum outcome outcome;
	int exit_code; /* -1: none */
	int signal;    /* 0: none */
	bool tempfail;
	bool timeout;             /* ended at its time limit */
	bool first;               /* the job's first attempt ([kyud] history = failures) */
	struct attempt_cost cost; /* from in->rusage; unknown without one */
	char error[256];          /* empty: none */
};

void outcome_decide(const struct outcome_in *in, struct outcome_out *out);

/* A claimed row whose earlier attempt used up the last one (its worker or
 * host was lost, so the lease ran out): it fails without starting. Returns
 * true and fills out then. */
bool outcome_exhausted(unsigned attempts, unsigned tempfails, unsigned max_attempts,
		       struct outcome_out *out);

/* A row holding a value no attempt can run with (max_attempts 0, a
 * counter at its limit, a NUL byte): it fails without starting, with an
 * error naming the column and value. Returns true and fills out then. */
bool outcome_bad_row(const struct claimed *c, struct outcome_out *out);

/* A job that could not start for a reason that may pass (proc_temporary)
 * is not failed for it: it waits again after the backoff, the attempt
 * counted in tempfails (as an exit 75 is) rather than against
 * max_attempts, until the row's tempfails reach START_RETRIES; then it
 * fails, saying so. tempfails is the row's count before this attempt. */
#define START_RETRIES 20
void outcome_unstarted_temporary(const char *why, unsigned tempfails, struct outcome_out *out);

/* A job that could not be started (bad argv/env, exec failure): fails for
 * good with why as its error. */
void outcome_unstarted(const char *why, struct outcome_out *out);

#endif
