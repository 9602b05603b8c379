/* Retention: the periodic delete of finished rows older than [kyud]
 * retention. See retention.h. */
#include "retention.h"

#include <inttypes.h>

#include "common/log.h"
#include "common/minutes.h"
#include "names.h"
#include "store.h"

void retention_init(struct retention *ret, const struct kyu_config *cfg, struct conn *conn,
		    struct record *rec, const struct jobs *jobs)
{
	ret->cfg = cfg;
	ret->conn = conn;
	ret->rec = rec;
	ret->jobs = jobs;
	ret->wanted = true;
}

bool retention_due(void *retention, struct stmt_turn *t)
{
	const struct retention *ret = retention;

	(void)t;
	return ret->wanted && !ret->jobs->draining;
}

bool retention_send(void *retention, struct stmt_turn *t, struct strbuf *sb)
{
	struct retention *ret = retention;

	(void)t;
	ret->wanted = false;
	store_cleanup_build_lock(sb, ret->cfg, !ret->lockless);
	ret->minutes = record_counting(ret->rec);
	if (ret->minutes)
		minutes_cleanup_build(sb, ret->cfg->cleanup_batch);
	ret->names = ret->conn->fan;
	if (ret->names)
		names_file_build(sb);
	return true;
}

void retention_reply(void *retention, const struct db_reply *r)
{
	struct retention *ret = retention;
	struct db_reply body = *r;
	int64_t n;

	/* Filing queue names, last: its failure (a grant missing after an
	 * upgrade) must not stop the deletes before it, and is said. */
	if (ret->names &&
	    minutes_split(r, STORE_CLEANUP_STMTS + (ret->minutes ? 1 : 0), &body) == MINUTES_FAILED)
		log_warn("filing new queue names (kyu_queue_names_new into kyu_queue_names): %s",
			 r->err);
	/* The delete of old kyu_minutes rows, after the others: its failure is
	 * the count's business (it fails the same way), not retention's. */
	r = &body;
	if (ret->minutes && minutes_split(r, STORE_CLEANUP_STMTS, &body) == MINUTES_FAILED)
		log_debug("retention of kyu_minutes: %s", r->err);
	r = &body;
	n = store_cleanup_read(r);
	if (n > 0)
		log_info("retention: deleted %" PRId64 " finished jobs (succeeded older than %d s, "
			 "failed or cancelled older than %d s)",
			 n, ret->cfg->retention, store_retention_failed(ret->cfg));
	else if (!ret->lockless && store_cleanup_lock_refused(r)) {
		/* The lock only keeps two cleaners from doing the same work
		 * (store.c): retention must not stop for want of it. Said once
		 * per worker; the server's answer will not change. */
		log_notice("retention: the server refuses GET_LOCK (%s); deleting without the lock "
			   "from now on",
			   r->err);
		ret->lockless = true;
		ret->wanted = true;
	} else if (n < 0)
		conn_failed(ret->conn, r, "retention delete");
}
