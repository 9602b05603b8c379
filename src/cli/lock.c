/* kyu lock: hold a row of kyu_locks while a command runs (lock.h). */
#include "lock.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lock_guardian.h"

/* ---- arguments ------------------------------------------------------------ */

const char *lock_name_problem(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;
	size_t chars = 0;

	if (!*p)
		return "the lock name must not be empty";
	/* utf8mb4: the shortest form of a code point up to U+10FFFF, no
	 * surrogates; the server would refuse anything else. */
	while (*p) {
		unsigned c = *p, n, cp;
		if (c < 0x80) {
			n = 0, cp = c;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1, cp = c & 0x1f;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2, cp = c & 0x0f;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3, cp = c & 0x07;
		} else {
			return "the lock name is not valid UTF-8";
		}
		for (unsigned i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return "the lock name is not valid UTF-8";
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if ((n == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
		    (n == 3 && (cp < 0x10000 || cp > 0x10ffff)))
			return "the lock name is not valid UTF-8";
		p += n + 1;
		if (++chars > LOCK_NAME_MAX)
			return "the lock name is longer than 191 characters";
	}
	return NULL;
}

int lock_parse_args(int argc, char **argv, struct lock_opts *ret, char *err, size_t errlen)
{
	static const struct {
		const char *name;
		int64_t min, max;
		size_t off;
	} opts[] = {
		{ "--ttl", 1, LOCK_TTL_MAX, offsetof(struct lock_opts, ttl) },
		{ "--wait", 0, LOCK_WAIT_MAX, offsetof(struct lock_opts, wait) },
		{ "--slots", 1, LOCK_SLOTS_MAX, offsetof(struct lock_opts, slots) },
	};
	struct lock_opts o = { .ttl = 30, .wait = 0, .slots = 1 };
	const char *problem;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *eq, *val;
		size_t k, klen;

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			/* The first word is the name; the next starts the command. */
			if (o.name)
				break;
			o.name = a;
			continue;
		}
		eq = strchr(a, '=');
		klen = eq ? (size_t)(eq - a) : strlen(a);
		for (k = 0; k < sizeof(opts) / sizeof(opts[0]); k++)
			if (strlen(opts[k].name) == klen && strncmp(a, opts[k].name, klen) == 0)
				break;
		if (k == sizeof(opts) / sizeof(opts[0])) {
			snprintf(err, errlen, "unknown option '%s'", a);
			return -1;
		}
		if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			snprintf(err, errlen, "%s needs a value", opts[k].name);
			return -1;
		}
		if (parse_i64(val, opts[k].min, opts[k].max,
			      (int64_t *)(void *)((char *)&o + opts[k].off)) < 0) {
			snprintf(err, errlen,
				 "%s: '%s' is not a whole number from %" PRId64 " to %" PRId64,
				 opts[k].name, val, opts[k].min, opts[k].max);
			return -1;
		}
	}
	if (!o.name) {
		snprintf(err, errlen, "no lock name given");
		return -1;
	}
	if ((problem = lock_name_problem(o.name))) {
		snprintf(err, errlen, "%s", problem);
		return -1;
	}
	if (i >= argc) {
		snprintf(err, errlen,
			 "no command given (kyu lock NAME [OPTIONS] -- COMMAND [ARG...])");
		return -1;
	}
	o.argv = argv + i;
	o.argc = argc - i;
	*ret = o;
	return 0;
}

/* ---- the acquisition's reply ---------------------------------------------- */

int lock_read_acquired(const struct db_reply *reply, unsigned *ret_slot)
{
	const struct db_result *r;
	int64_t v, low = -1;

	if (reply->fail != DB_OK || reply->n != 3)
		return -1;
	r = &reply->r[2];
	if (r->n_cols != 1)
		return -1;
	for (size_t i = 0; i < r->n_rows; i++) {
		const char *c = db_cell(r, i, 0);
		if (!c || parse_i64(c, 0, UINT32_MAX, &v) < 0)
			return -1;
		if (low < 0 || v < low)
			low = v;
	}
	if (low >= 0)
		*ret_slot = (unsigned)low;
	return (int)r->n_rows;
}

