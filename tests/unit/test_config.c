#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/domain.h"
#include "check.h"

static char path[64];

static void write_file(const char *text);

static int load(const char *text, struct kyu_config *cfg, char *err, size_t errlen)
{
	write_file(text);
	return config_load(path, cfg, err, errlen);
}

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void expect_error(const char *text, const char *fragment)
{
	struct kyu_config cfg;
	char err[512] = "", want[256];

	CHECK(load(text, &cfg, err, sizeof(err)) < 0);
	snprintf(want, sizeof(want), "%s:%s", path, fragment);
	if (strstr(err, want) == NULL) {
		check_failures++;
		fprintf(stderr, "error \"%s\" lacks \"%s\"\n", err, want);
	}
}

/* "PREFIX" followed by n copies of c and "SUFFIX", in a static buffer. */
static const char *line_of(const char *prefix, char c, size_t n, const char *suffix)
{
	static char buf[1024];
	size_t p = strlen(prefix);
	memcpy(buf, prefix, p);
	memset(buf + p, c, n);
	snprintf(buf + p + n, sizeof(buf) - p - n, "%s", suffix);
	return buf;
}

/* inih reads lines into a fixed buffer (200 bytes in Debian's build): a
 * longer line is refused at its own line, not misread as two. */
static void check_long_lines(void)
{
	struct kyu_config cfg;
	char err[512];

	/* "shell = /" plus 189 characters: 198, the longest that fits. */
	CHECK(load(line_of("[job]\n; comment\nshell = /", 'x', 189, "\nkill_grace = 3\n"), &cfg, err,
		   sizeof(err)) == 0);
	CHECK(cfg.shell && strlen(cfg.shell) == 190 && cfg.kill_grace == 3);
	config_free(&cfg);
	expect_error(line_of("[job]\n; comment\nshell = /", 'x', 190, "\nkill_grace = 3\n"),
		     "3: line too long (max 198 characters)");
	expect_error(line_of("[kyud]\nqueues = ", 'q', 400, "\n"), "2: line too long");
	/* The last line, without a newline. */
	expect_error(line_of("[kyud]\nqueues = ", 'q', 400, ""), "2: line too long");
	/* Lines after a long one that fits keep their numbers. */
	expect_error(line_of("[job]\nshell = /", 'x', 189, "\nnot ini\n"), "3: syntax error");
	/* A comment is a line like any other. */
	expect_error(line_of("[job]\n;", 'c', 300, "\n"), "2: line too long");
}

