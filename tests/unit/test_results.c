/* Results waiting to be recorded: the batch (plain successes first), and
 * forgetting what a batch recorded when more arrived meanwhile. Entries own
 * heap strings: run under -DKYU_SANITIZE=ON for leaks and stale views. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "worker/results.h"
#include "check.h"

static struct outcome_out oc(enum outcome outcome, int exit_code, int sig, bool tempfail,
			     const char *error)
{
	struct outcome_out o;

	memset(&o, 0, sizeof(o));
	o.record = true;
	o.outcome = outcome;
	o.exit_code = exit_code;
	o.signal = sig;
	o.tempfail = tempfail;
	snprintf(o.error, sizeof(o.error), "%s", error);
	return o;
}

static void add_plain(struct results *rs, uint64_t seq)
{
	struct outcome_out o = oc(OUT_SUCCEEDED, 0, 0, false, "");
	results_add(rs, seq, 100 + seq, false, (int)(1000 + seq), &o, NULL);
}

/* Seqs of the current batch, as "1,3,5|2,4" (plain | other). */
static const char *batch_seqs(struct results *rs, int *n, int *n_plain)
{
	static char buf[256];
	const struct finish *f = results_batch(rs, n, n_plain);
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < *n; i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%llu",
					i == *n_plain ? "|" : i == 0 ? "" : ",",
					(unsigned long long)f[i].seq);
	if (*n_plain == *n)
		snprintf(buf + len, sizeof(buf) - len, "|");
	return buf;
}

