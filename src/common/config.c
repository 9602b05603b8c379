/* kyu.ini's keys: defaults, values, validation (config.h). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "config_file.h"
#include "config_ini.h"
#include "domain.h"
#include "hosts.h"
#include "log.h"
#include "secret.h"
#include "text.h"
#include "util.h"

enum key_type {
	T_STR,
	T_INT,
	T_BOOL,
	T_LEVEL,
	T_CLAIM,
	T_HISTORY,
	T_WAKE_BINLOG,
	T_QUEUES,
	T_CODES,
	T_HOSTPORT,
	T_HOSTS
};

/* When a changed value takes effect. The supervisor applies all of its own
 * keys on reload (workers by growing or shrinking the pool, listen by
 * reopening the socket); a running worker applies all but those it sizes
 * its memory by at start. */
enum key_apply {
	RELOAD,  /* on SIGHUP */
	RESTART, /* when a worker (re)starts; a running one keeps its value */
};

struct key_def {
	const char *section;
	const char *name;
	enum key_type type;
	size_t offset;
	const char *def;
	int64_t min, max;
	enum key_apply apply;
};

#define OFF(f) offsetof(struct kyu_config, f)

/* Every key kyud knows. conf/kyu.ini and kyu.ini(5) document each one; a
 * test checks that they list the same keys. */
/* One row per key, however long: the table is read by people and by
 * scripts/check-defaults. */
