/*
 * kyu_notify: a MariaDB user-defined function that sends kyu's wake-up
 * datagram, so that a trigger on kyu_jobs can tell kyud at once that a job
 * became due.
 *
 *   kyu_notify(queue)                        -> 1 sent, 0 not sent,
 *   kyu_notify(queue, 'host:port')              -1 target not allowed
 *   kyu_notify(queue, 'host:port', stamp)    -> also 1 when coalesced
 *
 * The datagram is "kyu:" followed by the queue name, which must be what
 * kyud's wake_parse accepts: at most 256 bytes of valid UTF-8 with no
 * control character; NULL or empty means "any queue", and the single byte
 * 0x18 is the cancel hint (src/common/wake.h). Anything else is refused:
 * nothing is sent and the call returns 0. The target is a numeric address,
 * "a.b.c.d:port" or "[v6addr]:port"; without one it is 127.0.0.1:7711,
 * kyud's default listen address.
 *
 * A wake-up is only a hint (kyud also polls), so this function never waits
 * and never raises an error for a failed send: a trigger that calls it must
 * not make an INSERT fail or stall because kyud is down, the network is
 * unreachable, the socket buffer is full or memory is short. Only a call
 * that can never work (wrong argument count, a target that is not an
 * address) is an error, reported by kyu_notify_init; sql/notify.sql checks
 * its target that way before it creates the triggers.
 *
 * It runs inside mariadbd, on any connection thread at once, and in a
 * trigger the server calls init and deinit for every row, not once per
 * statement. So the per-row path does no DNS, and the sockets are shared by
 * the whole server process (see notify_target.c) rather than opened and
 * closed per call: socket() plus close() measured about 8% of the server's
 * CPU time for a single-row INSERT with the trigger.
 *
 * Who may be sent to. Any account that may call the function (every
 * account, once it is created) chooses the target and the queue, so the
 * function must not be a way to reach what the account could not: a
 * datagram goes only to kyud's default address (127.0.0.1:7711 or
 * [::1]:7711) or to a target listed in the file kyu_notify.allow beside
 * kyu_notify.so in the server's plugin directory, one "a.b.c.d:port" or
 * "[v6]:port" a line ('#' starts a comment): the listen or advertise
 * addresses of the other daemons, loopback ones included (a second daemon
 * on 127.0.0.1:7712 must be listed too; any loopback port could be a
 * syslog or another service that trusts local datagrams). Whoever may
 * write the plugin directory already decides what code mariadbd runs, so
 * the list is theirs; a table (kyu_daemons, which kyu's own account
 * writes) could not be, and a UDF cannot easily query one. The file is read
 * again when it changes (looked at once a second at most). Another target
 * gets nothing, and the call returns -1.
 *
 * Coalescing and rate: two levels.
 * - Per statement: with a third argument, a stamp that names the statement
 *   (sql/notify.sql passes CONNECTION_ID() and NOW(6)), a call whose target
 *   and queue were already sent to under the same stamp, less than
 *   KYU_NOTIFY_STAMP_NS ago, sends nothing: an INSERT of 1,000 rows into
 *   one queue wakes each daemon once. Remembered per server thread (one
 *   statement runs on one thread), KYU_NOTIFY_SENT_MAX pairs per stamp.
 * - Per server process (struct shared): a (target, payload) pair sends at
 *   most one datagram per KYU_NOTIFY_WINDOW_NS. A call inside the window
 *   sends nothing at once but leaves the pair pending, and a sender thread
 *   sends it once the window has passed: the datagram that covers a call is
 *   always sent after the call, never only before it (a wake-up sent before
 *   the row existed may have been claimed before it, too). So a flood of
 *   calls naming one queue costs 100 datagrams a second, and a real wake-up
 *   behind it still arrives, at most a window late.
 *   Pairs are remembered in a table of KYU_NOTIFY_SLOTS slots, by a hash
 *   seeded at load (an account cannot aim names at a given slot). Datagrams
 *   that name a queue also take a token of a process-wide bucket
 *   (KYU_NOTIFY_RATE a second), which bounds a flood of distinct names.
 *   When a queue's wake-up cannot be sent as it is (no token, or its slot
 *   taken over by another pair while pending) it becomes an "any queue"
 *   wake-up of its target, which wakes that queue too. Those, and the
 *   cancel hints, are budgeted per allowed target (one of each per window),
 *   not from the bucket: a flood of made-up names, which spends the bucket,
 *   cannot starve a real queue's wake-up or a cancel. At most
 *   KYU_NOTIFY_RATE + 200 per allowed target datagrams a second leave the
 *   server process.
 *
 * Install: see sql/notify.sql.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The UDF types (UDF_INIT, UDF_ARGS, Item_result) are in mariadb_com.h,
 * which mysql.h includes along with the my_bool it needs. */
