/* kyud's watcher: the process (kyud --watcher, one per daemon, started by
 * the supervisor: src/kyud/watchproc.h) that notices new and newly. See
 * watch.h. */
#include "watch.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sysexits.h>
#include <time.h>
#include <unistd.h>

#include <sys/prctl.h>

#include "common/board.h"
#include "common/db.h"
#include "common/db_binlog.h"
#include "common/log.h"
#include "common/proto.h"
#include "common/util.h"
#include "changes.h"
#include "follow.h"

/* The server's heartbeat while the log is quiet; three missed ones (the
 * read timeout) mean the server or the network is gone. */
#define HEARTBEAT_S 5
/* How long a server that could not serve the log (no binary log, no
 * privilege) is polled instead before the log is tried again. */
#define BINLOG_RETRY_S 600.0
/* Log a lag past this once a minute. */
#define LAG_WARN_S 30.0

struct watch {
	const struct kyu_config *cfg;
	struct board_watch
		*board; /* the scoreboard's watcher figures; a scratch copy without one */
	struct board_watch scratch;
	const char *daemon_id;
	struct follow follow;
	struct changes changes;
	double backoff;         /* seconds before the next connect after a failure */
	double binlog_retry_at; /* mono time; 0: try the log now */
	double slow_sent_at;    /* mono time the held-back hints last went out */
	double lag_warned_at;
	bool failing;        /* the last attempt failed: said once, not each time */
	int wake_poll_said;  /* the fall-back to polling was logged */
	bool binlog_failing; /* the last open of the log failed (logged once) */
	double binlog_backoff;
};