/* clang-format off */
static const struct key_def keys[] = {
	{ "database", "host", T_HOSTS, OFF(db_host), "localhost", 0, 0, RELOAD },
	{ "database", "port", T_INT, OFF(db_port), "3306", 1, 65535, RELOAD },
	{ "database", "socket", T_STR, OFF(db_socket), "", 0, 0, RELOAD },
	{ "database", "user", T_STR, OFF(db_user), "kyu", 0, 0, RELOAD },
	{ "database", "password", T_STR, OFF(db_password), "", 0, 0, RELOAD },
	{ "database", "database", T_STR, OFF(db_name), "kyu", 0, 0, RELOAD },
	{ "database", "connect_timeout", T_INT, OFF(db_connect_timeout), "5", 1, 3600, RELOAD },
	{ "database", "replica", T_HOSTS, OFF(db_replica), "", 0, 0, RELOAD },

	{ "kyud", "workers", T_INT, OFF(workers), "2", 1, 256, RELOAD },
	{ "kyud", "slots", T_INT, OFF(slots), "8", 1, 1024, RESTART },
	{ "kyud", "prefetch", T_INT, OFF(prefetch), "256", 0, 1024, RESTART },
	{ "kyud", "lease", T_INT, OFF(lease), "60", 2, 86400, RELOAD },
	{ "kyud", "heartbeat", T_INT, OFF(heartbeat), "0", 0, 86400, RELOAD },
	{ "kyud", "queues", T_QUEUES, OFF(queues_raw), "", 0, 0, RELOAD },
	{ "kyud", "poll_interval", T_INT, OFF(poll_interval), "120", 1, 86400, RELOAD },
	{ "kyud", "retention", T_INT, OFF(retention), "86400", 0, 315360000, RELOAD },
	{ "kyud", "retention_failed", T_INT, OFF(retention_failed), "604800", 0, 315360000, RELOAD },
	{ "kyud", "cleanup_every", T_INT, OFF(cleanup_every), "100", 1, 1000000, RELOAD },
	{ "kyud", "cleanup_batch", T_INT, OFF(cleanup_batch), "1000", 1, 10000, RELOAD },
	{ "kyud", "shutdown_grace", T_INT, OFF(shutdown_grace), "30", 0, 86400, RELOAD },
	{ "kyud", "listen", T_HOSTPORT, OFF(listen), "127.0.0.1:7711", 0, 0, RELOAD },
	{ "kyud", "advertise", T_HOSTPORT, OFF(advertise), "", 0, 0, RELOAD },
	{ "kyud", "wake_rate", T_INT, OFF(wake_rate), "10", 1, 1000000, RELOAD },
	{ "kyud", "wake_binlog", T_WAKE_BINLOG, OFF(wake_binlog), "auto", 0, 0, RELOAD },
	{ "kyud", "wake_poll", T_INT, OFF(wake_poll), "1", 0, 3600, RELOAD },
	{ "kyud", "metrics", T_HOSTPORT, OFF(metrics), "", 0, 0, RELOAD },
	{ "kyud", "metrics_interval", T_INT, OFF(metrics_interval), "10", 1, 3600, RELOAD },
	{ "kyud", "fence_margin", T_INT, OFF(fence_margin), "10", 0, 86400, RELOAD },
	{ "kyud", "live_output", T_INT, OFF(live_output), "3", 0, 86400, RELOAD },
	{ "kyud", "history", T_HISTORY, OFF(history), "failures", 0, 0, RELOAD },
	{ "kyud", "attempt_output", T_INT, OFF(attempt_output), "4096", 0, 65535, RELOAD },
	{ "kyud", "result_max", T_INT, OFF(result_max), "65536", 0, INT64_C(4) * 1024 * 1024, RELOAD },
	{ "kyud", "claim", T_CLAIM, OFF(claim), "plain", 0, 0, RELOAD },
	{ "kyud", "schedules", T_BOOL, OFF(schedules), "yes", 0, 0, RELOAD },
	{ "kyud", "log_level", T_LEVEL, OFF(log_level), "info", 0, 0, RELOAD },

	{ "job", "max_attempts", T_INT, OFF(max_attempts), "3", 1, 1000000, RELOAD },
	{ "job", "time_limit", T_INT, OFF(time_limit), "3600", 0, 31536000, RELOAD },
	{ "job", "kill_grace", T_INT, OFF(kill_grace), "10", 0, 3600, RELOAD },
	{ "job", "backoff_base", T_INT, OFF(backoff_base), "10", 0, 86400, RELOAD },
	{ "job", "backoff_cap", T_INT, OFF(backoff_cap), "3600", 0, 31536000, RELOAD },
	{ "job", "permanent_exit_codes", T_CODES, OFF(perm_codes_raw), "", 0, 0, RELOAD },
	{ "job", "output_limit", T_INT, OFF(output_limit), "65536", 0, INT64_C(4) * 1024 * 1024, RELOAD },
	{ "job", "shell", T_STR, OFF(shell), "/bin/sh", 0, 0, RELOAD },
	{ "job", "direct_exec", T_BOOL, OFF(direct_exec), "yes", 0, 0, RELOAD },

	/* Read by kyu web (kyu-web) only; kyud ignores the section. */
	/* A socket path (from '/') or a numeric ADDRESS:PORT: kyu web checks it. */
	{ "web", "listen", T_STR, OFF(web_listen), "/run/kyu-web/web.sock", 0, 0, RELOAD },
	{ "web", "socket_mode", T_STR, OFF(web_socket_mode), "0660", 0, 0, RELOAD },
	{ "web", "socket_group", T_STR, OFF(web_socket_group), "", 0, 0, RELOAD },
	{ "web", "open_to_local_users", T_BOOL, OFF(web_open_to_local_users), "no", 0, 0, RELOAD },
	{ "web", "read_only", T_BOOL, OFF(web_read_only), "no", 0, 0, RELOAD },
	{ "web", "user", T_STR, OFF(web_user), "", 0, 0, RELOAD },
	{ "web", "password_hash", T_STR, OFF(web_password_hash), "", 0, 0, RELOAD },
	{ "web", "tls_cert", T_STR, OFF(web_tls_cert), "", 0, 0, RELOAD },
	{ "web", "tls_key", T_STR, OFF(web_tls_key), "", 0, 0, RELOAD },
	{ "web", "behind_proxy", T_BOOL, OFF(web_behind_proxy), "no", 0, 0, RELOAD },
};
/* clang-format on */

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

struct parse_ctx {
	struct kyu_config *cfg;
	const char *name;
	char *err;
	size_t errlen;
	bool failed;
	int key_line[N_KEYS];
};

/* Indexed by enum claim_shape. */
static const char *const claim_names[] = { "plain", "join", "skip_locked" };
static const char *const history_names[] = {
	[HISTORY_OFF] = "off", [HISTORY_FAILURES] = "failures", [HISTORY_ALL] = "all"
};
static const char *const wake_binlog_names[] = {
	[WAKE_BINLOG_AUTO] = "auto", [WAKE_BINLOG_ON] = "on", [WAKE_BINLOG_OFF] = "off"
};

