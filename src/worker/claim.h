/* Claiming: when the next claim goes out and how many rows it asks of
 * which queues (pacing, the queue directory: queues.c), the claim's round
 * trip (its rows of the statement order) and its reply, and the repairs
 * of a claim that failed (its transaction rolled back, the rows it marked
 * given back).
 *
 * Who owns the row here: store_claim_read_plan allocates each row of the
 * reply as a struct claimed (common/attempt.h); claim_reply hands every
 * one to held.c (held_take), which owns it from then on, and frees the
 * array.
 *
 * Why the cut: everything that decides whether and what to claim is here,
 * above the rooms a claim uses (held.c and jobs.c for the rows, record.c
 * for the results that ride along, parent.c to ask whether the supervisor
 * lives and tell it what was found). Those rooms tell the claim what
 * concerns it through two hooks, claim_ended and claim_recorded, which
 * worker.c wires. */
#ifndef KYU_CLAIM_H
#define KYU_CLAIM_H

#include <stdbool.h>
#include <stdint.h>

#include "common/board.h"
#include "common/config.h"
#include "common/db.h"
#include "common/spell.h"
#include "conn.h"
#include "held.h"
#include "job.h"
#include "jobs.h"
#include "parent.h"
#include "peers.h"
#include "queues.h"
#include "record.h"
#include "retention.h"
#include "settle.h"
#include "stmt.h"
#include "store.h"

struct claim {
	const struct kyu_config *cfg;
	int index; /* the worker's number, from 1 */
	const char *host;
	struct conn *conn;
	struct parent *parent;
	struct jobs *jobs;
	struct held *held;
	struct record *rec;
	struct retention *ret;
	struct settle *settle; /* told when a claim's reply sees items to settle */
	struct peers *peers;   /* told of limited slots freed here */
	struct board_worker *bw;

	struct queues dir; /* the queue directory last read */
	bool dir_wanted;   /* read the directory with the next claim, if any queue had due rows */
	bool dir_force;    /* read it with the next claim in any case */

	/* The fan: with more than FAN_AT queues due at once, one row of each
	 * in turn, by name (notes/DESIGN.md, "Many queues: the fan"). */
	bool fan;
	char *fan_cursor;      /* the last name of the page before ("": the first) */
	int fan_cycle_got;     /* rows the fan took since it last began at the first name */
	bool fan_cycle_whole;  /* that turn began at the first name (not part-way) */
	double fan_reclaim_at; /* monotonic: the fan's next look for expired leases */
	double fan_refile_at;  /* monotonic: when it next files every due queue's name */
	double fan_not_before; /* monotonic: the fan is not begun again before */
	double fan_probe_at;   /* monotonic: a directory may stop for the fan from then */

	/* Pacing. */
	bool wanted;              /* claim at the next chance */
	bool more, more_sent;     /* the last claim came back full; the supervisor was told */
	bool freed_pending;       /* a job that held a key or a limited slot ended */
	double claim_after;       /* monotonic: a claim that deadlocked waits until then */
	double skip_locked_until; /* claims mark with SKIP LOCKED until then */
	struct spell lock_waits;  /* claims wait for row locks (logged once per spell) */
	/* A wake-up datagram asked for the next claim (wake_recheck). */
	bool recheck_armed;
	int recheck_step;  /* rechecks made for this wake-up */
	double recheck_at; /* monotonic: claim again then (0: no) */

	/* The connection's claim statements. */
	bool prepared;  /* kyu_claim/kyu_reclaim exist on this connection */
	bool txn_dirty; /* a failed claim (or schedules step) may have left a transaction open */
	uint64_t release_token; /* the rows a failed claim marked, to give back (0: none) */

	/* The claim in flight. */
	struct {
		uint64_t token;
		double claimed_at;
		int n, n_fin;
		struct claim_layout lay;
		struct qpart parts[QUEUES_MAX_PARTS];
		int n_parts;
	} sent;

	uint64_t claims;
};

void claim_init(struct claim *cl, const struct kyu_config *cfg, int index, const char *host,
		struct conn *conn, struct parent *parent, struct jobs *jobs, struct held *held,
		struct record *rec, struct retention *ret, struct settle *settle,
		struct peers *peers, struct board_worker *bw);
void claim_free(struct claim *cl);

/* jobs.c's ended hook (ctx: the claim): a job ended; its slot, and its
 * key or limited queue's slot once its result is recorded, are free. */
void claim_ended(void *claim, const struct job *j);
/* record.c's recorded hook (ctx: the claim): the first n results of f
 * were recorded; retried: one of them waits for a retry. */
void claim_recorded(void *claim, const struct finish *f, int n, bool retried);

/* A new connection: its claim statements are prepared again, a
 * transaction left open is gone with the old one, and it claims at once. */
void claim_connected(struct claim *cl);
/* The configuration was reloaded: the prepared claims carry the lease,
 * the directory the served queues; held rows of queues no longer served
 * go back. */
void claim_reload(struct claim *cl);
/* A wake-up datagram (hinted: from a trigger, which can come before the
 * commit it announces) or a message that work may wait. */
void claim_wake(struct claim *cl, bool hinted);
/* Claim at the next chance (a schedule fired a job that may be ours). */
void claim_want(struct claim *cl);
/* kyu_settle ran (settle.h): what it freed may be due now. */
void claim_settled(void *claim);
/* A statement's transaction may be open (a failed schedules step): end
 * it before anything else is sent. */
void claim_txn_left_open(struct claim *cl);
/* kyud is stopping: give back what is held; no recheck of a wake-up. */
void claim_drain(struct claim *cl);

/* Rows of the statement order (ctx: the claim). */
bool claim_rollback_due(void *claim, struct stmt_turn *t);
bool claim_rollback_send(void *claim, struct stmt_turn *t, struct strbuf *sb);
void claim_rollback_reply(void *claim, const struct db_reply *r);
bool claim_release_due(void *claim, struct stmt_turn *t);
bool claim_release_send(void *claim, struct stmt_turn *t, struct strbuf *sb);
void claim_release_reply(void *claim, const struct db_reply *r);
void claim_release_unsent(void *claim);
double claim_release_when(void *claim, double now);
/* Moments: a wake-up's recheck, claiming by itself, the claim's size
 * (t->want). */
bool claim_recheck_due(void *claim, struct stmt_turn *t);
double claim_recheck_when(void *claim, double now);
bool claim_self_poll_due(void *claim, struct stmt_turn *t);
double claim_self_poll_when(void *claim, double now);
bool claim_size_due(void *claim, struct stmt_turn *t);
double claim_size_when(void *claim, double now);
/* The claim with the plain successes riding along, and the plain one. */
bool claim_with_results_due(void *claim, struct stmt_turn *t);
bool claim_with_results_send(void *claim, struct stmt_turn *t, struct strbuf *sb);
bool claim_due(void *claim, struct stmt_turn *t);
bool claim_send(void *claim, struct stmt_turn *t, struct strbuf *sb);
void claim_reply(void *claim, const struct db_reply *r);
void claim_unsent(void *claim);

#endif
