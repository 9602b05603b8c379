/* What the supervisor tells systemd (sd_notify(3)), from what its workers
 * report (KYU_STATE, report.h). See sdnotify.h. */
#include "sdnotify.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <errmsg.h>
#include <mysqld_error.h>
#include <systemd/sd-daemon.h>

#include "common/db.h"
#include "common/log.h"
#include "common/util.h"

/* STATUS= at most this often: systemctl status is read by people. */
#define STATUS_GAP 1.0

/* Words for the errors a connection attempt usually ends with. STATUS=
 * carries kyu's words and the number, never the server's text: the
 * channel from the worker holds a number only, and the full message is in
 * the worker's log line (MariaDB's messages name the user and host, and
 * whether a password was used, never the password). */
static const char *db_error_words(unsigned e)
{
	switch (e) {
	case DB_ERR_NO_ANSWER:
		return "no answer in time";
	case CR_CONNECTION_ERROR: /* Connector/C: socket and TCP alike */
	case CR_CONN_HOST_ERROR:
		return "server not reachable";
	case CR_UNKNOWN_HOST:
		return "unknown host";
	case CR_SERVER_GONE_ERROR:
	case CR_SERVER_LOST:
		return "connection lost";
	case CR_SSL_CONNECTION_ERROR:
		return "TLS failed";
	case CR_OUT_OF_MEMORY:
		return "out of memory";
	case ER_CON_COUNT_ERROR:
	case ER_TOO_MANY_USER_CONNECTIONS:
		return "too many connections";
	case ER_ACCESS_DENIED_ERROR:
	case ER_ACCESS_DENIED_NO_PASSWORD_ERROR:
		return "access denied";
	case ER_DBACCESS_DENIED_ERROR:
		return "access to the database denied";
	case ER_BAD_DB_ERROR:
		return "unknown database";
	case ER_HOST_IS_BLOCKED:
	case ER_HOST_NOT_PRIVILEGED:
		return "host not allowed";
	case ER_SERVER_SHUTDOWN:
	case ER_CONNECTION_KILLED:
		return "server shutting down";
	default:
		return NULL;
	}
}

