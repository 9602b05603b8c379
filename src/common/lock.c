/* kyu lock: hold a row of kyu_locks while a command runs (lock.h). */
#include "lock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
		if (parse_i64(val, opts[k].min, opts[k].max, (int64_t *)(void *)((char *)&o + opts[k].off)) < 0) {
			snprintf(err, errlen, "%s: '%s' is not a whole number from %" PRId64 " to %" PRId64,
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
		snprintf(err, errlen, "no command given (kyu lock NAME [OPTIONS] -- COMMAND [ARG...])");
		return -1;
	}
	o.argv = argv + i;
	o.argc = argc - i;
	*ret = o;
	return 0;
}

/* ---- statements ----------------------------------------------------------- */

/* The database's clock in UTC: NOW(6) would follow the session's time zone,
 * and a summer-time change would make every live lease look expired (or
 * keep dead ones for an hour). */
#define LOCK_NOW "UTC_TIMESTAMP(6)"

void lock_sql_acquire(struct strbuf *sb, const char *name, unsigned slots, uint64_t token,
		      const char *host, long pid, unsigned ttl)
{
	sb_adds(sb, "INSERT IGNORE INTO kyu_locks (name, slot) VALUES ");
	for (unsigned s = 0; s < slots; s++) {
		sb_adds(sb, s ? ", (" : "(");
		db_quotes(sb, name);
		sb_printf(sb, ", %u)", s);
	}
	sb_printf(sb, "; UPDATE kyu_locks SET holder = %" PRIu64 ", host = ", token);
	db_quotes(sb, host);
	sb_printf(sb, ", pid = %ld, acquired_at = " LOCK_NOW ", expires = " LOCK_NOW
		      " + INTERVAL %u SECOND WHERE name = ", pid, ttl);
	db_quotes(sb, name);
	sb_printf(sb, " AND slot < %u AND (holder IS NULL OR expires < " LOCK_NOW
		      ") ORDER BY slot LIMIT 1; SELECT slot FROM kyu_locks WHERE name = ", slots);
	db_quotes(sb, name);
	sb_printf(sb, " AND holder = %" PRIu64 " ORDER BY slot", token);
}

void lock_sql_extend(struct strbuf *sb, const char *name, unsigned slot, uint64_t token, unsigned ttl)
{
	sb_printf(sb, "UPDATE kyu_locks SET expires = " LOCK_NOW " + INTERVAL %u SECOND WHERE name = ", ttl);
	db_quotes(sb, name);
	sb_printf(sb, " AND slot = %u AND holder = %" PRIu64 " AND expires >= " LOCK_NOW, slot, token);
}

void lock_sql_release(struct strbuf *sb, const char *name, unsigned slot, uint64_t token)
{
	sb_adds(sb, "UPDATE kyu_locks SET holder = NULL, host = NULL, pid = NULL, acquired_at = NULL, "
		    "expires = NULL WHERE name = ");
	db_quotes(sb, name);
	sb_printf(sb, " AND slot = %u AND holder = %" PRIu64, slot, token);
}

void lock_sql_list(struct strbuf *sb, const char *name)
{
	sb_adds(sb, "SELECT name, slot, IFNULL(host, '-') AS host, IFNULL(pid, '-') AS pid, "
		    "IFNULL(acquired_at, '-') AS acquired_at, CASE WHEN holder IS NULL THEN 'free' "
		    "WHEN expires < " LOCK_NOW " THEN 'expired' "
		    "ELSE ROUND(TIMESTAMPDIFF(MICROSECOND, " LOCK_NOW ", expires) / 1000000, 1) END "
		    "AS lease_left FROM kyu_locks");
	if (name) {
		sb_adds(sb, " WHERE name = ");
		db_quotes(sb, name);
	}
	sb_adds(sb, " ORDER BY name, slot");
}

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
	bool handled[N_FWD];
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
		l->handled[i] = true;
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
		fprintf(stderr, "kyu: lock %s: could not release slot %u (%s); it expires within %" PRId64 " s\n",
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
			lock_sql_acquire(&sb, l->o.name, (unsigned)l->o.slots, l->token, l->host, (long)getpid(),
					 (unsigned)l->o.ttl);
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
			l->lease_end = (first_unknown > 0 ? first_unknown : sent) + (double)l->o.ttl;
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
			fprintf(stderr, "kyu: lock %s: %s while waiting for the lock\n", l->o.name, strsignal(sig));
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
		fprintf(stderr, "kyu: lock %s: not obtained within %" PRId64 " s\n", l->o.name, l->o.wait);
	else
		fprintf(stderr, "kyu: lock %s: held by another (%s)\n", l->o.name,
			l->o.slots > 1 ? "every slot is taken" : "try --wait");
	return LOCK_EXIT_BUSY;
}

/* fork and exec the command in a process group of its own, with only
 * stdin, stdout and stderr, the signal mask kyu was started with and
 * default handlers. Returns its pid, or -1. */