#include <mysql.h>

#include "notify_target.h"

#define KYU_EXPORT __attribute__((visibility("default")))

#define KYU_NOTIFY_PREFIX "kyu:"
#define KYU_NOTIFY_PREFIX_LEN (sizeof(KYU_NOTIFY_PREFIX) - 1)
#define KYU_NOTIFY_QUEUE_MAX 256 /* 64 utf8mb4 characters; wake.h's WAKE_QUEUE_MAX */
#define KYU_NOTIFY_CANCEL '\x18' /* wake.h's WAKE_CANCEL */

#define KYU_NOTIFY_SENT_MAX 256
#define KYU_NOTIFY_STAMP_MAX 64
#define KYU_NOTIFY_STAMP_NS 500000000LL

#define KYU_NOTIFY_WINDOW_NS 10000000LL /* one datagram per pair per 10 ms */
#define KYU_NOTIFY_SLOTS 1024
#define KYU_NOTIFY_RATE 2000 /* queue datagrams a second, and the bucket's size */
#define KYU_NOTIFY_ALLOW_NAME "kyu_notify.allow"
#define KYU_NOTIFY_ALLOW_MAX 256 /* entries; the rest of a longer file is ignored */
/* The two default targets come first in the target table. */
#define KYU_NOTIFY_DEFAULTS 2
#define KYU_NOTIFY_TARGETS (KYU_NOTIFY_DEFAULTS + KYU_NOTIFY_ALLOW_MAX)
/* Datagrams the sender thread sends per round, between looks at the table. */
#define KYU_NOTIFY_ROUND 64

/* The server hands init a message buffer of MYSQL_ERRMSG_SIZE bytes. */
#define KYU_NOTIFY_MSG_MAX MYSQL_ERRMSG_SIZE

/* What a call asks for. */
enum kind { KIND_QUEUE, KIND_ANY, KIND_CANCEL };

struct kyu_notify_state {
	/* The target when it is known for the whole statement: the default,
	 * or a constant second argument (the trigger's case). tidx: its index
	 * in the target table, -1 when it is not allowed. */
	bool fixed;
	struct kyu_target target;
	int tidx;
	/* A target that varies per row is parsed again only when its text
	 * changes. last_ok < 0: nothing cached yet. */
	int last_ok;
	size_t last_len;
	char last[KYU_NOTIFY_TARGET_MAX];
	int last_tidx;
};

/* What this server thread sent under its current stamp: a 64-bit key of
 * each (target, payload) pair (two pairs of one statement that collide,
 * odds about n^2 / 2^65, cost one datagram) and when. */
struct kyu_sent {
	char stamp[KYU_NOTIFY_STAMP_MAX];
	size_t stamp_len;
	int n;
	struct {
		uint64_t key;
		long long at_ns;
	} e[KYU_NOTIFY_SENT_MAX];
};

static __thread struct kyu_sent thread_sent;

KYU_EXPORT my_bool kyu_notify_init(UDF_INIT *initid, UDF_ARGS *args, char *message);
KYU_EXPORT long long kyu_notify(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error);
KYU_EXPORT void kyu_notify_deinit(UDF_INIT *initid);

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* Whether the n bytes are well-formed UTF-8 (no overlong form, surrogate
 * or code point past U+10FFFF) without a control character: the queue
 * names kyud's wake_parse accepts. */