#define N_NAMES(a) (sizeof(a) / sizeof((a)[0]))

/* A key whose values are names (T_HISTORY, T_WAKE_BINLOG, T_CLAIM): the
 * index of value among names into field, or the reason it is none. */
static const char *set_name(void *field, const char *value, const char *const *names, size_t n,
			    const char *expected)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(value, names[i]) == 0) {
			*(int *)field = (int)i;
			return NULL;
		}
	}
	return expected;
}

static const char *name_of(int i, const char *const *names, size_t n)
{
	return i >= 0 && (size_t)i < n ? names[i] : "?";
}

static int split_list(char *raw, char **items, int max, int *count)
{
	int n = 0;
	char *save = NULL;

	for (char *tok = strtok_r(raw, ", \t", &save); tok; tok = strtok_r(NULL, ", \t", &save)) {
		if (n == max)
			return -E2BIG;
		items[n++] = tok;
	}
	*count = n;
	return 0;
}

/* Parse one value into cfg. Returns NULL or a reason. */
static const char *set_value(struct kyu_config *cfg, const struct key_def *k, const char *value)
{
	void *field = (char *)cfg + k->offset;
	int64_t v;
	int r;

	switch (k->type) {
	case T_HOSTS: {
		struct host_port hp[HOSTS_MAX];
		int n;
		int rc = hosts_parse(value, 3306, hp, HOSTS_MAX, &n);
		if (rc == -E2BIG)
			return "too many hosts (at most 16)";
		if (rc < 0)
			return "expected HOST, HOST:PORT or [IPV6]:PORT, several separated by commas";
	}
		/* fall through */
	case T_STR:
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		return NULL;
	case T_INT:
		r = parse_i64(value, k->min, k->max, &v);
		if (r == -EINVAL)
			return "not a whole number";
		if (r < 0) {
			static char range[64];
			snprintf(range, sizeof(range), "out of range %lld..%lld", (long long)k->min,
				 (long long)k->max);
			return range;
		}
		*(int *)field = (int)v;
		return NULL;
	case T_BOOL: {
		bool b;
		if (parse_bool(value, &b) < 0)
			return "expected yes or no (or true, false, on, off, 1, 0)";
		*(bool *)field = b;
		return NULL;
	}
	case T_LEVEL: {
		enum log_level l;
		if (log_level_parse(value, &l) < 0)
			return "expected debug, info, notice, warning or error";
		*(int *)field = (int)l;
		return NULL;
	}
	case T_HISTORY:
		return set_name(field, value, history_names, N_NAMES(history_names),
				"expected all, failures or off");
	case T_WAKE_BINLOG:
		return set_name(field, value, wake_binlog_names, N_NAMES(wake_binlog_names),
				"expected auto, on or off");
	case T_CLAIM:
		return set_name(field, value, claim_names, N_NAMES(claim_names),
				"expected plain, join or skip_locked");
	case T_HOSTPORT: {
		char host[256];
		uint16_t port;
		unsigned char addr[16];
		if (*value && parse_hostport(value, host, sizeof(host), &port) < 0)
			return "expected ADDRESS:PORT, [IPV6]:PORT or nothing";
		/* kyud binds before it could resolve anything: numeric only. */
		if (*value && inet_pton(AF_INET, host, addr) != 1 &&
		    inet_pton(AF_INET6, host, addr) != 1)
			return "the address must be a numeric IPv4 or IPv6 address";
		free(*(char **)field);
		*(char **)field = xstrdup(value);
		return NULL;
	}
	case T_QUEUES: {
		char *raw = xstrdup(value);
		int n;
		if (split_list(raw, cfg->queues, KYU_MAX_QUEUES, &n) < 0) {
			free(raw);
			return "too many queues (at most 32)";
		}
		for (int i = 0; i < n; i++) {
			/* The column is VARCHAR(64) of utf8mb4: 64 characters;
			 * a name it cannot hold would match no row. */
			long chars = text_name_chars(cfg->queues[i]);
			if (chars < 0) {
				free(raw);
				return "a queue name is not valid UTF-8 or holds a control character";
			}
			if (chars > 64) {
				free(raw);
				return "a queue name is longer than 64 characters";
			}
		}
		free(cfg->queues_raw);
		cfg->queues_raw = raw;
		cfg->n_queues = n;
		return NULL;
	}
	case T_CODES: {
		char *raw = xstrdup(value), *items[KYU_MAX_PERM_CODES];
		int n;
		if (split_list(raw, items, KYU_MAX_PERM_CODES, &n) < 0) {
			free(raw);
			return "too many exit codes (at most 32)";
		}
		for (int i = 0; i < n; i++) {
			if (parse_i64(items[i], 1, 255, &v) < 0) {
				free(raw);
				return "expected a comma-separated list of exit codes 1..255";
			}
			cfg->perm_codes[i] = (int)v;
		}
		free(raw);
		free(cfg->perm_codes_raw);
		cfg->perm_codes_raw = xstrdup(value);
		cfg->n_perm_codes = n;
		return NULL;
	}
	}
	return "internal: unknown key type";
}