/* ---- the run loop --------------------------------------------------------- */

/* Signals kyu passes on to the command's process group. */
static const int fwd_sigs[] = { SIGTERM, SIGINT, SIGHUP };
#define N_FWD ((int)(sizeof(fwd_sigs) / sizeof(fwd_sigs[0])))
static volatile sig_atomic_t fwd_pending[N_FWD];

static void on_signal(int sig)
{
	for (int i = 0; i < N_FWD; i++)
		if (fwd_sigs[i] == sig)
			fwd_pending[i] = 1;
	/* SIGCHLD only ends the wait in ppoll. */
}

struct locker {
	const struct kyu_config *cfg;
	struct kyu_config lease_cfg; /* cfg with a connect timeout that fits the lease */
	struct lock_opts o;
	struct db *db;
	uint64_t token;
	char host[256];
	double deadline; /* seconds a statement may take */
	double grace;    /* between SIGTERM and SIGKILL when the lease is lost */
	unsigned slot;
	bool held;
	double lease_end; /* monotonic; no later than the row's expiry */
	sigset_t orig_mask, wait_mask;
	int handled[N_FWD]; /* the signals of fwd_sigs kyu handles, for the command to default */
	int n_handled;
};

/* Sleep until mono time `until` (or forever when until < 0), until a
 * signal arrives or until fd (when >= 0) is readable, whichever is first. */
static void pause_until_fd(const struct locker *l, double until, int fd)
{
	struct timespec ts, *tsp = NULL;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (until >= 0) {
		double left = until - mono_now();
		if (left <= 0)
			return;
		ts.tv_sec = (time_t)left;
		ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
		tsp = &ts;
	}
	(void)ppoll(&pfd, fd >= 0 ? 1 : 0, tsp, &l->wait_mask);
}

static void pause_until(const struct locker *l, double until)
{
	pause_until_fd(l, until, -1);
}

/* The first signal to pass on that arrived, cleared; 0 if none. */
static int take_signal(void)
{
	for (int i = 0; i < N_FWD; i++) {
		if (fwd_pending[i]) {
			fwd_pending[i] = 0;
			return fwd_sigs[i];
		}
	}
	return 0;
}

static void setup_signals(struct locker *l)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t ours;

	/* Ours are blocked except while kyu waits in ppoll (pause_until):
	 * no statement is interrupted, no signal is missed. */
	sigemptyset(&ours);
	sigaddset(&ours, SIGCHLD);
	for (int i = 0; i < N_FWD; i++)
		sigaddset(&ours, fwd_sigs[i]);
	sigprocmask(SIG_BLOCK, &ours, &l->orig_mask);
	l->wait_mask = l->orig_mask;
	sigdelset(&l->wait_mask, SIGCHLD);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	for (int i = 0; i < N_FWD; i++) {
		struct sigaction old;
		/* A signal ignored by whoever started kyu (nohup, a background
		 * job of a script) stays ignored, for the command too. */
		if (sigaction(fwd_sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(fwd_sigs[i], &sa, NULL);
		sigdelset(&l->wait_mask, fwd_sigs[i]);
		l->handled[l->n_handled++] = fwd_sigs[i];
	}
}

static bool connect_db(struct locker *l, const struct kyu_config *cfg)
{
	return db_connected(l->db) || db_connect(l->db, cfg) == 0;
}

static void release(struct locker *l, unsigned slot, bool quiet, bool *ret_lost)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	enum db_fail f;

	*ret_lost = false;
	lock_sql_release(&sb, l->o.name, slot, l->token);
	f = connect_db(l, &l->lease_cfg) ? db_query(l->db, sb.buf, sb.len, &reply) : DB_LOST;
	sb_free(&sb);
	if (f == DB_OK && reply->n == 1 && reply->r[0].affected == 1)
		return;
	if (f == DB_OK) {
		*ret_lost = true;
		if (!quiet)
			fprintf(stderr,
				"kyu: lock %s: slot %u was no longer ours at release (expired and taken over, "
				"or changed by someone else)\n",
				l->o.name, slot);
	} else if (!quiet) {
		fprintf(stderr,
			"kyu: lock %s: could not release slot %u (%s); it expires within %" PRId64
			" s\n",
			l->o.name, slot, db_error(l->db), l->o.ttl);
	}
}