static bool queue_name_ok(const unsigned char *s, size_t n)
{
	size_t i = 0;

	while (i < n) {
		unsigned char c = s[i];
		uint32_t cp;
		size_t len;

		if (c < 0x80) {
			if (c < 0x20 || c == 0x7f)
				return false;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			len = 2;
			cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			len = 3;
			cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += len;
	}
	return true;
}

/* An allowed target, and the budget of the wake-ups that are not taken
 * from the bucket: "any queue" and the cancel hint, one of each per window
 * (last_ns: sent then; pending: asked for since). */
struct target_state {
	struct kyu_target t;
	long long last_ns[2];
	bool pending[2];
};

/* A (target, payload) pair lately sent: key 0 is a free slot. */
struct slot {
	uint64_t key;
	long long last_ns;
	bool pending;
	int tidx;
	size_t len;
	char payload[KYU_NOTIFY_PREFIX_LEN + KYU_NOTIFY_QUEUE_MAX];
};

/* The process-wide state, under one lock, held for a hash lookup and a few
 * comparisons per call (never across a send or a file read, except the
 * allow file's stat() once a second). */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wakeup = PTHREAD_COND_INITIALIZER;
static struct {
	bool ready; /* the defaults, the seed */
	uint64_t seed;
	/* The allow file. */
	bool have_path;
	char path[4096];
	long long checked_ns; /* when the file was last looked at */
	struct stat seen;     /* as it was then (st_ino 0: absent) */
	int ntargets;         /* KYU_NOTIFY_DEFAULTS + the file's entries */
	struct target_state targets[KYU_NOTIFY_TARGETS];
	struct slot slots[KYU_NOTIFY_SLOTS];
	/* The bucket: tokens as of refilled_ns. */
	double tokens;
	long long refilled_ns;
	/* The sender thread, started when something first waits for it. */
	bool sender_started, sender_failed, stopping;
	bool any_pending;
	pthread_t sender;
} g;

/* The lock held. */
static void state_ready(void)
{
	if (g.ready)
		return;
	g.ready = true;
	notify_default_targets(&g.targets[0].t, &g.targets[1].t);
	g.ntargets = KYU_NOTIFY_DEFAULTS;
	if (getrandom(&g.seed, sizeof(g.seed), GRND_NONBLOCK) != (ssize_t)sizeof(g.seed))
		g.seed = (uint64_t)now_ns() ^ (uint64_t)(uintptr_t)&g;
	g.seed = fnv1a(0xcbf29ce484222325ULL, &g.seed, sizeof(g.seed));
	g.tokens = KYU_NOTIFY_RATE;
	g.refilled_ns = now_ns();
}

/* Reads the allow file again into g (the lock held). The entries' indexes
 * change: pairs remembered for them are forgotten (a pending one is lost;
 * the daemon's poll finds its job). */
static void allow_load(void)
{
	char line[KYU_NOTIFY_TARGET_MAX + 64];
	FILE *f = fopen(g.path, "re");

	g.ntargets = KYU_NOTIFY_DEFAULTS;
	for (size_t i = 0; i < KYU_NOTIFY_SLOTS; i++)
		if (g.slots[i].tidx >= KYU_NOTIFY_DEFAULTS)
			memset(&g.slots[i], 0, sizeof(g.slots[i]));
	if (!f)
		return;
	while (g.ntargets < KYU_NOTIFY_TARGETS && fgets(line, sizeof(line), f)) {
		struct target_state *ts = &g.targets[g.ntargets];
		char *p = line, *end;
		line[strcspn(line, "#\r\n")] = '\0';
		while (*p == ' ' || *p == '\t')
			p++;
		end = p + strlen(p);
		while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		/* A bad line allows nothing; the others still count. */
		if (end <= p)
			continue;
		memset(ts, 0, sizeof(*ts));
		if (notify_parse_target(p, (size_t)(end - p), &ts->t) == 0)
			g.ntargets++;
	}
	fclose(f);
}

/* The lock held: the list as the file is now, looked at once a second. */
static void allow_refresh(void)
{
	long long now = now_ns();
	struct stat st;

	if (!g.have_path) {
		Dl_info info;
		const char *slash;
		g.have_path = true;
		g.path[0] = '\0';
		if (dladdr((void *)&allow_refresh, &info) && info.dli_fname &&
		    (slash = strrchr(info.dli_fname, '/')) &&
		    (size_t)(slash - info.dli_fname) + sizeof("/" KYU_NOTIFY_ALLOW_NAME) <=
			    sizeof(g.path))
			snprintf(g.path, sizeof(g.path), "%.*s/%s", (int)(slash - info.dli_fname),
				 info.dli_fname, KYU_NOTIFY_ALLOW_NAME);
		g.checked_ns = now - 2000000000LL;
	}
	if (!g.path[0] || now - g.checked_ns < 1000000000LL)
		return;
	g.checked_ns = now;
	if (stat(g.path, &st) < 0)
		memset(&st, 0, sizeof(st));
	if (st.st_ino == g.seen.st_ino && st.st_dev == g.seen.st_dev &&
	    st.st_size == g.seen.st_size && st.st_mtim.tv_sec == g.seen.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == g.seen.st_mtim.tv_nsec)
		return;
	g.seen = st;
	allow_load();
}

/* The target's index in the table, or -1 when it is not allowed. */
static int target_index(const struct kyu_target *t)
{
	int idx = -1;

	pthread_mutex_lock(&lock);
	state_ready();
	allow_refresh();
	for (int i = 0; i < g.ntargets && idx < 0; i++)
		if (notify_same_target(&g.targets[i].t, t))
			idx = i;
	pthread_mutex_unlock(&lock);
	return idx;
}

/* What the sender thread sends in one round, copied out of g so that the
 * lock is not held across sendto(). */
struct outgoing {
	struct kyu_target t;
	size_t len;
	char payload[KYU_NOTIFY_PREFIX_LEN + KYU_NOTIFY_QUEUE_MAX];
};

/* The lock held: a token from the bucket, or false. */
static bool take_token(long long now)
{
	if (now > g.refilled_ns) {
		g.tokens += (double)(now - g.refilled_ns) * KYU_NOTIFY_RATE / 1e9;
		if (g.tokens > KYU_NOTIFY_RATE)
			g.tokens = KYU_NOTIFY_RATE;
		g.refilled_ns = now;
	}
	if (g.tokens < 1.0)
		return false;
	g.tokens -= 1.0;
	return true;
}

/* The lock held: ask for target tidx's "any queue" (which 0) or cancel
 * (1) wake-up. Returns true when it may be sent now (and counts it as
 * sent), false when it is left pending for the sender thread. */
static bool target_wake(int tidx, int which, long long now)
{
	struct target_state *ts = &g.targets[tidx];

	if (now - ts->last_ns[which] >= KYU_NOTIFY_WINDOW_NS && !ts->pending[which]) {
		ts->last_ns[which] = now;
		return true;
	}
	ts->pending[which] = true;
	g.any_pending = true;
	return false;
}

static void *sender_main(void *arg);

/* The lock held: makes sure the sender thread runs and will look. False if
 * it cannot be started: what is pending is then not sent (the poll). */
static bool sender_kick(void)
{
	if (!g.sender_started && !g.sender_failed) {
		sigset_t all, old;
		/* The thread takes no signal of the server's. */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&g.sender, NULL, sender_main, NULL) == 0)
			g.sender_started = true;
		else
			g.sender_failed = true;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (g.sender_started)
		pthread_cond_signal(&wakeup);
	return g.sender_started;
}