static void fail_at(struct parse_ctx *ctx, int line, const char *section, const char *name,
		    const char *value, const char *reason)
{
	if (ctx->failed)
		return;
	ctx->failed = true;
	config_ini_error(ctx->err, ctx->errlen, ctx->name, line, section, name, value, reason);
}

/* Each key of the file, from config_ini_parse. */
static const char *on_key(void *arg, const char *section, const char *name, const char *value,
			  int line)
{
	struct parse_ctx *ctx = arg;
	const char *reason;
	bool known_section = false;

	if (strncmp(section, "queue.", 6) == 0)
		return domain_set(&ctx->cfg->domains, &ctx->cfg->n_domains, section + 6, name,
				  value, line);
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(keys[i].section, section) != 0)
			continue;
		known_section = true;
		if (strcmp(keys[i].name, name) != 0)
			continue;
		reason = set_value(ctx->cfg, &keys[i], value);
		if (!reason)
			ctx->key_line[i] = line;
		return reason;
	}
	return known_section ? "unknown key" : "unknown section";
}

static int line_of(const struct parse_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < N_KEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return ctx->key_line[i];
	return 0;
}

static void validate(struct parse_ctx *ctx)
{
	struct kyu_config *c = ctx->cfg;
	char v[32];

	if (c->heartbeat && c->heartbeat >= c->lease) {
		snprintf(v, sizeof(v), "%d", c->heartbeat);
		fail_at(ctx, line_of(ctx, "heartbeat"), "kyud", "heartbeat", v,
			"must be shorter than lease");
	}
	/* The default margin suits the default lease; with a short lease and
	 * no explicit margin, keep the same proportion. */
	if (!line_of(ctx, "fence_margin") && c->fence_margin >= c->lease / 2) {
		c->fence_margin = c->lease / 4;
		/* A lease too short for any margin would turn self-fencing off
		 * without anyone having asked for that. */
		if (c->fence_margin == 0) {
			snprintf(v, sizeof(v), "%d", c->lease);
			fail_at(ctx, line_of(ctx, "lease"), "kyud", "lease", v,
				"too short for self-fencing (the default fence_margin, lease / 4, would be "
				"0 s): use a lease of at least 4 s, or set fence_margin = 0 to turn "
				"self-fencing off explicitly");
		}
	}
	if (c->fence_margin && c->fence_margin >= c->lease) {
		snprintf(v, sizeof(v), "%d", c->fence_margin);
		fail_at(ctx, line_of(ctx, "fence_margin"), "kyud", "fence_margin", v,
			"must be shorter than lease");
	}
	if (c->backoff_cap < c->backoff_base) {
		snprintf(v, sizeof(v), "%d", c->backoff_cap);
		fail_at(ctx, line_of(ctx, "backoff_cap"), "job", "backoff_cap", v,
			"must not be below backoff_base");
	}
	if (!*c->db_name) {
		fail_at(ctx, line_of(ctx, "database"), "database", "database", "", "must be set");
	}
	if (c->shell[0] != '/') {
		fail_at(ctx, line_of(ctx, "shell"), "job", "shell", c->shell,
			"must be an absolute path");
	}
	/* Other hosts and the database's triggers send wake-ups to the address
	 * a daemon registers (kyu_daemons): a wildcard reaches nobody there. */
	if (*c->advertise && !*c->listen)
		fail_at(ctx, line_of(ctx, "advertise"), "kyud", "advertise", c->advertise,
			"needs listen: a daemon that listens for no wake-ups has no address to advertise");
	else if (*c->advertise && hostport_is_wildcard(c->advertise))
		fail_at(ctx, line_of(ctx, "advertise"), "kyud", "advertise", c->advertise,
			"must be an address other hosts can send to, not a wildcard");
	else if (!*c->advertise && *c->listen && hostport_is_wildcard(c->listen))
		fail_at(ctx, line_of(ctx, "listen"), "kyud", "listen", c->listen,
			"is a wildcard address, which other hosts cannot send wake-ups to: set "
			"[kyud] advertise = ADDRESS:PORT, the address they must use");
}

