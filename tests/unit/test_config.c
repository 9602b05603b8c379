#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "config.h"

static char path[64];

static int load(const char *text, struct kyu_config *cfg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	return config_load(path, cfg, err, errlen);
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

/* Every key of the table must be documented in conf/kyu.ini (as
 * ";key = default" under its section) and in man/kyu.ini.5. */
static void check_docs(const char *src)
{
	char file[512], *ini = NULL, *man = NULL;
	size_t len = 0;
	const char *section, *name, *def;
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
	for (size_t i = 0; config_key_at(i, &section, &name, &def); i++) {
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
		snprintf(want, sizeof(want), ".It Cm %s", name);
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
	expect_error("[kyud]\nlisten = localhost\n", "2: [kyud] listen = 'localhost'");
	expect_error("[job]\npermanent_exit_codes = 1,x\n", "2: [job] permanent_exit_codes");
	expect_error("[job]\nshell = sh\n", "2: [job] shell = 'sh': must be an absolute path");
	expect_error("[kyud]\nthis is not ini\n", "2: syntax error");
	CHECK(config_load("/nonexistent/kyu.ini", &cfg, err, sizeof(err)) < 0);
	CHECK(strstr(err, "/nonexistent/kyu.ini: cannot open") != NULL);

	if (getenv("KYU_SRC"))
		check_docs(getenv("KYU_SRC"));
	else
		fprintf(stderr, "KYU_SRC not set: documentation checks skipped\n");
	unlink(path);
	return check_done("config");
}