/* Try to take a slot until --wait has passed. Returns 0 once held, else
 * the exit status. */
static int acquire(struct locker *l)
{
	const double end = mono_now() + (double)l->o.wait;
	double backoff = 0.05;
	/* When the first try went out whose outcome is unknown (its reply was
	 * lost): a slot it took expires from then, not from a later try. */
	double first_unknown = 0;
	const char *why = NULL;

	for (;;) {
		struct strbuf sb = { 0 };
		const struct db_reply *reply;
		enum db_fail f = DB_LOST;
		double sent = 0;
		unsigned slot = 0;
		int sig;

		if (connect_db(l, l->cfg)) {
			lock_sql_acquire(&sb, l->o.name, (unsigned)l->o.slots, l->token, l->host,
					 (long)getpid(), (unsigned)l->o.ttl);
			sent = mono_now();
			f = db_query(l->db, sb.buf, sb.len, &reply);
			sb_free(&sb);
		}
		why = f == DB_OK || f == DB_RETRY ? NULL : db_error(l->db);
		if (f == DB_LOST && sent > 0 && first_unknown == 0)
			first_unknown = sent;
		if (f == DB_OK && lock_read_acquired(reply, &slot) > 0) {
			const struct db_result *r = &reply->r[2];
			/* More than one: an earlier try took a slot but its reply was
			 * lost. Keep the lowest. Copy first: release reuses reply. */
			unsigned extra[8], n_extra = 0;
			for (size_t i = 0; i < r->n_rows && n_extra < 8; i++) {
				unsigned s = (unsigned)strtoul(db_cell(r, i, 0), NULL, 10);
				if (s != slot)
					extra[n_extra++] = s;
			}
			l->slot = slot;
			l->held = true;
			/* The row may hold an earlier try's expiry: count the
			 * lease from the earliest try that may have set it (the
			 * first renewal then comes early, at once if need be). */
			l->lease_end =
				(first_unknown > 0 ? first_unknown : sent) + (double)l->o.ttl;
			for (unsigned i = 0; i < n_extra; i++) {
				bool lost;
				release(l, extra[i], true, &lost);
			}
			return 0;
		}
		if (f == DB_ERROR) {
			/* The statement itself is refused (no table, no rights):
			 * trying again will not help. */
			fprintf(stderr, "kyu: lock %s: %s\n", l->o.name, why);
			return LOCK_EXIT_DB;
		}
		if ((sig = take_signal())) {
			fprintf(stderr, "kyu: lock %s: %s while waiting for the lock\n", l->o.name,
				strsignal(sig));
			return 128 + sig;
		}
		if (mono_now() >= end)
			break;
		/* Growing, jittered, never past the end of --wait. */
		{
			uint32_t j = 0;
			double until;
			/* A (void) cast does not silence _FORTIFY_SOURCE's
			 * warn_unused_result; without randomness the wait is
			 * simply not jittered. */
			if (getrandom(&j, sizeof(j), 0) != (ssize_t)sizeof(j))
				j = 0;
			until = mono_now() + backoff * (0.5 + (double)(j % 1000) / 1000.0);
			pause_until(l, until < end ? until : end);
			backoff = backoff * 2 < 1.0 ? backoff * 2 : 1.0;
		}
	}
	if (why) {
		fprintf(stderr, "kyu: lock %s: %s\n", l->o.name, why);
		return LOCK_EXIT_DB;
	}
	if (l->o.wait)
		fprintf(stderr, "kyu: lock %s: not obtained within %" PRId64 " s\n", l->o.name,
			l->o.wait);
	else
		fprintf(stderr, "kyu: lock %s: held by another (%s)\n", l->o.name,
			l->o.slots > 1 ? "every slot is taken" : "try --wait");
	return LOCK_EXIT_BUSY;
}