static pid_t spawn(struct locker *l)
{
	pid_t parent = getpid(), pid;

	fflush(NULL);
	pid = fork();
	if (pid != 0) {
		/* Also here, so that killpg works whichever runs first. */
		if (pid > 0)
			(void)setpgid(pid, pid);
		return pid;
	}
	(void)setpgid(0, 0);
	signal(SIGCHLD, SIG_DFL);
	for (int i = 0; i < N_FWD; i++)
		if (l->handled[i])
			signal(fwd_sigs[i], SIG_DFL);
	/* The parent is the guardian (below), which kills the whole command
	 * when kyu goes; should the guardian itself be killed, this is the
	 * backstop for the command's own process. */
	(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(LOCK_EXIT_LOST);
	/* The database socket (Connector/C may not open it close-on-exec)
	 * and anything else but the standard three. */
	closefrom(3);
	sigprocmask(SIG_SETMASK, &l->orig_mask, NULL);
	execvp(l->o.argv[0], l->o.argv);
	{
		int e = errno;
		dprintf(STDERR_FILENO, "kyu: lock %s: cannot execute %s: %s\n", l->o.name, l->o.argv[0],
			strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
}

/* ---- the guardian ----------------------------------------------------------
 *
 * The lock's promise is one holder's work at a time, and the work is the
 * command with every process it starts. kyu alone cannot keep it: killed
 * (SIGKILL, the OOM killer), it can do nothing, while the command's
 * children run on into the next holder's lease. So the command is the
 * child of a small guardian process, forked by kyu, that outlives kyu:
 *
 *   kyu ── guardian (subreaper) ── command (a process group of its own)
 *
 * The guardian holds the read end of a pipe whose write end only kyu
 * has. When kyu closes it (the command ended, or its lease is lost) or
 * dies, the guardian SIGKILLs the command's process group, then every
 * process left below it: as a child subreaper it inherits whatever an
 * ended process leaves, a double-forked daemon in a session of its own
 * included, and kills each until it has no child left.
 *
 * It reaps the command only after that group kill: an unreaped command
 * keeps its pid, so the group id cannot name another group meanwhile
 * (kyu's own signals to the group rely on the same). It tells kyu the
 * command's pid, and its status when it ends, over a second pipe. */

enum { MSG_STARTED = 1, MSG_START_FAILED, MSG_ENDED };
struct gmsg {
	int32_t kind;
	int32_t value; /* pid, errno or exit status */
};

/* SIGCHLD only ends the guardian's wait in ppoll. */
static void on_child(int sig)
{
	(void)sig;
}

static void send_msg(int fd, int kind, int value)
{
	struct gmsg m = { .kind = kind, .value = value };
	ssize_t n;

	/* Smaller than PIPE_BUF: written whole or not at all. If kyu is
	 * gone, there is nobody to tell (SIGPIPE is ignored here). */
	do
		n = write(fd, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
}

/* Without the children file (a kernel without CONFIG_PROC_CHILDREN):
 * every process whose parent is this one, from /proc/PID/stat. */
static void kill_children_slowly(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	long self = (long)getpid();

	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[300], buf[512], *p;
		long pid = strtol(e->d_name, &p, 10), ppid;
		ssize_t n;
		int fd;

		if (pid <= 0 || *p)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* "PID (COMM) STATE PPID ...": COMM may hold anything. */
		p = strrchr(buf, ')');
		if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
			continue;
		ppid = strtol(p + 4, &p, 10);
		if (*p == ' ' && ppid == self)
			(void)kill((pid_t)pid, SIGKILL);
	}
	closedir(d);
}

/* SIGKILL each child of this (single-threaded) process. */
static void kill_children(void)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/children", (long)getpid());
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kill_children_slowly();
		return;
	}
	/* Each round kills what it read; more come at the next. */
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* A full buffer may end inside a number: leave that one to the next
	 * round rather than kill a pid cut short. */
	if ((size_t)n == sizeof(buf) - 1) {
		char *last = strrchr(buf, ' ');
		if (!last)
			return;
		*last = '\0';
	}
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		/* A child not yet reaped: its pid is still its own. */
		if (pid > 0)
			(void)kill((pid_t)pid, SIGKILL);
	}
}

/* The end of the command: the group while its leader is unreaped, then
 * whatever else is below us, until nothing is. */
_Noreturn static void guardian_finish(pid_t cmd)
{
	if (cmd > 0)
		(void)kill(-cmd, SIGKILL);
	for (;;) {
		pid_t r;
		kill_children();
		r = waitpid(-1, NULL, 0);
		if (r < 0 && errno == ECHILD)
			break;
	}
	_exit(0);
}