/* The lock held: one round of the sender: what is pending and out of its
 * window goes into out (at most max); *next_ns: when to look again. */
static int sender_collect(struct outgoing *out, int max, long long now, long long *next_ns)
{
	int n = 0;
	bool left = false;

	*next_ns = now + KYU_NOTIFY_WINDOW_NS;
	for (size_t i = 0; i < KYU_NOTIFY_SLOTS; i++) {
		struct slot *s = &g.slots[i];
		if (!s->pending)
			continue;
		if (now - s->last_ns < KYU_NOTIFY_WINDOW_NS || n == max) {
			left = true;
			continue;
		}
		s->pending = false;
		if (!take_token(now)) {
			/* No token: the target's "any queue" wake-up stands in. */
			g.targets[s->tidx].pending[0] = true;
			continue;
		}
		s->last_ns = now;
		out[n].t = g.targets[s->tidx].t;
		out[n].len = s->len;
		memcpy(out[n].payload, s->payload, s->len);
		n++;
	}
	for (int i = 0; i < g.ntargets; i++) {
		struct target_state *ts = &g.targets[i];
		for (int which = 0; which < 2; which++) {
			if (!ts->pending[which])
				continue;
			if (now - ts->last_ns[which] < KYU_NOTIFY_WINDOW_NS || n == max) {
				left = true;
				continue;
			}
			ts->pending[which] = false;
			ts->last_ns[which] = now;
			out[n].t = ts->t;
			memcpy(out[n].payload, KYU_NOTIFY_PREFIX, KYU_NOTIFY_PREFIX_LEN);
			out[n].len = KYU_NOTIFY_PREFIX_LEN;
			if (which == 1)
				out[n].payload[out[n].len++] = KYU_NOTIFY_CANCEL;
			n++;
		}
	}
	g.any_pending = left;
	return n;
}