enum renew { RENEWED, RENEW_FAILED, RENEW_LOST };

/* Extend the lease if an answer can come before kill_at. */
static enum renew renew(struct locker *l, double kill_at, double *ret_sent)
{
	struct strbuf sb = { 0 };
	const struct db_reply *reply;
	enum db_fail f;
	double connect_limit = l->lease_cfg.db_connect_timeout + l->deadline;

	if (!db_connected(l->db)) {
		if (mono_now() + connect_limit > kill_at || !connect_db(l, &l->lease_cfg))
			return RENEW_FAILED;
	}
	if (mono_now() + l->deadline > kill_at)
		return RENEW_FAILED;
	lock_sql_extend(&sb, l->o.name, l->slot, l->token, (unsigned)l->o.ttl);
	*ret_sent = mono_now();
	f = db_query(l->db, sb.buf, sb.len, &reply);
	sb_free(&sb);
	if (f != DB_OK || reply->n != 1) {
		fprintf(stderr, "kyu: lock %s: cannot extend the lease: %s\n", l->o.name,
			db_error(l->db));
		return RENEW_FAILED;
	}
	return reply->r[0].affected == 1 ? RENEWED : RENEW_LOST;
}

/* Run the command while holding the lock; extend, pass signals on, and
 * stop the command when the lease cannot be kept. The lock is released
 * only once the guardian has ended, with every process of the command.
 * Returns the exit status. */