int config_parse(const char *name, const char *buf, size_t len, struct kyu_config *cfg, char *err,
		 size_t errlen)
{
	struct parse_ctx ctx = { .cfg = cfg, .name = name, .err = err, .errlen = errlen };

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup(name);
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *reason = set_value(cfg, &keys[i], keys[i].def);
		if (reason) {
			snprintf(err, errlen, "internal: default of [%s] %s: %s", keys[i].section,
				 keys[i].name, reason);
			goto fail;
		}
	}

	if (config_ini_parse(name, buf, len, on_key, &ctx, err, errlen) < 0)
		goto fail;
	domain_finish(cfg->domains, cfg->n_domains);
	validate(&ctx);
	if (ctx.failed)
		goto fail;
	return 0;
fail:
	config_free(cfg);
	return -1;
}

/* A file that holds the database password must not be readable by every
 * local user (config_file_check_secret): checked where the file is read
 * from its path; a descriptor kyud hands its workers is its sealed copy. */
static int check_secret(struct kyu_config *cfg, unsigned mode, char *err, size_t errlen)
{
	if (!cfg->db_password || !*cfg->db_password ||
	    config_file_check_secret(cfg->path, mode, err, errlen) == 0)
		return 0;
	config_free(cfg);
	return -1;
}

int config_load(const char *path, struct kyu_config *cfg, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	unsigned mode;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (config_file_read(path, &buf, &len, &mode, err, errlen) < 0)
		return -1;
	r = config_parse(path, buf, len, cfg, err, errlen);
	config_file_free(buf, len);
	if (r == 0)
		r = check_secret(cfg, mode, err, errlen);
	return r;
}

int config_load_fd(int fd, const char *name, struct kyu_config *cfg, char *err, size_t errlen)
{
	char *buf;
	size_t len;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	if (config_file_read_fd(fd, name, &buf, &len, err, errlen) < 0)
		return -1;
	r = config_parse(name, buf, len, cfg, err, errlen);
	config_file_free(buf, len);
	return r;
}

int config_load_memfd(const char *path, struct kyu_config *cfg, int *memfd, char *err,
		      size_t errlen)
{
	char *buf;
	size_t len;
	unsigned mode;
	int r;

	memset(cfg, 0, sizeof(*cfg));
	*memfd = -1;
	if (config_file_read(path, &buf, &len, &mode, err, errlen) < 0)
		return -1;
	r = config_parse(path, buf, len, cfg, err, errlen);
	if (r == 0)
		r = check_secret(cfg, mode, err, errlen);
	if (r == 0) {
		*memfd = config_file_seal(buf, len, err, errlen);
		if (*memfd < 0) {
			config_free(cfg);
			r = -2;
		}
	}
	config_file_free(buf, len);
	return r;
}