int main(void)
{
	struct results rs = { 0 };
	struct capture cap, empty;
	struct outcome_out o;
	const struct finish *f;
	int n, n_plain;

	CHECK(results_count(&rs) == 0);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(n == 0);
	CHECK(n_plain == 0);

	capture_init(&cap, 1024);
	capture_add(&cap, "oops\n", 5);
	capture_init(&empty, 1024); /* nothing written */

	/* 1: plain success. */
	add_plain(&rs, 1);
	CHECK(rs.oldest > 0);
	/* 2: failed, with an error and output, and what it cost. */
	o = oc(OUT_FAILED, 2, 0, false, "exit code 2");
	o.cost = (struct attempt_cost){ .known = true, .user_us = 7, .sys_us = 8, .max_rss = 9 };
	results_add(&rs, 2, 102, false, 1002, &o, &cap);
	/* 3: plain success. */
	add_plain(&rs, 3);
	/* 4: success with output: not plain. */
	o = oc(OUT_SUCCEEDED, 0, 0, false, "");
	results_add(&rs, 4, 104, false, 1004, &o, &cap);
	/* 5: success with a capture that saw nothing: plain. */
	results_add(&rs, 5, 105, false, 1005, &o, &empty);
	/* 6: tempfail retry, error, no capture. */
	o = oc(OUT_RETRY, 75, 0, true, "temporary failure (exit 75): retrying later");
	results_add(&rs, 6, 106, false, 1006, &o, NULL);
	/* 7: released unstarted: pid 0, error. */
	o = oc(OUT_RELEASE, -1, 0, false, "interrupted");
	results_add(&rs, 7, 107, false, 0, &o, NULL);
	/* 8: killed by a signal. */
	o = oc(OUT_FAILED, -1, 9, false, "killed by signal 9 (SIGKILL)");
	results_add(&rs, 8, 108, false, 1008, &o, NULL);
	CHECK(results_count(&rs) == 8);
	CHECK(rs.n_plain == 3);
	CHECK(rs.n_other == 5);

	/* The batch: plain successes first. */
	CHECK_STR(batch_seqs(&rs, &n, &n_plain), "1,3,5|2,4,6,7,8");
	CHECK(n == 8);
	CHECK(n_plain == 3);
	f = results_batch(&rs, &n, &n_plain);
	for (int i = 0; i < n_plain; i++) {
		CHECK(store_finish_plain(&f[i]));
		CHECK(f[i].outcome == OUT_SUCCEEDED);
		CHECK(f[i].error == NULL);
		CHECK(f[i].output == NULL);
		CHECK(f[i].output_len == 0);
		CHECK(f[i].exit_code == 0);
		CHECK(f[i].token == 100 + f[i].seq);
		CHECK(f[i].pid == (int)(1000 + f[i].seq));
	}
	for (int i = n_plain; i < n; i++)
		CHECK(!store_finish_plain(&f[i]));
	/* 2 */
	CHECK(f[3].seq == 2);
	CHECK(f[3].token == 102);
	CHECK(f[3].pid == 1002);
	CHECK(f[3].outcome == OUT_FAILED);
	CHECK(f[3].exit_code == 2);
	CHECK(f[3].signal == 0);
	CHECK_STR(f[3].error, "exit code 2");
	CHECK(f[3].output_len == 5);
	CHECK(f[3].output && memcmp(f[3].output, "oops\n", 5) == 0);
	CHECK(f[3].cost.known && f[3].cost.user_us == 7 && f[3].cost.sys_us == 8 && f[3].cost.max_rss == 9);
	CHECK(!f[0].cost.known);
	/* 4 */
	CHECK(f[4].outcome == OUT_SUCCEEDED);
	CHECK(f[4].error == NULL);
	CHECK(f[4].output_len == 5);
	CHECK(f[4].output && memcmp(f[4].output, "oops\n", 5) == 0);
	/* 6 */
	CHECK(f[5].outcome == OUT_RETRY);
	CHECK(f[5].tempfail);
	CHECK(f[5].exit_code == 75);
	CHECK_STR(f[5].error, "temporary failure (exit 75): retrying later");
	CHECK(f[5].output_len == 0);
	/* 7 */
	CHECK(f[6].outcome == OUT_RELEASE);
	CHECK(f[6].pid == 0);
	CHECK(f[6].exit_code == -1);
	CHECK_STR(f[6].error, "interrupted");
	/* 8 */
	CHECK(f[7].signal == 9);
	CHECK(f[7].exit_code == -1);
	CHECK_STR(f[7].error, "killed by signal 9 (SIGKILL)");

	/* The batch is in flight; more arrive: two plain, one other. */
	add_plain(&rs, 9);
	add_plain(&rs, 10);
	o = oc(OUT_FAILED, 1, 0, false, "exit code 1");
	results_add(&rs, 11, 111, false, 1011, &o, &cap);
	CHECK(results_count(&rs) == 11);
	/* The first 4 of the batch (1,3,5 and 2) are recorded: the batch's
	 * own plain count says 3 of them were plain, not the 5 plain now. */
	results_forget(&rs, 4);
	CHECK(results_count(&rs) == 7);
	CHECK(rs.n_plain == 2);
	CHECK(rs.n_other == 5);
	CHECK_STR(batch_seqs(&rs, &n, &n_plain), "9,10|4,6,7,8,11");
	CHECK(n_plain == 2);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(f[2].error == NULL); /* 4: no error */
	CHECK(f[2].output && memcmp(f[2].output, "oops\n", 5) == 0);
	CHECK_STR(f[6].error, "exit code 1");

	/* Fewer than the batch's plain ones: only plain ones go. Another
	 * plain arrives first. */
	add_plain(&rs, 12);
	results_forget(&rs, 1);
	CHECK_STR(batch_seqs(&rs, &n, &n_plain), "10,12|4,6,7,8,11");
	/* Exactly the plain ones, while one more other arrives. */
	o = oc(OUT_CANCELLED, -1, 15, false, "cancelled");
	results_add(&rs, 13, 113, false, 1013, &o, NULL);
	results_forget(&rs, 2);
	CHECK_STR(batch_seqs(&rs, &n, &n_plain), "|4,6,7,8,11,13");
	CHECK(n_plain == 0);
	/* Only others. */
	add_plain(&rs, 14);
	results_forget(&rs, 3);
	CHECK_STR(batch_seqs(&rs, &n, &n_plain), "14|8,11,13");
	f = results_batch(&rs, &n, &n_plain);
	CHECK_STR(f[1].error, "killed by signal 9 (SIGKILL)");
	CHECK_STR(f[3].error, "cancelled");
	/* All of them. */
	results_forget(&rs, n);
	CHECK(results_count(&rs) == 0);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(n == 0);

	/* When a batch is complete: none waits, no moment. A lone result
	 * waits RESULTS_QUIET; a stream of them, until it pauses for that
	 * long, at most RESULTS_LONG after the oldest; RESULTS_BATCH of them,
	 * not at all. */
	CHECK(results_batch_done(&rs) == 0);
	add_plain(&rs, 15);
	CHECK(rs.newest == rs.oldest);
	CHECK(results_batch_done(&rs) == rs.oldest + RESULTS_QUIET);
	rs.oldest = 100.0;
	rs.newest = 100.02;
	CHECK(results_batch_done(&rs) == 100.02 + RESULTS_QUIET);
	rs.newest = 100.045;
	CHECK(results_batch_done(&rs) == 100.0 + RESULTS_LONG);
	for (uint64_t s = 16; s < 14 + RESULTS_BATCH; s++)
		add_plain(&rs, s);
	rs.oldest = rs.newest;
	CHECK(results_batch_done(&rs) == rs.newest + RESULTS_QUIET);
	add_plain(&rs, 14 + RESULTS_BATCH);
	CHECK(results_batch_done(&rs) == rs.newest);
	results_batch(&rs, &n, &n_plain);
	results_forget(&rs, n);
	CHECK(results_batch_done(&rs) == 0);

	/* Results still waiting are freed with the set (LSan checks). */
	add_plain(&rs, 20);
	o = oc(OUT_FAILED, 1, 0, false, "exit code 1");
	results_add(&rs, 21, 121, false, 1021, &o, &cap);
	for (uint64_t s = 22; s < 60; s++) /* past the first growth of both arrays */
		if (s % 2)
			results_add(&rs, s, 100 + s, false, 1, &o, &cap);
		else
			add_plain(&rs, s);
	f = results_batch(&rs, &n, &n_plain);
	CHECK(n == 40);
	CHECK(n_plain == 20);
	CHECK(f[0].seq == 20);
	CHECK(f[19].seq == 58);
	CHECK(f[20].seq == 21);
	CHECK(f[39].seq == 59);
	CHECK_STR(f[39].error, "exit code 1");
	results_free(&rs);
	CHECK(results_count(&rs) == 0);
	CHECK(rs.view == NULL);
	CHECK(rs.plain == NULL && rs.other == NULL);

	capture_free(&cap);
	capture_free(&empty);
	return check_done("results");
}