static void check_sources(void)
{
	struct kyu_config cfg, again;
	char err[512];
	int fd, seals;

	/* A directory used to read as an empty file: defaults, "OK". */
	CHECK(config_load("/tmp", &cfg, err, sizeof(err)) < 0);
	CHECK_STR(err, "/tmp: is a directory, not a regular file");

	/* A FIFO without a writer used to block the open for ever (kyud
	 * --check-config, kyu -c): refused without waiting for a writer.
	 * The alarm turns a hang into a failure. */
	{
		char fifo[128];
		snprintf(fifo, sizeof(fifo), "%s.fifo", path);
		unlink(fifo);
		CHECK(mkfifo(fifo, 0600) == 0);
		alarm(20);
		CHECK(config_load(fifo, &cfg, err, sizeof(err)) < 0);
		alarm(0);
		CONTAINS(err, ": is a FIFO, not a regular file");
		CHECK(strncmp(err, fifo, strlen(fifo)) == 0);
		unlink(fifo);
	}
	CHECK(config_load("/dev/null", &cfg, err, sizeof(err)) < 0);
	CHECK_STR(err, "/dev/null: is a character device, not a regular file");

	/* From bytes: the name is used in messages; NUL bytes are refused. */
	CHECK(config_parse("mem.ini", "[kyud]\nworkers = 3", 18, &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.workers == 3);
	CHECK_STR(cfg.path, "mem.ini");
	config_free(&cfg);
	CHECK(config_parse("mem.ini", "[kyud]\nworkers = 3\n\0\n", 21, &cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "mem.ini:3: contains a NUL byte") == err);
	CHECK(config_parse("mem.ini", "[kyud]\nworkers = x\n", 19, &cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "mem.ini:2: [kyud] workers = 'x': not a whole number") == err);

	/* The supervisor's sealed copy: the bytes it parsed, whatever happens
	 * to the file afterwards, read the same by every worker. */
	write_file("[kyud]\nworkers = 3\nslots = 16\n");
	CHECK(config_load_memfd(path, &cfg, &fd, err, sizeof(err)) == 0);
	CHECK(fd >= 0 && cfg.workers == 3 && cfg.slots == 16);
	config_free(&cfg);
	write_file("[kyud]\nworkers = 5\n");
	for (int i = 0; i < 2; i++) {
		CHECK(config_load_fd(fd, path, &again, err, sizeof(err)) == 0);
		CHECK(again.workers == 3 && again.slots == 16);
		CHECK_STR(again.path, path);
		config_free(&again);
	}
	seals = fcntl(fd, F_GET_SEALS);
	CHECK(seals >= 0 && (seals & F_SEAL_WRITE) && (seals & F_SEAL_SEAL));
	CHECK(write(fd, "x", 1) < 0 && errno == EPERM);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	/* An invalid file gives no memfd. */
	write_file("[kyud]\nworkers = 0\n");
	CHECK(config_load_memfd(path, &cfg, &fd, err, sizeof(err)) == -1 && fd == -1);
	CHECK(strstr(err, ":2: [kyud] workers = '0'") != NULL);
}

/* A file with a database password that every local user may read is
 * refused, with its mode and the fix; group read (root:kyu 0640) is the
 * administrator's sharing, and a file without a password may be 0644. The
 * workers' sealed copy is not a file anyone else reads. (The file is
 * mkstemp's, 0600, until chmod here.) */
static void check_secret_mode(void)
{
	static const char with[] = "[database]\nuser = kyu\npassword = s3cret\n";
	struct kyu_config cfg, again;
	char err[512], want[512];
	int fd;

	write_file(with);
	CHECK(chmod(path, 0644) == 0);
	CHECK(config_load(path, &cfg, err, sizeof(err)) == -1);
	snprintf(want, sizeof(want),
		 "%s: holds [database] password, but its mode 0644 lets every local user read it: "
		 "refused. Make it private: chmod 600 %s, or chmod 640",
		 path, path);
	CONTAINS(err, want);
	CHECK(config_load_memfd(path, &cfg, &fd, err, sizeof(err)) == -1 && fd == -1);
	CONTAINS(err, want);
	CHECK(chmod(path, 0604) == 0);
	CHECK(config_load(path, &cfg, err, sizeof(err)) == -1);
	CONTAINS(err, "its mode 0604 lets every local user read it");
	/* Readable by the group: the administrator's choice. */
	CHECK(chmod(path, 0640) == 0);
	CHECK(config_load(path, &cfg, err, sizeof(err)) == 0);
	CHECK_STR(cfg.db_password, "s3cret");
	config_free(&cfg);
	CHECK(chmod(path, 0600) == 0);
	CHECK(config_load_memfd(path, &cfg, &fd, err, sizeof(err)) == 0 && fd >= 0);
	config_free(&cfg);
	CHECK(config_load_fd(fd, path, &again, err, sizeof(err)) == 0);
	CHECK_STR(again.db_password, "s3cret");
	config_free(&again);
	close(fd);
	/* No password, or an empty one: nothing to keep. */
	write_file("[database]\nuser = kyu\npassword =\n");
	CHECK(chmod(path, 0644) == 0);
	CHECK(config_load(path, &cfg, err, sizeof(err)) == 0);
	config_free(&cfg);
	CHECK(chmod(path, 0600) == 0);
}

/* A running worker keeps slots and prefetch (the table's restart-only keys)
 * and takes everything else. */
static void check_restart_keys(void)
{
	struct kyu_config old, nc;
	char err[512];

	CHECK(load("[kyud]\nslots = 8\nworkers = 2\n", &old, err, sizeof(err)) == 0);
	CHECK(load("[kyud]\nslots = 16\nworkers = 4\n[job]\nshell = /bin/bash\n", &nc, err,
		   sizeof(err)) == 0);
	CHECK(config_keep_restart_keys(&nc, &old) == 1);
	CHECK(nc.slots == 8 && nc.prefetch == 256);
	CHECK(nc.workers == 4);
	CHECK_STR(nc.shell, "/bin/bash");
	/* Nothing left to keep. */
	CHECK(config_keep_restart_keys(&nc, &old) == 0);
	config_free(&nc);
	CHECK(load("[kyud]\nprefetch = 0\nslots = 1\n", &nc, err, sizeof(err)) == 0);
	CHECK(config_keep_restart_keys(&nc, &old) == 2);
	CHECK(nc.slots == 8 && nc.prefetch == 256);
	config_free(&nc);
	config_free(&old);
}

/* Every key of the table must be documented in conf/kyu.ini (as
 * ";key = default" under its section) and in man/kyu.ini.5; the entry of a
 * key a reload does not change says so. */
static void check_docs(const char *src)
{
	char file[512], *ini = NULL, *man = NULL;
	size_t len = 0;
	const char *section, *name, *def;
	bool restart_only;
	FILE *f;

	snprintf(file, sizeof(file), "%s/conf/kyu.ini", src);
	f = fopen(file, "r");
	CHECK(f != NULL);
	if (f) {
		len = 0;
		getdelim(&ini, &len, '\0', f);
		fclose(f);
	}
	snprintf(file, sizeof(file), "%s/man/kyu.ini.5", src);
	f = fopen(file, "r");
	CHECK(f != NULL);
	if (f) {
		len = 0;
		getdelim(&man, &len, '\0', f);
		fclose(f);
	}
	for (size_t i = 0; config_key_at(i, &section, &name, &def, &restart_only); i++) {
		char want[256], sect[64];
		snprintf(sect, sizeof(sect), "[%s]", section);
		/* an empty default is written ";key =", without a trailing blank */
		snprintf(want, sizeof(want), "\n;%s =%s%s\n", name, *def ? " " : "", def);
		const char *s = ini ? strstr(ini, sect) : NULL;
		const char *next = s ? strstr(s + 1, "\n[") : NULL;
		const char *hit = s ? strstr(s, want) : NULL;
		if (!hit || (next && hit > next)) {
			check_failures++;
			fprintf(stderr, "conf/kyu.ini: [%s] lacks \";%s = %s\"\n", section, name, def);
		}
		snprintf(want, sizeof(want), ".It Cm %s\n", name);
		const char *entry = man ? strstr(man, want) : NULL;
		if (!entry) {
			check_failures++;
			fprintf(stderr, "man/kyu.ini.5 lacks \"%s\"\n", want);
		} else {
			/* The entry runs to the next .It or .El. */
			const char *end = strstr(entry + 1, "\n.It "), *el = strstr(entry + 1, "\n.El");
			const char *says = strstr(entry, "applies when a worker restarts");
			if (!end || (el && el < end))
				end = el;
			if (restart_only != (says && (!end || says < end))) {
				check_failures++;
				fprintf(stderr, "man/kyu.ini.5: the entry of %s must %ssay "
						"\"applies when a worker restarts\"\n",
					name, restart_only ? "" : "not ");
			}
		}
		check_count++;
	}
	/* The keys of the queue sections: in the commented [queue.*] block. */
	for (int k = 0; k < DK_N; k++) {
		const char *dname = domain_key_name((enum domain_key)k);
		char want[128];
		const char *block = ini ? strstr(ini, "\n;[queue.*]\n") : NULL;
		snprintf(want, sizeof(want), "\n;%s =", dname);
		if (!block || !strstr(block, want)) {
			check_failures++;
			fprintf(stderr, "conf/kyu.ini: the ;[queue.*] block lacks \";%s =\"\n", dname);
		}
		snprintf(want, sizeof(want), ".It Cm %s\n", dname);
		if (!man || !strstr(man, want)) {
			check_failures++;
			fprintf(stderr, "man/kyu.ini.5 lacks \"%s\"\n", want);
		}
		check_count++;
	}
	free(ini);
	free(man);
}

int main(void)
{
	struct kyu_config cfg;
	char err[512];
	int fd;

	snprintf(path, sizeof(path), "/tmp/kyu-test-config-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0);
	close(fd);

	/* Defaults go through the same parser as the file. */
	CHECK(load("", &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.workers == 2 && cfg.slots == 8 && cfg.lease == 60);
	CHECK_STR(cfg.db_name, "kyu");
	CHECK_STR(cfg.listen, "127.0.0.1:7711");
	CHECK(cfg.claim == CLAIM_PLAIN);
	CHECK(cfg.n_queues == 0);
	CHECK(config_heartbeat(&cfg) == 15.0);
	config_free(&cfg);

	CHECK(load("; comment\n[database]\nsocket = /run/mysqld/mysqld.sock\npassword = s3cret;x\n"
		   "[kyud]\nworkers = 4\nqueues = mail, default\nlisten =\nlease = 20\n"
		   "[job]\npermanent_exit_codes = 64,65, 78\n",
		   &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.workers == 4 && cfg.lease == 20);
	CHECK(cfg.n_queues == 2);
	CHECK_STR(cfg.queues[0], "mail");
	CHECK_STR(cfg.queues[1], "default");
	CHECK_STR(cfg.listen, "");
	CHECK(cfg.n_perm_codes == 3 && cfg.perm_codes[2] == 78);
	CHECK(config_is_permanent_code(&cfg, 65) && !config_is_permanent_code(&cfg, 1));
	/* A default margin that does not fit a short lease is scaled to it. */
	CHECK(cfg.fence_margin == 5);
	config_free(&cfg);

	expect_error("[kyud]\nworkers = 4\nbogus = 1\n", "3: [kyud] bogus = '1': unknown key");
	expect_error("[nope]\nx = 1\n", "2: [nope] x = '1': unknown section");
	expect_error("[kyud]\n\nworkers = many\n", "3: [kyud] workers = 'many': not a whole number");
	expect_error("[kyud]\nworkers = 0\n", "2: [kyud] workers = '0': out of range 1..256");
	expect_error("[kyud]\nlease = 10\nheartbeat = 10\n", "3: [kyud] heartbeat = '10': must be shorter");
	expect_error("[kyud]\nclaim = fast\n", "2: [kyud] claim = 'fast'");
	/* lease 2 or 3 would leave a default margin of 0: refused, not silently
	 * without self-fencing; an explicit fence_margin = 0 is the way to ask. */
	expect_error("[kyud]\nlease = 3\n", "2: [kyud] lease = '3': too short for self-fencing");
	CHECK(load("[kyud]\nlease = 3\nfence_margin = 0\n", &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.lease == 3 && cfg.fence_margin == 0);
	config_free(&cfg);
	expect_error("[kyud]\nlisten = localhost\n", "2: [kyud] listen = 'localhost'");
	/* The registered wake-up address (kyu_daemons): advertise, else listen;
	 * a wildcard reaches nobody, so it needs advertise. */
	expect_error("[kyud]\nlisten = 0.0.0.0:7711\n", "2: [kyud] listen = '0.0.0.0:7711': is a wildcard");
	expect_error("[kyud]\nlisten = [::]:7711\n", "2: [kyud] listen = '[::]:7711': is a wildcard");
	expect_error("[kyud]\nlisten = 0.0.0.0:7711\nadvertise = 0.0.0.0:7711\n",
		     "3: [kyud] advertise = '0.0.0.0:7711': must be an address other hosts");
	expect_error("[kyud]\nlisten =\nadvertise = 10.0.0.1:7711\n", "3: [kyud] advertise = '10.0.0.1:7711': needs listen");
	expect_error("[kyud]\nadvertise = host:7711\n", "2: [kyud] advertise = 'host:7711'");
	CHECK(load("[kyud]\nlisten = 0.0.0.0:7711\nadvertise = 10.0.0.1:7712\n", &cfg, err, sizeof(err)) == 0);
	CHECK_STR(config_wake_addr(&cfg), "10.0.0.1:7712");
	config_free(&cfg);
	CHECK(load("[kyud]\nlisten = 127.0.0.2:7711\n", &cfg, err, sizeof(err)) == 0);
	CHECK_STR(config_wake_addr(&cfg), "127.0.0.2:7711");
	config_free(&cfg);
	CHECK(load("[kyud]\nlisten =\n", &cfg, err, sizeof(err)) == 0);
	CHECK(config_wake_addr(&cfg) == NULL);
	config_free(&cfg);
	expect_error("[job]\npermanent_exit_codes = 1,x\n", "2: [job] permanent_exit_codes");
	expect_error("[job]\nshell = sh\n", "2: [job] shell = 'sh': must be an absolute path");
	expect_error("[kyud]\nthis is not ini\n", "2: syntax error");

	/* Section names (issue 25, item 12): inih reads [queue.a]b] as
	 * [queue.a], cuts a name after 49 bytes and takes any bytes. */
	expect_error("[kyud]\nworkers = 3\n[queue.a]b]\nuser = nobody\n",
		     "3: text after the section name's closing ']'");
	expect_error("[kyud] workers = 3\n", "1: text after the section name's closing ']'");
	expect_error("[queue.\x1b[31m]\nuser = nobody\n", "1: the section name is not valid UTF-8");
	expect_error("[queue.a\tb]\nuser = nobody\n", "1: the section name is not valid UTF-8");
	expect_error("\n[queue.\xff]\nuser = nobody\n", "2: the section name is not valid UTF-8");
	expect_error("[queue.\xc2\x9b]\nuser = nobody\n", "1: the section name is not valid UTF-8");
	/* Refused even without a key under it. */
	expect_error("[kyud]\n[queue.\xc3]\n", "2: the section name is not valid UTF-8");
	expect_error(line_of("[queue.", 'q', 44, "]\nuser = nobody\n"), "1: section name longer than 49 bytes");
	CHECK(load(line_of("[queue.", 'q', 43, "]\nuser = nobody\n"), &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.n_domains == 1 && cfg.domains[0].queue && strlen(cfg.domains[0].queue) == 43);
	config_free(&cfg);
	/* What stays valid: a comment after the name, white space, a BOM,
	 * UTF-8 names, and an indented line after a key, which inih reads as
	 * the rest of that key's value, not as a section. */
	CHECK(load("\xef\xbb\xbf[kyud] ; the daemon\nworkers = 3\n[queue.caf\xc3\xa9]  \r\nuser = nobody\n"
		   "[job] # job defaults\n",
		   &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.workers == 3 && cfg.n_domains == 1);
	CHECK(cfg.n_domains == 1 && cfg.domains[0].queue && strcmp(cfg.domains[0].queue, "caf\xc3\xa9") == 0);
	config_free(&cfg);
	expect_error("[database]\nhost = db1\n  [x]y\n", "3: [database] host = '[x]y'");
	/* Queue names in [kyud] queues: the same rule. */
	expect_error("[kyud]\nqueues = mail, caf\xe9\n", "2: [kyud] queues = 'mail, caf\xe9': a queue name is not valid UTF-8");
	expect_error("[kyud]\nqueues = a\x7f\n", "2: [kyud] queues = 'a\x7f': a queue name is not valid UTF-8");
	CHECK(load("[kyud]\nqueues = caf\xc3\xa9\n", &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.n_queues == 1);
	config_free(&cfg);
	CHECK(config_load("/nonexistent/kyu.ini", &cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent/kyu.ini: cannot open") != NULL);

	/* [job] direct_exec: a bool, yes by default. */
	CHECK(load("", &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.direct_exec);
	config_free(&cfg);
	CHECK(load("[job]\ndirect_exec = off\n", &cfg, err, sizeof(err)) == 0);
	CHECK(!cfg.direct_exec);
	config_free(&cfg);
	expect_error("[job]\ndirect_exec = maybe\n", "2: [job] direct_exec = 'maybe': expected yes or no");

	check_long_lines();
	check_sources();
	check_secret_mode();
	check_restart_keys();

	if (getenv("KYU_SRC"))
		check_docs(getenv("KYU_SRC"));
	else
		fprintf(stderr, "KYU_SRC not set: documentation checks skipped\n");
	unlink(path);
	return check_done("config");
}
