/* The daemon registry: each running kyud's row of kyu_daemons (kyu_jobs(7)),
 * which tells the wake-up triggers of sql/notify.sql, `kyu submit` and
 * `kyu wake` where every daemon listens and which queues it serves. Used
 * by kyud (src/kyud names the daemon, src/worker writes its row) and kyu
 * (src/cli).
 *
 * Worker 1 of each daemon writes the row at start and refreshes it every
 * registry_interval(); a stopping daemon deletes it. A row counts as live
 * until its live_until, a few intervals ahead: past that the wake-ups skip
 * it and the refreshes of other daemons delete it.
 *
 * The triggers read kyu_daemons inside the submitter's INSERT, and InnoDB
 * keeps the shared locks of that read until the submitter commits. So a
 * refresh never waits for a lock (lock wait timeout 0, caught inside the
 * statement): a locked row is skipped and tried again REGISTRY_RETRY
 * later, and the worker's next statement (a lease renewal, say) is never
 * held up behind the registry. */
#ifndef KYU_REGISTRY_H
#define KYU_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"
#include "db.h"
#include "util.h"

/* host (up to 64 bytes of it) ":" pid ":" 16 hex digits */
#define REGISTRY_ID_MAX 96
/* A refresh that found the row locked is tried again this much later. */
#define REGISTRY_RETRY 1.0
/* A row is live for this many refresh intervals after its last refresh. */
#define REGISTRY_LIVE_INTERVALS 3

/* Whether a row of kyu_daemons d serves the queue given as the SQL
 * expression q: an empty list means every queue. FIND_IN_SET finds no name
 * that holds a comma, and no configured queue can (kyu.ini(5) splits the
 * list at commas): such a queue is served by the daemons of every queue
 * only, as in kyud itself. sql/notify.sql spells the same test. */
#define REGISTRY_SERVES(d, q) "(" d ".queues = '' OR FIND_IN_SET(" q ", " d ".queues) > 0)"
#define REGISTRY_LIVE(d) d ".live_until > NOW(6)"

#define REGISTRY_MIN_INTERVAL 20.0
#define REGISTRY_MAX_INTERVAL 600.0

/* Seconds between two refreshes: twice the lease, within 20 to 600 (a row
 * lives REGISTRY_LIVE_INTERVALS of them); 120 s with the default lease. */
double registry_interval(const struct kyu_config *cfg);

/* A token for a daemon starting now: host:pid:random. */
void registry_make_id(char *buf, size_t len, const char *host, pid_t pid);

/* True when id can be a token (what --daemon-id accepts): printable ASCII
 * without quotes or backslashes, 1 to REGISTRY_ID_MAX - 1 bytes. */
bool registry_id_valid(const char *id);

/* The refresh: write the daemon's row (insert or update, with its job
 * slots, [kyud] workers x slots, and the jobs it runs), read whether an
 * operator asked it to drain, then delete the rows that are no longer
 * live, if there are any. One round trip that always succeeds as a
 * statement, and costs the server two (the compound statement and its
 * INSERT; one more when it deletes, one more when it is asked to drain);
 * registry_read says what happened. old: the row of a schema older than
 * version 9, without slots, running and drain (REG_OLD said so). */
void registry_refresh_build(struct strbuf *sb, const struct kyu_config *cfg, const char *id,
			    const char *host, pid_t pid, unsigned running, bool old);
/* An operator's drain (kyu drain, kyu web's daemons page): two
 * statements, the UPDATE that sets drain and drain_by on the live rows
 * whose id, or host:pid, is daemon (once: a second drain keeps the first's
 * time and author), and the SELECT of those rows: host, pid, id, drain,
 * drain_by. The daemon reads it at its next refresh, which an any-queue
 * wake-up brings forward (kyud(8), "Draining"). */
void registry_drain_build(struct strbuf *sb, const char *daemon);
/* The stopping daemon's delete of its own row (same reply shape). */
void registry_remove_build(struct strbuf *sb, const char *id);

enum registry_result {
	REG_DONE,    /* written (or deleted) */
	REG_DRAIN,   /* written, and its drain is set: msg says when and by whom */
	REG_LOCKED,  /* the row was locked: nothing written, try again soon */
	REG_MISSING, /* no kyu_daemons (schema older than version 3) */
	REG_OLD,     /* no slots, running or drain (older than version 9): nothing written */
	REG_FAILED,  /* anything else: msg says what */
};

/* What a refresh's or remove's reply says; msg gets the server's message
 * for REG_MISSING and REG_FAILED, "TIME by WHO" (or "TIME") for
 * REG_DRAIN. */
enum registry_result registry_read(const struct db_reply *r, char *msg, size_t len);

#endif
