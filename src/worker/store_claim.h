/* The claim, kyud's one round trip per batch of jobs: the results that
 * ride in front, the mark of each queue's due rows (one UPDATE per
 * unrestricted queue, the prepared kyu_claim and kyu_reclaim in a
 * transaction for restricted ones), the queue directory, the SELECT of
 * what the token marked; and the reading of that reply into the claimed
 * rows, which this module also frees. Pure, like all of store.h.
 *
 * Apart from store.c along the statement family: the claim's
 * builders share its helpers (the claim's SET, the key filter, the column
 * defaults) with no other statement, and are the part of the store that
 * changes with the claim's plan (queues.c). The release of a failed claim
 * (store_release_build) stays in store.c, whose prefix its name carries.
 * store_claim.c builds; store_claim_read.c reads the reply and frees the
 * rows. */
#ifndef KYU_STORE_CLAIM_H
#define KYU_STORE_CLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/attempt.h"
#include "common/config.h"
#include "common/db.h"
#include "common/util.h"
#include "queues.h"

/* ---- claim: record plain successes, mark, select, in one round trip ---- */

/* Append the claim of up to n due rows of any unrestricted queue (the
 * catch-all) for token to sb. The first n_fin of fin (all plain
 * successes, or 0) ride along in front. */
void store_claim_build(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
		       const char *host, int n, const struct finish *fin, int n_fin);

/* A worker's claim: which queues, how many from each (queues.c). */
struct claim_plan {
	const struct qpart *parts;
	int n_parts;
	bool directory; /* read the queue directory in the same round trip */
	bool prepared;  /* kyu_claim and kyu_reclaim exist on this connection */
	bool rollback;  /* a failed claim may have left its transaction open */
	/* Mark with SELECT ... FOR UPDATE SKIP LOCKED whatever the configured
	 * shape: a row lock held by another transaction stalled a claim. */
	bool skip_locked;
	/* Running rows are taken over only when their lease_until is at most
	 * this (µs since '1970-01-01' on the server's NOW(6)); 0: none is
	 * (lease.h, lease_takeover_before: a clock step must not expire a
	 * lease). */
	int64_t lease_cut_us;
	/* The fan (claim.c): one row from each of up to fan_n queues whose
	 * names follow fan_cursor ("" : from the first), and with fan_reclaim
	 * the expired leases of such queues; 0: none. */
	int fan_n;
	const char *fan_cursor;
	bool fan_reclaim;
	/* File the name of every queue with waiting jobs (names.h: a name a
	 * rolled-back session noted is noted no more by it). */
	bool fan_refile;
	/* The directory holds only the queues the fan leaves out
	 * (queues_special), read from kyu_queues: one dive each. */
	bool dir_special;
	/* The fan may begin (claim.c's FAN_AT; 0: it may not): a walk of the
	 * directory that passes its names stops at the first dir_fan_at + 1
	 * due queues the fan would serve, if there are as many, and adds those
	 * it leaves out; without as many it reads the whole directory. */
	int dir_fan_at;
	/* Where this worker's fan would begin in such a case: this share, in
	 * millionths, of the way through kyu_queue_names. */
	int dir_fan_from_ppm;
};
/* Where each statement's result is in the reply. */
struct claim_layout {
	int fin_at, dir_at, sel_at; /* -1: not sent */
	int n_fin, asked, n_stmts;
	bool prepares;    /* this claim prepared kyu_claim and kyu_reclaim */
	bool transaction; /* it holds restricted parts */
	int fan_page;     /* the fan's page of names asked (0: no fan) */
	bool dir_cut;     /* the directory may stop at dir_fan_at + 1 queues */
};
void store_claim_build_plan(struct strbuf *sb, const struct kyu_config *cfg, uint64_t token,
			    const char *host, const struct claim_plan *plan,
			    const struct finish *fin, int n_fin, struct claim_layout *lay);

/* Whether kyu_settle has work: an item of kyu_after_todo, or a job whose
 * end its dependents have not heard of yet (after_changed, indexed). Two
 * dives into what is empty unless workflows run. */
#define STORE_SETTLE_PENDING                                                                       \
	"(EXISTS (SELECT 1 FROM kyu_after_todo) OR "                                               \
	"EXISTS (SELECT 1 FROM kyu_jobs WHERE after_changed = 1))"

struct claim_reply {
	struct claimed *rows; /* got of them; free with store_claimed_free */
	int got;
	/* When fewer than asked were claimed: microseconds until the next row
	 * of the served queues becomes due, paused ones included (<= 0: now;
	 * INT64_MAX: nothing waiting or running); else INT64_MIN. */
	int64_t next_due_us;
	const struct db_result *dir; /* the directory, when read (lives as the reply) */
	bool settle;                 /* kyu_settle has work (STORE_SETTLE_PENDING) */
	int64_t db_now_us; /* the server's NOW(6) at the SELECT, µs since '1970-01-01' (0: unread) */
	bool fin_done;     /* the results in front were recorded */
	int fin_rejected; /* of those, rows that no longer belonged to us */
	enum db_fail fail;
	/* The fan's walk: names it visited, and the last one (lives as the
	 * reply; NULL when none). */
	int fan_names;
	const char *fan_end;
	/* A directory cut short for the fan (claim_plan.dir_fan_at): the name
	 * after which this worker's fan begins ("": the first; NULL when the
	 * directory was read whole). Lives as the reply. */
	const char *fan_from;
};
/* Read the reply of a claim built with (n, n_fin) by store_claim_build. */
void store_claim_read(const struct db_reply *r, int n, int n_fin, uint64_t token, double claimed_at,
		      struct claim_reply *out);
void store_claim_read_plan(const struct db_reply *r, const struct claim_layout *lay, uint64_t token,
			   double claimed_at, struct claim_reply *out);
void store_claimed_free(struct claimed *rows, int n);
void store_claimed_clear(struct claimed *c);
/* Whether tp is a W3C traceparent kyud passes to a job (kyu_jobs(7),
 * "Trace context"); a claimed row with another value fails unstarted. */
bool store_traceparent_valid(const char *tp);

#endif
