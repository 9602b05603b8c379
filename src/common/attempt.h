/* One job's attempt as it travels from claim to recorded result: the row
 * as a claim returns it (struct claimed), how the attempt ended (enum
 * outcome, struct attempt_cost) and the result a worker records (struct
 * finish). Types only, shared by the worker's rooms (worker/), by the
 * statement builders (worker/store.h) and by kyu_minutes (minutes.h), so
 * that a module that only reads a row does not include SQL text.
 *
 * Who owns the row at each step (the rooms of worker/): a claim's reply
 * allocates each row as a struct claimed (store.c) and claim.c hands it to
 * held.c, which starts it at once, holds it in the prefetch ring until a
 * slot frees, or gives it back; jobs.c moves a started one into a struct
 * job (job.c) and owns that, through its slot, while the job runs; the end
 * becomes a struct finish in results.c, which owns its strings until the
 * round trip that records it (record.c: a finish, or riding along with a
 * claim) has an answer. */
#ifndef KYU_ATTEMPT_H
#define KYU_ATTEMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A row as a claim returns it. Owned by whoever holds it: the claim's
 * reader allocates, store_claimed_clear frees the strings. */
struct claimed {
	uint64_t seq, token;
	char *id, *queue, *command, *argv_json, *env_json, *cwd;
	char *key;         /* concurrency_key, or NULL */
	char *after_json;  /* after (the upstreams' ids, JSON), or NULL */
	char *traceparent; /* W3C trace context, passed as TRACEPARENT, or NULL */
	bool downstream;   /* has_downstream: jobs wait for this one's end */
	unsigned attempts, tempfails, max_attempts, time_limit;
	double claimed_at; /* monotonic, just before the claim was sent */
	double got_at;     /* monotonic, when the claim's reply was read */
	int64_t waited_us; /* due (run_at) to claimed, by the database's clock; -1: unknown */
	char *bad;         /* why the row cannot be run as read (e.g. a NUL byte), or NULL */
};

/* How an attempt ended, as recorded in the row. */
enum outcome {
	OUT_SUCCEEDED,
	OUT_RETRY,     /* failed, goes back to waiting after a backoff */
	OUT_FAILED,    /* failed for good */
	OUT_RELEASE,   /* interrupted by kyud itself: due again now, attempt not counted */
	OUT_CANCELLED, /* the user cancelled it while it ran */
};

/* What an attempt cost (wait4's rusage of its process). */
struct attempt_cost {
	bool known;               /* false: no process was reaped (never started): NULL */
	uint64_t user_us, sys_us; /* CPU time in user and kernel mode, microseconds */
	uint64_t max_rss;         /* peak resident set size, bytes */
};

/* One attempt's result, as the builders read it (read-only; results.c
 * owns the strings). */
struct finish {
	uint64_t seq, token;
	int pid; /* the job's process, 0 if it never started */
	enum outcome outcome;
	int exit_code;   /* -1: none */
	int signal;      /* 0: none */
	bool tempfail;   /* EX_TEMPFAIL: retry; counted in tempfails, not against max_attempts */
	bool timeout;    /* kyud ended it at its time limit (kyu_attempts' outcome 'timeout') */
	bool first;      /* the job's first attempt: a success of it needs no kyu_attempts row
			* under [kyud] history = failures */
	bool downstream; /* jobs wait for this one: its end is settled (settle.h) */
	struct attempt_cost cost; /* not recorded for OUT_RELEASE */
	const char *error;
	const char *output;
	size_t output_len;
	/* What the job said on its status channel (kyu_jobs(7), "The status
	 * channel"); only when status is set are the columns written. */
	bool status;
	int progress;       /* -1: none */
	const char *note;   /* NULL: none */
	const char *result; /* NULL: none; its JSON is checked by the server */
	size_t result_len;
	/* Sent before, in a round trip whose reply was lost: perhaps
	 * recorded already (minutes.h). */
	bool unsure;
	/* A failure for good recorded together with its queue's failure hook
	 * (store_finish.h): in a transaction of its own. */
	bool hook;
};

#endif
