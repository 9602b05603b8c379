#include "sdnotify.h"

#include <inttypes.h>
#include <signal.h>
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

extern char **environ;

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

	for (int i = 0; i < SDNOTIFY_MAX_WORKERS; i++) {
		if (!n->w[i].pid)
			continue;
		alive++;
		running += n->w[i].st.running;
		connected += n->w[i].st.connected;
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
		o = add(buf, cap, o, "database unreachable since %s: error %u%s%s%s", when, n->down_err,
			words ? " (" : "", words ? words : "", words ? ")" : "");
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

	for (int i = 0; i < SDNOTIFY_MAX_WORKERS; i++) {
		if (!n->w[i].pid)
			continue;
		any |= n->w[i].st.connected;
		if (!err)
			err = n->w[i].st.db_error;
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
		for (int i = 0; i < SDNOTIFY_MAX_WORKERS; i++) {
			if (n->w[i].pid && n->w[i].st.connected) {
				n->ready = true;
				break;
			}
		}
	}
	if (!n->ready) {
		/* Said once a worker found the database unreachable, not for the
		 * few milliseconds every start takes to connect. */
		if (!n->waiting_logged && n->down_since)
			log_notice("%d worker(s) started; waiting for the database (error %u) before "
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

/* Silent this long, a worker is killed (see check_kill). At least a
 * second, so that a configuration with no time to spare (heartbeat close to
 * lease - fence_margin) does not kill workers for a late timer. */
static double kill_after(const struct sdnotify *n)
{
	return n->kill_after > 1.0 ? n->kill_after : 1.0;
}

/* A worker that stopped reporting for kill_after is killed, whether or not
 * systemd watches us: its jobs' leases are no longer renewed and its own
 * fencing timer cannot fire, so they must stop (the supervisor sweeps them
 * once it is gone, as a subreaper) before another daemon may claim them.
 * Its reports come from its loop's timer whatever the database does, so a
 * worker merely waiting on a slow database keeps reporting and fences its
 * own jobs (lease.h). Its last renewal started at most a heartbeat before
 * its loop stopped, and its last report came before that, so
 * lease - fence_margin - heartbeat after the last report is within the
 * fencing deadline. A worker that never reported has claimed nothing (its
 * first report precedes its first claim) and is left alone. Armed for the
 * earliest deadline; a report since only makes it fire early and look
 * again. */
static void check_kill(struct sdnotify *n)
{
	double now = mono_now(), next = 0, after = kill_after(n);

	for (int i = 0; i < SDNOTIFY_MAX_WORKERS; i++) {
		struct sdnotify_worker *w = &n->w[i];
		if (!w->pid || w->killed || !w->reported)
			continue;
		if (now - w->seen >= after && !w->overdue) {
			/* Look once more after one turn of the loop: if the
			 * supervisor itself was stopped, its poll returned EINTR
			 * on SIGCONT and the reports that came meanwhile are
			 * still unread in the sockets. */
			w->overdue = true;
			next = now;
		} else if (now - w->seen >= after) {
			log_err("worker %d (pid %d) stopped reporting for %.1f s (its loop is stuck or "
				"the process is stopped; lease - fence_margin - heartbeat is %.1f s): "
				"killing it and its jobs before their leases run out",
				i + 1, (int)w->pid, now - w->seen, after);
			kill(w->pid, SIGKILL);
			w->killed = true;
		} else if (next == 0 || w->seen + after < next) {
			next = w->seen + after;
		}
	}
	ev_timer_stop(n->loop, &n->kill_w);
	if (next > 0) {
		ev_timer_set(&n->kill_w, next - now, 0.);
		ev_timer_start(n->loop, &n->kill_w);
	}
}

static void on_kill(EV_P_ ev_timer *t, int revents)
{
	(void)EV_A;
	(void)revents;
	check_kill(t->data);
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

	for (int i = 0; i < SDNOTIFY_MAX_WORKERS; i++) {
		struct sdnotify_worker *w = &n->w[i];
		if (!w->pid || now - w->seen <= limit)
			continue;
		if (!w->silent)
			log_err("worker %d (pid %d) has not reported for %.1f s (its loop is stuck or "
				"stopped): no more watchdog pings to systemd while it is silent",
				i + 1, (int)w->pid, now - w->seen);
		w->silent = true;
		ok = false;
	}
	if (ok)
		sd_notify(0, "WATCHDOG=1");
}

void sdnotify_init(struct sdnotify *n, struct ev_loop *loop, const struct kyu_config *cfg)
{
	const char *sock = getenv("NOTIFY_SOCKET");
	uint64_t us = 0;

	memset(n, 0, sizeof(*n));
	n->loop = loop;
	n->workers = cfg->workers;
	sdnotify_configure(n, cfg);
	n->notify = sock && *sock;
	n->status_at = -1e9;
	ev_init(&n->status_w, on_status);
	n->status_w.data = n;
	ev_init(&n->ping_w, on_ping);
	n->ping_w.data = n;
	ev_init(&n->kill_w, on_kill);
	n->kill_w.data = n;
	/* When reports and this timer are pending in the same loop
	 * iteration, the reports are read first. */
	ev_set_priority(&n->kill_w, EV_MINPRI);
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
	ev_timer_stop(n->loop, &n->kill_w);
	ev_timer_stop(n->loop, &n->status_w);
}

int64_t sdnotify_report_us(const struct sdnotify *n)
{
	/* Four reports per silence the supervisor tolerates (and per ping
	 * interval's worth of staleness): a late timer or two under load
	 * still leaves the worker counted as alive. */
	double every = kill_after(n) / 4;

	if (n->watchdog_us && (double)n->watchdog_us / 4e6 < every)
		every = (double)n->watchdog_us / 4e6;
	return (int64_t)(every * 1e6);
}

char **sdnotify_worker_env(void)
{
	static const char *const drop[] = { "NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=" };
	size_t k = 0, count = 0;
	char **env;

	while (environ[count])
		count++;
	env = xcalloc(count + 1, sizeof(*env));
	for (size_t i = 0; i < count; i++) {
		bool keep = true;
		for (size_t d = 0; d < sizeof(drop) / sizeof(drop[0]); d++)
			keep &= strncmp(environ[i], drop[d], strlen(drop[d])) != 0;
		if (keep)
			env[k++] = environ[i];
	}
	return env;
}

void sdnotify_spawned(struct sdnotify *n, int i, pid_t pid)
{
	if (i < 0 || i >= SDNOTIFY_MAX_WORKERS)
		return;
	/* It has a whole staleness limit to report for the first time. */
	n->w[i] = (struct sdnotify_worker){ .pid = pid, .seen = mono_now() };
	send_status(n);
}

void sdnotify_exited(struct sdnotify *n, int i)
{
	if (i < 0 || i >= SDNOTIFY_MAX_WORKERS)
		return;
	n->w[i] = (struct sdnotify_worker){ 0 };
	fold_db(n);
	send_status(n);
}

void sdnotify_report(struct sdnotify *n, int i, int64_t value)
{
	struct sdnotify_worker *w;

	if (i < 0 || i >= SDNOTIFY_MAX_WORKERS || !n->w[i].pid)
		return;
	w = &n->w[i];
	w->seen = mono_now();
	w->reported = true;
	w->overdue = false;
	if (w->silent)
		log_notice("worker %d (pid %d) reports again: watchdog pings resume", i + 1, (int)w->pid);
	w->silent = false;
	proto_state_unpack(value, &w->st);
	fold_db(n);
	try_ready(n);
	send_status(n);
	if (!ev_is_active(&n->kill_w))
		check_kill(n);
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

void sdnotify_configure(struct sdnotify *n, const struct kyu_config *cfg)
{
	n->kill_after = cfg->lease - cfg->fence_margin - config_heartbeat(cfg);
}

void sdnotify_reloaded(struct sdnotify *n, const struct kyu_config *cfg)
{
	n->workers = cfg->workers;
	sdnotify_configure(n, cfg);
	check_kill(n);
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