static size_t add(char *buf, size_t cap, size_t o, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t add(char *buf, size_t cap, size_t o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (o >= cap)
		return o;
	va_start(ap, fmt);
	n = vsnprintf(buf + o, cap - o, fmt, ap);
	va_end(ap);
	return n < 0 ? o : o + (size_t)n;
}

void sdnotify_status_text(const struct sdnotify *n, char *buf, size_t cap)
{
	unsigned running = 0;
	int alive = 0, connected = 0;
	size_t o = 0;

	for (int i = 0; i < *n->n; i++) {
		const struct child *c = &n->children[i];
		if (!c->pid)
			continue;
		alive++;
		running += c->st.running;
		connected += c->st.connected;
	}
	if (n->stopping)
		o = add(buf, cap, o, "stopping; ");
	else if (!n->ready)
		o = add(buf, cap, o, n->started ? "waiting for the database; " : "starting; ");
	o = add(buf, cap, o, "%u job%s running, ", running, running == 1 ? "" : "s");
	if (alive < n->workers)
		o = add(buf, cap, o, "%d of %d workers; ", alive, n->workers);
	else
		o = add(buf, cap, o, "%d worker%s; ", alive, alive == 1 ? "" : "s");
	if (connected > 0 && connected < alive)
		o = add(buf, cap, o, "database connected (%d of %d workers)", connected, alive);
	else if (connected > 0)
		o = add(buf, cap, o, "database connected");
	else if (n->down_since) {
		const char *words = db_error_words(n->down_err);
		struct tm tm;
		char when[32] = "?";

		if (localtime_r(&n->down_since, &tm))
			strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		o = add(buf, cap, o, "database unreachable since %s: error %u%s%s%s", when,
			n->down_err, words ? " (" : "", words ? words : "", words ? ")" : "");
	} else {
		o = add(buf, cap, o, "database not connected yet");
	}
	(void)o;
}

/* A STATUS= that changed goes now, or when STATUS_GAP has passed. */
static void send_status(struct sdnotify *n)
{
	char text[sizeof(n->status)];
	double now = mono_now(), wait;

	if (!n->notify)
		return;
	sdnotify_status_text(n, text, sizeof(text));
	if (strcmp(text, n->status) == 0)
		return;
	wait = n->status_at + STATUS_GAP - now;
	if (wait > 0) {
		if (!ev_is_active(&n->status_w)) {
			ev_timer_set(&n->status_w, wait, 0.);
			ev_timer_start(n->loop, &n->status_w);
		}
		return;
	}
	ev_timer_stop(n->loop, &n->status_w);
	memcpy(n->status, text, sizeof(text));
	n->status_at = now;
	sd_notifyf(0, "STATUS=%s", text);
}

static void on_status(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	send_status(t->data);
}

/* What the workers say about the database, folded into one state: up
 * while any live worker is connected; down since the first report of an
 * error with none connected. */
static void fold_db(struct sdnotify *n)
{
	unsigned err = 0;
	bool any = false;

	for (int i = 0; i < *n->n; i++) {
		const struct child *c = &n->children[i];
		if (!c->pid)
			continue;
		any |= c->st.connected;
		if (!err)
			err = c->st.db_error;
	}
	if (any) {
		n->down_since = 0;
		n->down_err = 0;
	} else if (err) {
		if (!n->down_since)
			n->down_since = time(NULL);
		n->down_err = err;
	}
}

static void try_ready(struct sdnotify *n)
{
	char text[sizeof(n->status)];

	if (n->ready || !n->started || n->stopping)
		return;
	if (n->down_since == 0) {
		for (int i = 0; i < *n->n; i++) {
			if (n->children[i].pid && n->children[i].st.connected) {
				n->ready = true;
				break;
			}
		}
	}
	if (!n->ready) {
		/* Said once a worker found the database unreachable, not for the
		 * few milliseconds every start takes to connect. */
		if (!n->waiting_logged && n->down_since)
			log_notice(
				"%d worker(s) started; waiting for the database (error %u) before "
				"reporting ready",
				n->workers, n->down_err);
		n->waiting_logged |= n->down_since != 0;
		return;
	}
	log_notice("ready: %d workers, database connected", n->workers);
	if (!n->notify)
		return;
	sdnotify_status_text(n, text, sizeof(text));
	memcpy(n->status, text, sizeof(text));
	n->status_at = mono_now();
	sd_notifyf(0, "READY=1\nSTATUS=%s", text);
}

/* Every half interval: WATCHDOG=1 if every worker process reported within
 * the last half. A worker waiting to be restarted has no process and does
 * not count (the supervisor handles it); one that exists and is silent is
 * wedged, and systemd should act. */
static void on_ping(EV_P_ ev_timer *t, int revents)
{
	struct sdnotify *n = t->data;
	double now = mono_now(), limit = (double)n->watchdog_us / 2e6;
	bool ok = true;
	(void)EV_A;
	(void)revents;

	for (int i = 0; i < *n->n; i++) {
		/* The one field of the table this room writes (child.h). */
		struct child *c = &n->children[i];
		if (!c->pid || now - c->seen <= limit)
			continue;
		if (!c->ping_withheld)
			log_err("worker %d (pid %d) has not reported for %.1f s (its loop is stuck or "
				"stopped): no more watchdog pings to systemd while it is silent",
				c->index, (int)c->pid, now - c->seen);
		c->ping_withheld = true;
		ok = false;
	}
	if (ok)
		sd_notify(0, "WATCHDOG=1");
}

void sdnotify_init(struct sdnotify *n, struct ev_loop *loop, const struct kyu_config *cfg,
		   struct child *children, const int *n_children)
{
	const char *sock = getenv("NOTIFY_SOCKET");
	uint64_t us = 0;

	memset(n, 0, sizeof(*n));
	n->loop = loop;
	n->children = children;
	n->n = n_children;
	n->workers = cfg->workers;
	n->notify = sock && *sock;
	n->status_at = -1e9;
	ev_init(&n->status_w, on_status);
	n->status_w.data = n;
	ev_init(&n->ping_w, on_ping);
	n->ping_w.data = n;
	/* > 0 only when WATCHDOG_PID is unset or ours. */
	if (n->notify && sd_watchdog_enabled(0, &us) > 0 && us > 0) {
		n->watchdog_us = us;
		ev_timer_set(&n->ping_w, 0., (double)us / 2e6);
		ev_timer_start(loop, &n->ping_w);
		log_info("systemd watchdog: %.1f s", (double)us / 1e6);
	}
}

void sdnotify_free(struct sdnotify *n)
{
	ev_timer_stop(n->loop, &n->ping_w);
	ev_timer_stop(n->loop, &n->status_w);
}

void sdnotify_spawned(struct sdnotify *n)
{
	send_status(n);
}

void sdnotify_exited(struct sdnotify *n)
{
	fold_db(n);
	send_status(n);
}

void sdnotify_report(struct sdnotify *n, struct child *c)
{
	if (c->ping_withheld && c->life == CHILD_ALIVE) {
		log_notice("worker %d (pid %d) reports again: watchdog pings resume", c->index,
			   (int)c->pid);
		c->ping_withheld = false;
	}
	fold_db(n);
	try_ready(n);
	send_status(n);
}

void sdnotify_started(struct sdnotify *n, int workers)
{
	n->workers = workers;
	n->started = true;
	try_ready(n);
	send_status(n);
}

void sdnotify_reloading(struct sdnotify *n)
{
	/* Not before READY=1: systemd is still waiting for the start. */
	if (!n->ready || !n->notify)
		return;
	n->reloading = true;
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%" PRIu64, (uint64_t)(mono_now() * 1e6));
}

void sdnotify_reloaded(struct sdnotify *n, const struct kyu_config *cfg)
{
	n->workers = cfg->workers;
	if (n->reloading) {
		n->reloading = false;
		sd_notify(0, "READY=1");
	}
	send_status(n);
}

void sdnotify_stopping(struct sdnotify *n)
{
	char text[sizeof(n->status)];

	n->stopping = true;
	if (!n->notify)
		return;
	sdnotify_status_text(n, text, sizeof(text));
	memcpy(n->status, text, sizeof(text));
	n->status_at = mono_now();
	sd_notifyf(0, "STOPPING=1\nSTATUS=%s", text);
}