/* In the child kyu forked: start the command and watch over it. */
_Noreturn static void guardian(struct locker *l, int life_fd, int report_fd)
{
	static const int quiet[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = on_child };
	sigset_t all, wait_mask;
	struct pollfd pfd = { .fd = life_fd, .events = POLLIN };
	bool reported = false;
	pid_t cmd;

	/* Until the handlers below are in place, nothing may end us. */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	/* Not PR_SET_PDEATHSIG: this process must outlive kyu. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		dprintf(STDERR_FILENO, "kyu: lock %s: cannot become a subreaper (%s): a process "
			"that leaves the command's process group may outlive it\n",
			l->o.name, strerror(errno));
	cmd = spawn(l);
	if (cmd < 0) {
		send_msg(report_fd, MSG_START_FAILED, errno);
		_exit(0);
	}
	send_msg(report_fd, MSG_STARTED, (int)cmd);
	/* A Control-C or a signal to kyu's process group is kyu's to pass
	 * on; this process ends only when kyu says so or is gone. */
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	sigfillset(&wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
	/* Nothing of kyu's (its database connection) and no terminal:
	 * only the two pipes. */
	{
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null >= 0) {
			(void)dup2(null, STDIN_FILENO);
			(void)dup2(null, STDOUT_FILENO);
			(void)dup2(null, STDERR_FILENO);
			if (null > STDERR_FILENO)
				close(null);
		}
		int lo = life_fd < report_fd ? life_fd : report_fd;
		int hi = life_fd < report_fd ? report_fd : life_fd;
		/* EINVAL for an empty range is as good as done. */
		(void)close_range(3, (unsigned)lo - 1, 0);
		(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
		(void)close_range((unsigned)hi + 1, ~0U, 0);
	}
	for (;;) {
		siginfo_t si;

		/* Orphans that ended are reaped; the command only when it is
		 * finished with. Once it has ended (a zombie), others wait: the
		 * end comes at once, as kyu learns of it. */
		while (!reported) {
			si.si_pid = 0;
			if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
				break;
			if (si.si_pid != cmd) {
				(void)waitpid(si.si_pid, NULL, 0);
				continue;
			}
			send_msg(report_fd, MSG_ENDED,
				 si.si_code == CLD_EXITED ? si.si_status : 128 + si.si_status);
			reported = true;
		}
		pfd.revents = 0;
		if (ppoll(&pfd, 1, NULL, &wait_mask) > 0 && pfd.revents)
			guardian_finish(cmd); /* kyu closed the pipe, or died */
	}
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
		fprintf(stderr, "kyu: lock %s: cannot extend the lease: %s\n", l->o.name, db_error(l->db));
		return RENEW_FAILED;
	}
	return reply->r[0].affected == 1 ? RENEWED : RENEW_LOST;
}

/* Start the guardian, which starts the command (see above). Returns the
 * guardian's pid, the command's in *cmd, and in *life and *report kyu's
 * ends of the pipes; -1 with errno when either could not be started. */
static pid_t start_guarded(struct locker *l, pid_t *cmd, int *life, int *report)
{
	int lp[2], rp[2], e;
	struct gmsg m;
	ssize_t n;
	pid_t g;

	if (pipe2(lp, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(rp, O_CLOEXEC) < 0) {
		e = errno;
		close(lp[0]);
		close(lp[1]);
		errno = e;
		return -1;
	}
	fflush(NULL);
	g = fork();
	if (g == 0) {
		close(lp[1]);
		close(rp[0]);
		guardian(l, lp[0], rp[1]);
	}
	e = errno;
	close(lp[0]);
	close(rp[1]);
	if (g < 0) {
		close(lp[1]);
		close(rp[0]);
		errno = e;
		return -1;
	}
	/* The first message comes at once: the command's pid, or why there
	 * is none. */
	do
		n = read(rp[0], &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(m) || m.kind != MSG_STARTED) {
		e = n == (ssize_t)sizeof(m) && m.kind == MSG_START_FAILED ? m.value : ECHILD;
		close(lp[1]);
		close(rp[0]);
		(void)waitpid(g, NULL, 0);
		errno = e;
		return -1;
	}
	(void)fcntl(rp[0], F_SETFL, O_NONBLOCK);
	*cmd = (pid_t)m.value;
	*life = lp[1];
	*report = rp[0];
	return g;
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

	if ((sig = take_signal())) {
		release(l, l->slot, false, &release_lost);
		return 128 + sig;
	}
	guard = start_guarded(l, &pid, &life, &report);
	if (guard < 0) {
		fprintf(stderr, "kyu: lock %s: cannot start %s: %s\n", l->o.name, l->o.argv[0], strerror(errno));
		release(l, l->slot, false, &release_lost);
		return LOCK_EXIT_OSERR;
	}
	for (;;) {
		double now, wake;

		if (waitpid(guard, NULL, WNOHANG) == guard)
			guard_gone = true;
		while (report >= 0) {
			struct gmsg m;
			ssize_t n = read(report, &m, sizeof(m));
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN)
				break;
			if (n == (ssize_t)sizeof(m) && m.kind == MSG_ENDED) {
				status = m.value;
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
			fprintf(stderr, "kyu: lock %s: the lease could not be extended before it expires; "
					"stopping the command\n", l->o.name);
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
				fprintf(stderr, "kyu: lock %s: the lease was lost (slot %u is no longer ours); "
						"stopping the command\n", l->o.name, l->slot);
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
		fprintf(stderr, "kyu: lock %s: the process watching over the command was killed; "
				"releasing the lock\n", l->o.name);
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
		fprintf(stderr, "usage: kyu lock NAME [--ttl S] [--wait S] [--slots N] -- COMMAND [ARG...]\n");
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
