/* Protection domains: [queue.NAME] parsing and errors (through the config
 * parser, as kyud reads them), which section applies, the rules a row must
 * follow, the clean environment, the program lookup, and the per-queue
 * defaults in the claim's SQL. */
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/domain.h"
#include "worker/store.h"
#include "check.h"

static int parse(const char *text, struct kyu_config *cfg, char *err, size_t errlen)
{
	return config_parse("t.ini", text, strlen(text), cfg, err, errlen);
}

static void expect_error(const char *text, const char *want)
{
	struct kyu_config cfg;
	char err[512] = "";

	CHECK(parse(text, &cfg, err, sizeof(err)) < 0);
	CONTAINS(err, want);
}

static const char *env_of(char **env, const char *name)
{
	size_t nl = strlen(name);
	for (; env && *env; env++)
		if (strncmp(*env, name, nl) == 0 && (*env)[nl] == '=')
			return *env + nl + 1;
	return NULL;
}

static void test_parse(void)
{
	struct kyu_config cfg;
	const struct domain *d;
	char err[512];

	CHECK(parse("[queue.mail]\nuser = mailer\ngroup = mail\nenv_pass = TZ, LC_ALL\n"
		    "env = A=1\nenv = B=two words\ncwd = /srv/mail/\numask = 027\n"
		    "limit_cpu = 60\nlimit_as = 2G\nlimit_nofile = 1024\nlimit_nproc = unlimited\n"
		    "limit_fsize = 10m\nlimit_core = 0\nnice = -5\nallow = /opt/mail/bin, /usr/bin\n"
		    "time_limit = 30\nmax_attempts = 7\noutput_limit = 100\nkill_grace = 2\n"
		    "[queue.*]\nuser = nobody\n[queue.open]\nallow = /usr/bin\nallow_shell = yes\n",
		    &cfg, err, sizeof(err)) == 0);
	CHECK(cfg.n_domains == 3);
	d = domain_for(cfg.domains, cfg.n_domains, "mail");
	CHECK(d && d->queue && strcmp(d->queue, "mail") == 0);
	if (d) {
		CHECK_STR(d->user, "mailer");
		CHECK_STR(d->group, "mail");
		CHECK(d->env_pass && d->env_pass[0] && d->env_pass[1] && !d->env_pass[2]);
		CHECK_STR(d->env_pass[1], "LC_ALL");
		CHECK_STR(d->env[1], "B=two words");
		CHECK_STR(d->cwd, "/srv/mail");
		CHECK(d->umask == 027);
		CHECK(d->limit[DLIM_CPU] == 60 && d->limit[DLIM_AS] == (rlim_t)2 << 30);
		CHECK(d->limit[DLIM_NPROC] == RLIM_INFINITY && d->limit[DLIM_FSIZE] == 10 << 20);
		CHECK(d->limit_set[DLIM_CORE] && d->limit[DLIM_CORE] == 0);
		CHECK(d->key_line[DK_NICE] == 15 && d->nice == -5);
		CHECK(d->time_limit == 30 && d->max_attempts == 7 && d->output_limit == 100 &&
		      d->kill_grace == 2);
		/* With an allow-list, shell rows and a row's env are off by default. */
		CHECK(!d->allow_shell && !d->row_env);
		CHECK_STR(d->allow[0], "/opt/mail/bin");
	}
	d = domain_for(cfg.domains, cfg.n_domains, "other");
	CHECK(d && !d->queue && strcmp(d->user, "nobody") == 0);
	CHECK(d && d->allow_shell && d->row_env && d->umask == -1 && d->time_limit == -1);
	d = domain_for(cfg.domains, cfg.n_domains, "open");
	CHECK(d && d->allow_shell && !d->row_env);
	config_free(&cfg);

	/* Without [queue.*], a queue with no section has no domain. */
	CHECK(parse("[queue.a]\nnice = 1\n", &cfg, err, sizeof(err)) == 0);
	CHECK(domain_for(cfg.domains, cfg.n_domains, "b") == NULL);
	config_free(&cfg);
}

static void test_errors(void)
{
	expect_error("[queue.q]\nuser = a b\n", "t.ini:2: [queue.q] user = 'a b': expected a user or group name");
	expect_error("[queue.q]\nlimit_as = 1Q\n", "t.ini:2: [queue.q] limit_as = '1Q': unknown size suffix");
	expect_error("[queue.q]\nlimit_cpu = 10M\n", "[queue.q] limit_cpu = '10M': expected a whole number or unlimited");
	expect_error("[queue.q]\nlimit_fsize = 99999999999T\n", "too large");
	expect_error("[queue.q]\nnice = 20\n", "[queue.q] nice = '20': out of range -20..19");
	expect_error("[queue.q]\numask = 8\n", "[queue.q] umask = '8': expected an octal mode");
	expect_error("[queue.q]\nallow = /usr/bin relative\n", "must be an absolute path");
	expect_error("[queue.q]\nallow = /usr/bin/../sbin\n", "must not contain . or .. components");
	expect_error("[queue.q]\ncwd = srv\n", "[queue.q] cwd = 'srv': must be an absolute path");
	expect_error("[queue.q]\nenv = NOEQUALS\n", "expected NAME=VALUE");
	expect_error("[queue.q]\nenv_pass = A-B\n", "expected variable names");
	expect_error("[queue.q]\nallow_shell = maybe\n", "expected yes or no");
	expect_error("[queue.q]\nmax_attempts = 0\n", "out of range 1..1000000");
	expect_error("[queue.q]\nuserx = a\n", "[queue.q] userx = 'a': unknown key");
	expect_error("[queue.]\nuser = a\n", "a queue section is [queue.NAME]");
	expect_error("[queue.q]\nuser = a\n[queue]\nuser = b\n", "t.ini:4: [queue] user = 'b': unknown section");
}

