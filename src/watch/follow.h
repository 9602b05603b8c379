/* What the binary log's events mean for this daemon: the watcher's
 * decisions, kept apart from its input and output so that the unit tests
 * can feed it events built by hand.
 *
 * Only the configured database's kyu_jobs, kyu_queues and kyu_schedules
 * count. In row format a kyu_jobs row wakes when it becomes due in a
 * queue this daemon serves: inserted as waiting, made waiting again (an
 * SQL retry, kyu_settle releasing a blocked job, kyud's own retry), or
 * given another run_at while waiting. kyud's own claims, heartbeats and
 * results wake nothing, so a busy daemon's writes do not turn into claims
 * of its idle workers. A running row cancelled or deleted is a cancel
 * hint; any change to kyu_queues (a resume, a raised limit) wakes every
 * queue; kyu_schedules a schedules hint. In statement format (or an image
 * this reader cannot decode) a statement that names kyu_jobs wakes every
 * queue: an INSERT at once, anything else at most once a second (kyud's
 * own statements are among those). */
#ifndef KYU_FOLLOW_H
#define KYU_FOLLOW_H

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "common/db_binlog.h"
#include "common/proto.h"
#include "rowimage.h"

/* The hints a change gives: the bits of KYU_HINT's value (proto.h). */
#define FOLLOW_WAKE ((unsigned)KYU_HINT_WAKE)
#define FOLLOW_CANCEL ((unsigned)KYU_HINT_CANCEL)
#define FOLLOW_SCHEDULES ((unsigned)KYU_HINT_SCHEDULES)

#define FOLLOW_MAPS 16

enum follow_table { FT_OTHER, FT_JOBS, FT_QUEUES, FT_SCHEDULES };

struct follow_map {
	uint64_t id;
	enum follow_table table;
	struct rowimage_table cols; /* FT_JOBS only */
};

struct follow {
	const struct kyu_config *cfg;
	struct follow_map maps[FOLLOW_MAPS];
	int n_maps, next_evict;
	unsigned pending; /* hints to send */
	unsigned slow;    /* hints held back: at most one send a second */
	/* Counters, for the log and the tests. */
	uint64_t events, rows, unreadable;
};

void follow_init(struct follow *f, const struct kyu_config *cfg);
/* Take one event into account. */
void follow_event(struct follow *f, const struct binlog_event *ev);
/* The hints to send now (cleared); slow_ok: a second has passed since
 * the held-back hints last went out, so they go too. */
unsigned follow_take(struct follow *f, bool slow_ok);

/* Whether this daemon serves the queue (the [kyud] queues list, or all). */
bool follow_serves(const struct kyu_config *cfg, const uint8_t *queue, size_t len);

#endif