static void *sender_main(void *arg)
{
	static struct outgoing out[KYU_NOTIFY_ROUND];

	(void)arg;
	pthread_mutex_lock(&lock);
	while (!g.stopping) {
		long long now = now_ns(), next;
		int n;

		if (!g.any_pending) {
			pthread_cond_wait(&wakeup, &lock);
			continue;
		}
		n = sender_collect(out, KYU_NOTIFY_ROUND, now, &next);
		pthread_mutex_unlock(&lock);
		for (int i = 0; i < n; i++)
			notify_send(&out[i].t, out[i].payload, out[i].len);
		pthread_mutex_lock(&lock);
		if (g.any_pending && !g.stopping && n < KYU_NOTIFY_ROUND) {
			/* Sleep out the rest of the window (CLOCK_REALTIME: the
			 * condition's clock; a step only shortens or lengthens
			 * one wait). */
			struct timespec ts;
			long long wait = next - now_ns();
			if (wait > 0) {
				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += wait % 1000000000LL;
				ts.tv_sec += wait / 1000000000LL + ts.tv_nsec / 1000000000L;
				ts.tv_nsec %= 1000000000L;
				pthread_cond_timedwait(&wakeup, &lock, &ts);
			}
		}
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

__attribute__((destructor)) static void kyu_notify_unload(void)
{
	bool join;

	pthread_mutex_lock(&lock);
	g.stopping = true;
	join = g.sender_started;
	pthread_cond_signal(&wakeup);
	pthread_mutex_unlock(&lock);
	/* The server unloads the library only when no call runs; the thread
	 * must be gone before its code is. */
	if (join)
		pthread_join(g.sender, NULL);
	notify_sockets_close();
}

/* Decides, under the lock, what this call does. Returns 1 with *send_now
 * true when the caller is to send payload to *to now (*len cut to the
 * prefix when the target's "any queue" wake-up stands in for it), or with
 * *send_now false when a datagram that covers it follows (the sender
 * thread's); 0 when nothing can be done (the thread cannot run); -1 when
 * the target is no longer allowed. */
static int decide(int tidx, enum kind kind, const char *payload, size_t *len, bool *send_now,
		  struct kyu_target *to)
{
	long long now = now_ns();
	int ret = 1;

	*send_now = false;
	pthread_mutex_lock(&lock);
	state_ready();
	if (tidx < 0 || tidx >= g.ntargets) {
		ret = -1;
		goto out;
	}
	*to = g.targets[tidx].t;
	if (kind != KIND_QUEUE) {
		*send_now = target_wake(tidx, kind == KIND_CANCEL, now);
	} else {
		uint64_t key = fnv1a(g.seed, &tidx, sizeof(tidx));
		struct slot *s;

		key = fnv1a(key, payload, *len) | 1; /* never 0, the free slot */
		s = &g.slots[key % KYU_NOTIFY_SLOTS];
		if (s->key == key && now - s->last_ns < KYU_NOTIFY_WINDOW_NS) {
			/* Sent lately: once more after the window. */
			s->pending = true;
			g.any_pending = true;
		} else {
			if (s->key != key && s->pending) {
				/* Another pair's wake-up is still due: its
				 * target's "any queue" one stands in. */
				g.targets[s->tidx].pending[0] = true;
				g.any_pending = true;
			}
			s->key = key;
			s->tidx = tidx;
			s->len = *len;
			memcpy(s->payload, payload, *len);
			s->pending = false;
			if (take_token(now)) {
				s->last_ns = now;
				*send_now = true;
			} else {
				/* The bucket is spent (by whoever): the target's
				 * "any queue" wake-up covers this queue. */
				s->key = 0;
				*send_now = target_wake(tidx, 0, now);
				*len = KYU_NOTIFY_PREFIX_LEN;
			}
		}
	}
	if (g.any_pending && !sender_kick() && !*send_now)
		ret = 0;
out:
	pthread_mutex_unlock(&lock);
	return ret;
}

/* The target's table index for this row (-1: not allowed), or -2 when
 * there is no usable target. */
static int row_target(struct kyu_notify_state *st, UDF_ARGS *args)
{
	const char *text;
	size_t len;
	struct kyu_target t;

	if (st->fixed)
		return st->tidx;
	text = args->args[1];
	len = args->lengths[1];
	/* A NULL target means the default, like leaving it out. */
	if (!text)
		return 0;
	if (st->last_ok < 0 || len != st->last_len || memcmp(text, st->last, len) != 0) {
		if (len >= sizeof(st->last)) {
			st->last_ok = -1;
			return -2;
		}
		memcpy(st->last, text, len);
		st->last_len = len;
		st->last_ok = notify_parse_target(text, len, &t) == 0;
		if (st->last_ok)
			st->last_tidx = target_index(&t);
	}
	return st->last_ok > 0 ? st->last_tidx : -2;
}

my_bool kyu_notify_init(UDF_INIT *initid, UDF_ARGS *args, char *message)
{
	struct kyu_notify_state *st;

	if (args->arg_count < 1 || args->arg_count > 3) {
		snprintf(message, KYU_NOTIFY_MSG_MAX,
			 "kyu_notify(queue [, 'host:port' [, stamp]]) takes 1 to 3 arguments");
		return 1;
	}
	/* The queue may be any type (the server converts it); the target
	 * must be text, so that a port number alone is caught here. */
	args->arg_type[0] = STRING_RESULT;
	if (args->arg_count == 3)
		args->arg_type[2] = STRING_RESULT;
	if (args->arg_count >= 2 && args->arg_type[1] != STRING_RESULT) {
		snprintf(message, KYU_NOTIFY_MSG_MAX,
			 "kyu_notify: target must be a string 'host:port'");
		return 1;
	}

	initid->maybe_null = 0;
	initid->const_item = 0;
	initid->ptr = NULL;
	/* Out of memory: not worth failing the INSERT over; the calls
	 * return 0. */
	st = calloc(1, sizeof(*st));
	if (!st)
		return 0;
	st->last_ok = -1;
	st->fixed = true;
	{
		struct kyu_target v6;
		notify_default_targets(&st->target, &v6);
	}

	/* At init time, args->args[i] is set only for constant arguments:
	 * a literal target is checked (and parsed) once, here. */
	if (args->arg_count >= 2) {
		if (args->args[1]) {
			if (notify_parse_target(args->args[1], args->lengths[1], &st->target) < 0) {
				snprintf(
					message, KYU_NOTIFY_MSG_MAX,
					"kyu_notify: bad target '%.*s': want a.b.c.d:port or [v6]:port",
					(int)(args->lengths[1] > 64 ? 64 : args->lengths[1]),
					args->args[1]);
				free(st);
				return 1;
			}
		} else {
			st->fixed = false;
		}
	}
	/* A target that is not allowed is not an error either: a trigger
	 * must not fail the INSERT when the list changes; the calls return
	 * -1, which sql/notify.sql checks when it installs. Failure to get
	 * a socket: the calls return 0. */
	if (st->fixed) {
		st->tidx = target_index(&st->target);
		notify_socket(st->target.addr.ss_family);
	}

	initid->ptr = (char *)st;
	return 0;
}

/* Whether this row's (target, payload) was sent under its stamp lately;
 * if not, it is recorded as sent now (the caller sends). Without a usable
 * stamp, nothing is coalesced. */
static bool already_sent(UDF_ARGS *args, int tidx, const char *payload, size_t len)
{
	struct kyu_sent *s = &thread_sent;
	const char *stamp;
	size_t slen;
	uint64_t key;
	long long now;

	if (args->arg_count < 3 || !(stamp = args->args[2]))
		return false;
	slen = args->lengths[2];
	if (slen == 0 || slen > sizeof(s->stamp))
		return false;
	if (slen != s->stamp_len || memcmp(stamp, s->stamp, slen) != 0) {
		memcpy(s->stamp, stamp, slen);
		s->stamp_len = slen;
		s->n = 0;
	}
	/* The length keeps ("ab", "c") and ("a", "bc") apart. */
	key = fnv1a(0xcbf29ce484222325ULL, &len, sizeof(len));
	key = fnv1a(key, payload, len);
	key = fnv1a(key, &tidx, sizeof(tidx));
	if (args->args[1])
		key = fnv1a(key, args->args[1], args->lengths[1]);
	now = now_ns();
	for (int i = 0; i < s->n; i++) {
		if (s->e[i].key != key)
			continue;
		if (now - s->e[i].at_ns < KYU_NOTIFY_STAMP_NS)
			return true;
		s->e[i].at_ns = now;
		return false;
	}
	if (s->n < KYU_NOTIFY_SENT_MAX) {
		s->e[s->n].key = key;
		s->e[s->n].at_ns = now;
		s->n++;
	}
	return false;
}

/* Sends this row's datagram, or leaves it to the sender thread; returns 1
 * if it was sent (or will be, or was for this statement already), 0 if
 * not (refused payload, failed send), -1 if the target is not allowed. */
static long long notify_row(struct kyu_notify_state *st, UDF_ARGS *args)
{
	char payload[KYU_NOTIFY_PREFIX_LEN + KYU_NOTIFY_QUEUE_MAX];
	const char *queue = args->args[0];
	size_t qlen = queue ? args->lengths[0] : 0, n;
	struct kyu_target to;
	enum kind kind;
	bool send_now;
	int tidx, r;

	/* Only what kyud takes for a wake-up leaves the server: the datagram
	 * is never the caller's bytes to any use. */
	if (qlen == 0)
		kind = KIND_ANY;
	else if (qlen == 1 && queue[0] == KYU_NOTIFY_CANCEL)
		kind = KIND_CANCEL;
	else if (qlen <= KYU_NOTIFY_QUEUE_MAX && queue_name_ok((const unsigned char *)queue, qlen))
		kind = KIND_QUEUE;
	else
		return 0;
	tidx = row_target(st, args);
	if (tidx < 0)
		return tidx == -1 ? -1 : 0;
	memcpy(payload, KYU_NOTIFY_PREFIX, KYU_NOTIFY_PREFIX_LEN);
	if (qlen)
		memcpy(payload + KYU_NOTIFY_PREFIX_LEN, queue, qlen);
	n = KYU_NOTIFY_PREFIX_LEN + qlen;
	if (already_sent(args, tidx, payload, n))
		return 1;
	r = decide(tidx, kind, payload, &n, &send_now, &to);
	if (r < 0 || !send_now)
		return r;
	return notify_send(&to, payload, n);
}

long long kyu_notify(UDF_INIT *initid, UDF_ARGS *args, char *is_null, char *error)
{
	struct kyu_notify_state *st = (struct kyu_notify_state *)initid->ptr;
	int saved_errno = errno;
	long long ret;

	(void)error;
	*is_null = 0;
	if (!st)
		return 0;
	ret = notify_row(st, args);
	/* The server's thread should not see our failures in errno. */
	errno = saved_errno;
	return ret;
}

void kyu_notify_deinit(UDF_INIT *initid)
{
	struct kyu_notify_state *st = (struct kyu_notify_state *)initid->ptr;

	free(st);
	initid->ptr = NULL;
}