/* The value of key k in cfg as the file would spell it, into sb (reset). */
static void value_text(const struct kyu_config *cfg, const struct key_def *k, struct strbuf *sb)
{
	const void *field = (const char *)cfg + k->offset;

	sb_reset(sb);
	switch (k->type) {
	case T_STR:
	case T_HOSTS:
	case T_HOSTPORT:
	case T_CODES:
		sb_adds(sb, *(char *const *)field ? *(char *const *)field : "");
		return;
	case T_QUEUES:
		/* queues_raw was cut up in place: join the names instead. */
		for (int i = 0; i < cfg->n_queues; i++)
			sb_printf(sb, "%s%s", i ? ", " : "", cfg->queues[i]);
		return;
	case T_INT:
		sb_printf(sb, "%d", *(const int *)field);
		return;
	case T_BOOL:
		sb_adds(sb, *(const bool *)field ? "yes" : "no");
		return;
	case T_LEVEL: {
		int level = *(const int *)field;
		sb_adds(sb, log_level_name((enum log_level)level));
		return;
	}
	case T_HISTORY:
		sb_adds(sb, name_of(*(const int *)field, history_names, N_NAMES(history_names)));
		return;
	case T_WAKE_BINLOG:
		sb_adds(sb, name_of(*(const int *)field, wake_binlog_names,
				    N_NAMES(wake_binlog_names)));
		return;
	case T_CLAIM:
		sb_adds(sb, name_of(*(const int *)field, claim_names, N_NAMES(claim_names)));
		return;
	}
}

int config_keep_restart_keys(struct kyu_config *nc, const struct kyu_config *old)
{
	struct strbuf was = { 0 }, now = { 0 };
	int changed = 0;

	/* Through the text, so that every type is copied the way it is set;
	 * no restart-only key takes part in validate()'s rules between keys,
	 * so the result is as valid as nc was. */
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *reason;
		if (keys[i].apply != RESTART)
			continue;
		value_text(old, &keys[i], &was);
		value_text(nc, &keys[i], &now);
		if (strcmp(was.buf, now.buf) == 0)
			continue;
		changed++;
		log_notice("[%s] %s changed from %s to %s: applies when the worker restarts",
			   keys[i].section, keys[i].name, was.buf, now.buf);
		reason = set_value(nc, &keys[i], was.buf);
		if (reason)
			log_err("internal: keeping [%s] %s = '%s': %s", keys[i].section,
				keys[i].name, was.buf, reason);
	}
	sb_free(&was);
	sb_free(&now);
	return changed;
}

void config_free(struct kyu_config *cfg)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		void *field = (char *)cfg + keys[i].offset;
		if (keys[i].type == T_STR || keys[i].type == T_HOSTS ||
		    keys[i].type == T_HOSTPORT || keys[i].type == T_QUEUES ||
		    keys[i].type == T_CODES) {
			if (field == (void *)&cfg->db_password)
				secret_free(*(char **)field);
			else
				free(*(char **)field);
			*(char **)field = NULL;
		}
	}
	free(cfg->path);
	cfg->path = NULL;
	cfg->n_queues = 0;
	domain_free_all(cfg->domains, cfg->n_domains);
	cfg->domains = NULL;
	cfg->n_domains = 0;
}

int config_check_system(const struct kyu_config *cfg, char *err, size_t errlen)
{
	struct domain_privs p;

	domain_privs_get(&p);
	return domain_check(cfg->domains, cfg->n_domains, cfg->queues, cfg->n_queues, &p, cfg->path,
			    err, errlen);
}

int config_max_kill_grace(const struct kyu_config *cfg)
{
	int g = cfg->kill_grace;

	for (int i = 0; i < cfg->n_domains; i++)
		if (cfg->domains[i].kill_grace > g)
			g = cfg->domains[i].kill_grace;
	return g;
}

const char *config_wake_addr(const struct kyu_config *cfg)
{
	if (cfg->advertise && *cfg->advertise)
		return cfg->advertise;
	return cfg->listen && *cfg->listen ? cfg->listen : NULL;
}

double config_heartbeat(const struct kyu_config *cfg)
{
	return cfg->heartbeat ? cfg->heartbeat : cfg->lease / 4.0;
}

bool config_is_permanent_code(const struct kyu_config *cfg, int code)
{
	for (int i = 0; i < cfg->n_perm_codes; i++)
		if (cfg->perm_codes[i] == code)
			return true;
	return false;
}

bool config_key_at(size_t i, const char **section, const char **name, const char **def,
		   bool *restart_only)
{
	if (i >= N_KEYS)
		return false;
	*section = keys[i].section;
	*name = keys[i].name;
	*def = keys[i].def;
	*restart_only = keys[i].apply == RESTART;
	return true;
}