static int run_held(struct locker *l)
{
	const double ttl = (double)l->o.ttl;
	double kill_at = l->lease_end - l->grace, next_renew = l->lease_end - ttl + ttl / 3;
	double retry = ttl / 10 < 1 ? ttl / 10 : 1, sigkill_at = -1;
	bool lost = false, ended = false, guard_gone = false, release_lost;
	int status = 0, sig, life = -1, report = -1;
	pid_t guard, pid = 0;
	const struct lock_guardian_cmd cmd = {
		.name = l->o.name,
		.argv = l->o.argv,
		.mask = &l->orig_mask,
		.dfl_sigs = l->handled,
		.n_dfl_sigs = l->n_handled,
		.orphaned_status = LOCK_EXIT_LOST,
	};

	if ((sig = take_signal())) {
		release(l, l->slot, false, &release_lost);
		return 128 + sig;
	}
	guard = lock_guardian_start(&cmd, &pid, &life, &report);
	if (guard < 0) {
		fprintf(stderr, "kyu: lock %s: cannot start %s: %s\n", l->o.name, l->o.argv[0],
			strerror(errno));
		release(l, l->slot, false, &release_lost);
		return LOCK_EXIT_OSERR;
	}
	for (;;) {
		double now, wake;

		if (waitpid(guard, NULL, WNOHANG) == guard)
			guard_gone = true;
		while (report >= 0) {
			enum lock_guardian_news news = lock_guardian_read(report, &status);
			if (news == LOCK_GUARDIAN_NONE)
				break;
			if (news == LOCK_GUARDIAN_ENDED) {
				ended = true;
				continue;
			}
			close(report); /* the guardian is gone */
			report = -1;
		}
		/* The command's main process ended, or its lease is lost and
		 * the grace is over: the guardian ends the rest of it. From
		 * here on the group id is not ours to signal. */
		if (life >= 0 && (ended || (lost && mono_now() >= sigkill_at && sigkill_at >= 0))) {
			close(life);
			life = -1;
		}
		if (guard_gone)
			break;
		while ((sig = take_signal()))
			if (life >= 0)
				(void)kill(-pid, sig);
		now = mono_now();
		if (!lost && now >= kill_at) {
			fprintf(stderr,
				"kyu: lock %s: the lease could not be extended before it expires; "
				"stopping the command\n",
				l->o.name);
			lost = true;
		} else if (!lost && now >= next_renew) {
			double sent = now;
			switch (renew(l, kill_at, &sent)) {
			case RENEWED:
				l->lease_end = sent + ttl;
				kill_at = l->lease_end - l->grace;
				next_renew = sent + ttl / 3;
				break;
			case RENEW_FAILED:
				next_renew = mono_now() + retry;
				break;
			case RENEW_LOST:
				fprintf(stderr,
					"kyu: lock %s: the lease was lost (slot %u is no longer ours); "
					"stopping the command\n",
					l->o.name, l->slot);
				lost = true;
				break;
			}
			continue; /* the statement took time: look again */
		}
		if (lost && sigkill_at < 0) {
			if (life >= 0)
				(void)kill(-pid, SIGTERM);
			sigkill_at = mono_now() + l->grace;
			continue;
		}
		if (life < 0)
			wake = -1; /* until the guardian has ended */
		else if (lost)
			wake = sigkill_at;
		else
			wake = next_renew < kill_at ? next_renew : kill_at;
		/* Our signals are blocked outside ppoll: one that came since the
		 * checks above ends this wait at once. */
		pause_until_fd(l, wake, report);
	}
	if (life >= 0)
		close(life);
	if (report >= 0)
		close(report);
	if (lost)
		return LOCK_EXIT_LOST;
	if (!ended) {
		/* Killed from outside: the command died with it (its parent-death
		 * signal), but what it started may not have. */
		fprintf(stderr,
			"kyu: lock %s: the process watching over the command was killed; "
			"releasing the lock\n",
			l->o.name);
		release(l, l->slot, true, &release_lost);
		return LOCK_EXIT_OSERR;
	}
	release(l, l->slot, false, &release_lost);
	return release_lost ? LOCK_EXIT_LOST : status;
}

int lock_main(const struct kyu_config *cfg, int argc, char **argv)
{
	struct locker l = { .cfg = cfg };
	char err[512];
	double ttl;
	int rc;

	if (lock_parse_args(argc, argv, &l.o, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyu: lock: %s\n", err);
		fprintf(stderr,
			"usage: kyu lock NAME [--ttl S] [--wait S] [--slots N] -- COMMAND [ARG...]\n");
		return LOCK_EXIT_USAGE;
	}
	ttl = (double)l.o.ttl;
	/* A renewal is sent every ttl/3 and must be answered (or given up)
	 * well before the lease ends; the grace comes off the end, so that
	 * the command is dead before the row can be anyone else's. */
	l.deadline = ttl / 4 < 30 ? ttl / 4 : 30;
	l.grace = ttl / 6 < 5 ? ttl / 6 : 5;
	l.lease_cfg = *cfg;
	if (l.lease_cfg.db_connect_timeout > l.o.ttl / 4)
		l.lease_cfg.db_connect_timeout = l.o.ttl / 4 > 1 ? (int)(l.o.ttl / 4) : 1;
	l.token = random_token();
	if (gethostname(l.host, sizeof(l.host)) < 0)
		snprintf(l.host, sizeof(l.host), "unknown");
	l.host[sizeof(l.host) - 1] = '\0';
	setup_signals(&l);
	l.db = db_new(NULL, l.deadline);
	rc = acquire(&l);
	if (rc == 0)
		rc = run_held(&l);
	db_free(l.db);
	sigprocmask(SIG_SETMASK, &l.orig_mask, NULL);
	return rc;
}