static void nap(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s,
			       .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* The supervisor went away: nobody needs our hints. */
static void check_parent(void)
{
	if (getppid() == 1)
		_exit(0);
}

static void send_hints(struct watch *w, unsigned hints)
{
	struct msg m = { .type = KYU_HINT, .value = hints };

	if (!hints)
		return;
	board_store(&w->board->hints, w->board->hints + 1);
	log_debug("hint:%s%s%s", hints & FOLLOW_WAKE ? " wake" : "",
		  hints & FOLLOW_CANCEL ? " cancel" : "",
		  hints & FOLLOW_SCHEDULES ? " schedules" : "");
	if (proto_send_fd(PROTO_FD, &m, -1) < 0 &&
	    (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN || errno == EBADF))
		_exit(0);
}

static void failed(struct watch *w, const char *what, const char *err)
{
	if (!w->failing)
		log_warn("%s: %s; trying again in %.0f s (and every %.0f s at most after that)",
			 what, err, w->backoff < 1 ? 1 : w->backoff, 30.0);
	w->failing = true;
	w->backoff = w->backoff < 1 ? 1 : w->backoff * 2 > 30 ? 30 : w->backoff * 2;
	nap(w->backoff);
}

static void note_lag(struct watch *w, const struct db_binlog *b, uint32_t ts)
{
	struct timespec now;
	double lag, t;

	if (!ts)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	lag = (double)now.tv_sec + db_binlog_clock_offset(b) - (double)ts;
	board_store(&w->board->lag_us, lag > 0 ? (uint64_t)(lag * 1e6) : 0);
	t = mono_now();
	if (lag > LAG_WARN_S && t - w->lag_warned_at > 60) {
		w->lag_warned_at = t;
		log_warn(
			"the binary log of %s is read %.0f s behind its writes: wake-ups from it come "
			"late",
			db_binlog_peer(b), lag);
	}
}

/* Follow the log until the stream is lost. */
static void follow_stream(struct watch *w, struct db_binlog *b)
{
	struct binlog_event ev;
	char err[512];

	follow_init(&w->follow, w->cfg);
	/* Whatever changed while no stream was open. */
	send_hints(w, FOLLOW_WAKE | FOLLOW_CANCEL);
	for (;;) {
		double now;
		unsigned hints;
		uint64_t unreadable;
		bool slow_ok;

		if (db_binlog_next(b, &ev, err, sizeof(err)) < 0) {
			log_warn("wake-ups: %s; reconnecting", err);
			return;
		}
		check_parent();
		board_store(&w->board->events, w->board->events + 1);
		unreadable = w->follow.unreadable;
		follow_event(&w->follow, &ev);
		if (w->follow.unreadable != unreadable)
			log_debug(
				"a rows event of kyu_jobs could not be decoded: waking every queue");
		/* Only a commit tells the lag: a rotation or the format
		 * description carries its file's time, and a row of a long
		 * transaction the time of its statement. */
		if (ev.kind == BINLOG_QUERY || ev.kind == BINLOG_COMMIT)
			note_lag(w, b, ev.timestamp);
		/* A transaction's rows reach the log at its commit: a hint goes
		 * out at a transaction's end (an XID, or a statement), and a
		 * burst of transactions becomes one, sent when nothing more is
		 * waiting on the socket. */
		if ((ev.kind != BINLOG_COMMIT && ev.kind != BINLOG_QUERY &&
		     ev.kind != BINLOG_HEARTBEAT) ||
		    (!w->follow.pending && !w->follow.slow) || db_binlog_pending(b))
			continue;
		now = mono_now();
		slow_ok = now - w->slow_sent_at >= 1.0;
		if (slow_ok && w->follow.slow)
			w->slow_sent_at = now;
		hints = follow_take(&w->follow, slow_ok);
		send_hints(w, hints);
	}
}

/* Returns 0 when the log was followed (and lost), else BINLOG_RETRY or
 * BINLOG_IMPOSSIBLE. */
static int try_binlog(struct watch *w)
{
	struct db_binlog *b = db_binlog_new();
	uint32_t id = db_binlog_server_id(w->daemon_id);
	char err[512];
	int rc;

	if (!b)
		return BINLOG_RETRY;
	rc = db_binlog_open(b, w->cfg, id, HEARTBEAT_S, err, sizeof(err));
	if (rc == 0) {
		if (w->board->mode == BW_BINLOG)
			board_store(&w->board->reconnects, w->board->reconnects + 1);
		board_store(&w->board->mode, BW_BINLOG);
		log_info("wake-ups: following the binary log of %s (as replica %u)",
			 db_binlog_peer(b), (unsigned)id);
		w->binlog_failing = false;
		w->binlog_backoff = 0;
		w->wake_poll_said = 0;
		follow_stream(w, b);
	} else if (rc == BINLOG_IMPOSSIBLE) {
		if (w->cfg->wake_binlog == WAKE_BINLOG_ON) {
			log_err("[kyud] wake_binlog = on in %s, but %s", w->cfg->path, err);
			db_binlog_free(b);
			_exit(EX_CONFIG);
		}
		if (w->wake_poll_said != 1)
			log_notice(
				"wake-ups: not from the binary log: %s; %s", err,
				w->cfg->wake_poll
					? "checking for changes instead"
					: "[kyud] wake_poll = 0: polling only every poll_interval");
		w->wake_poll_said = 1;
		w->binlog_retry_at = mono_now() + BINLOG_RETRY_S;
	} else {
		/* Checked for changes meanwhile, until the next try. */
		if (!w->binlog_failing)
			log_warn(
				"wake-ups: cannot open the binary log: %s; checking for changes until it "
				"can be",
				err);
		w->binlog_failing = true;
		w->binlog_backoff = w->binlog_backoff < 1        ? 1
				    : w->binlog_backoff * 2 > 30 ? 30
								 : w->binlog_backoff * 2;
		w->binlog_retry_at = mono_now() + w->binlog_backoff;
	}
	db_binlog_free(b);
	return rc;
}

/* Ask for changes every wake_poll seconds until it is time to try the log
 * again (never, with wake_binlog = off). */
static void poll_changes(struct watch *w)
{
	struct db *db = db_new(NULL, 10.0);
	const struct db_reply *reply;
	bool connected = false;

	changes_reset(&w->changes);
	while (w->cfg->wake_binlog == WAKE_BINLOG_OFF || mono_now() < w->binlog_retry_at) {
		check_parent();
		if (w->cfg->wake_poll == 0) {
			nap(5);
			continue;
		}
		if (!connected) {
			if (db_connect(db, w->cfg) < 0) {
				failed(w, "wake-ups: cannot check for changes", db_error(db));
				continue;
			}
			connected = true;
			if (w->board->mode == BW_POLL)
				board_store(&w->board->reconnects, w->board->reconnects + 1);
			board_store(&w->board->mode, BW_POLL);
			changes_reset(&w->changes);
		}
		if (db_query(db, CHANGES_SQL, sizeof(CHANGES_SQL) - 1, &reply) != DB_OK ||
		    reply->n < 1 || reply->r[0].n_rows != 1 || reply->r[0].n_cols != CHANGES_COLS) {
			/* A Galera node that takes connections but refuses
			 * statements (1047) comes here at each try: said once. */
			failed(w, "wake-ups: cannot check for changes", db_error(db));
			db_close(db);
			connected = false;
			continue;
		}
		if (w->failing)
			log_notice("wake-ups: checking for changes again");
		w->failing = false;
		w->backoff = 0;
		send_hints(w, changes_compare(&w->changes, (const char *const *)reply->r[0].cells));
		nap(w->cfg->wake_poll);
	}
	db_free(db);
}

int watch_main(const struct kyu_config *cfg, const char *daemon_id)
{
	struct watch w = { .cfg = cfg, .daemon_id = daemon_id ? daemon_id : "" };
	struct board *board = NULL;

	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* The supervisor replaces us on reload and stops us with TERM; should
	 * it die without a word, so do we. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	check_parent();
	/* Its figures for /metrics, where the supervisor handed a scoreboard
	 * over; counted in a copy of its own otherwise. */
	w.board = board_map(BOARD_FD, true, &board) == 0 ? &board->watch : &w.scratch;
	board_store(&w.board->mode, BW_NONE);
	for (;;) {
		if (cfg->wake_binlog != WAKE_BINLOG_OFF && mono_now() >= w.binlog_retry_at &&
		    try_binlog(&w) == 0)
			continue;
		poll_changes(&w);
	}
	return 0;
}