static void test_rules(void)
{
	struct kyu_config cfg;
	const struct domain *d;
	char err[512];

	CHECK(parse("[queue.q]\nallow = /opt/app/bin, /usr/bin/env\n", &cfg, err, sizeof(err)) == 0);
	d = domain_for(cfg.domains, cfg.n_domains, "q");
	CHECK(domain_check_row(d, "q", false, false, "/opt/app/bin/run", err, sizeof(err)) == 0);
	CHECK(domain_check_row(d, "q", false, false, "/opt/app/bin/sub/run", err, sizeof(err)) == 0);
	CHECK(domain_check_row(d, "q", false, false, "/usr/bin/env", err, sizeof(err)) == 0);
	/* A prefix is a whole path component. */
	CHECK(domain_check_row(d, "q", false, false, "/opt/app/binx", err, sizeof(err)) < 0);
	CHECK_STR(err, "queue q: rule allow: /opt/app/binx is not under an allowed path");
	CHECK(domain_check_row(d, "q", false, false, "/usr/bin/envx", err, sizeof(err)) < 0);
	CHECK(domain_check_row(d, "q", false, false, "/opt/app/bin/../../../bin/sh", err, sizeof(err)) < 0);
	CONTAINS(err, "queue q: rule allow: the program /opt/app/bin/../../../bin/sh is not an absolute path");
	CHECK(domain_check_row(d, "q", false, false, "run", err, sizeof(err)) < 0);
	CHECK(domain_check_row(d, "q", true, false, NULL, err, sizeof(err)) < 0);
	CONTAINS(err, "queue q: rule allow_shell:");
	CHECK(domain_check_row(d, "q", false, true, "/opt/app/bin/run", err, sizeof(err)) < 0);
	CONTAINS(err, "queue q: rule row_env:");
	/* No section: no rules. */
	CHECK(domain_check_row(NULL, "z", true, true, NULL, err, sizeof(err)) == 0);
	config_free(&cfg);
}

static void test_env(void)
{
	struct kyu_config cfg;
	struct domain_ids ids = { .name = "app", .home = "/home/app", .shell = "/bin/bash" };
	char *kyud_env[] = { "PATH=/kyud/bin", "LANG=C.UTF-8", "TZ=UTC", "SECRET=x", "HOME=/root", NULL };
	char err[512], **env;

	CHECK(parse("[queue.q]\nenv_pass = TZ, MISSING\nenv = PATH=/opt/q/bin\nenv = X=1\n", &cfg, err,
		    sizeof(err)) == 0);
	env = domain_base_env(domain_for(cfg.domains, cfg.n_domains, "q"), &ids, kyud_env);
	CHECK_STR(env_of(env, "PATH"), "/opt/q/bin");
	CHECK_STR(env_of(env, "HOME"), "/home/app");
	CHECK_STR(env_of(env, "USER"), "app");
	CHECK_STR(env_of(env, "LOGNAME"), "app");
	CHECK_STR(env_of(env, "SHELL"), "/bin/bash");
	CHECK_STR(env_of(env, "LANG"), "C.UTF-8");
	CHECK_STR(env_of(env, "TZ"), "UTC");
	CHECK_STR(env_of(env, "X"), "1");
	CHECK(env_of(env, "SECRET") == NULL && env_of(env, "MISSING") == NULL);
	domain_env_free(env);
	/* No section: the safe PATH, and nothing of kyud's but LANG. */
	env = domain_base_env(NULL, &ids, kyud_env);
	CHECK_STR(env_of(env, "PATH"), "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	CHECK(env_of(env, "TZ") == NULL);
	domain_env_free(env);
	config_free(&cfg);
}

static void test_find(void)
{
	char *path_env[] = { "PATH=/nonexistent:/bin:/usr/bin", NULL };
	char *p = domain_env_find_program("sh", path_env);

	CHECK_STR(p, "/bin/sh");
	free(p);
	p = domain_env_find_program("no-such-program-kyu", path_env);
	CHECK(p == NULL);
	p = domain_env_find_program("./rel", path_env);
	CHECK_STR(p, "./rel");
	free(p);
}

static void test_sql_defaults(void)
{
	struct kyu_config cfg;
	struct strbuf sb = { 0 };
	char err[512];

	CHECK(parse("[job]\nmax_attempts = 3\ntime_limit = 100\n[queue.*]\nmax_attempts = 5\n"
		    "[queue.a]\ntime_limit = 7\n[queue.b]\nmax_attempts = 9\n",
		    &cfg, err, sizeof(err)) == 0);
	store_claim_build(&sb, &cfg, 42, "h", 4, NULL, 0);
	/* a has a section of its own: [job]'s max_attempts, not [queue.*]'s. */
	CONTAINS(sb.buf, "COALESCE(j.max_attempts, CASE j.queue WHEN 'a' THEN 3 WHEN 'b' THEN 9 ELSE 5 END)");
	CONTAINS(sb.buf, "COALESCE(j.time_limit, CASE j.queue WHEN 'a' THEN 7 ELSE 100 END)");
	sb_free(&sb);
	config_free(&cfg);
	CHECK(parse("", &cfg, err, sizeof(err)) == 0);
	store_claim_build(&sb, &cfg, 42, "h", 4, NULL, 0);
	CONTAINS(sb.buf, "COALESCE(j.max_attempts, 3)");
	sb_free(&sb);
	config_free(&cfg);
}

int main(void)
{
	test_parse();
	test_errors();
	test_rules();
	test_env();
	test_find();
	test_sql_defaults();
	return check_done("test_domain");
}
