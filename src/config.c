#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <ini.h>

#include "log.h"
#include "util.h"

enum key_type { T_STR, T_INT, T_LEVEL, T_CLAIM, T_QUEUES, T_CODES, T_HOSTPORT };

struct key_def {
	const char *section;
	const char *name;
	enum key_type type;
	size_t offset;
	const char *def;
	int64_t min, max;
};

#define OFF(f) offsetof(struct kyu_config, f)

/* Every key kyud knows. conf/kyu.ini and kyu.ini(5) document each one; a
 * test checks that they list the same keys. */
static const struct key_def keys[] = {
	{ "database", "host", T_STR, OFF(db_host), "localhost", 0, 0 },
	{ "database", "port", T_INT, OFF(db_port), "3306", 1, 65535 },
	{ "database", "socket", T_STR, OFF(db_socket), "", 0, 0 },
	{ "database", "user", T_STR, OFF(db_user), "kyu", 0, 0 },
	{ "database", "password", T_STR, OFF(db_password), "", 0, 0 },
	{ "database", "database", T_STR, OFF(db_name), "kyu", 0, 0 },
	{ "database", "connect_timeout", T_INT, OFF(db_connect_timeout), "5", 1, 3600 },

	{ "kyud", "workers", T_INT, OFF(workers), "2", 1, 256 },
	{ "kyud", "slots", T_INT, OFF(slots), "8", 1, 1024 },
	{ "kyud", "prefetch", T_INT, OFF(prefetch), "64", 0, 1024 },
	{ "kyud", "lease", T_INT, OFF(lease), "60", 2, 86400 },
	{ "kyud", "heartbeat", T_INT, OFF(heartbeat), "0", 0, 86400 },
	{ "kyud", "queues", T_QUEUES, OFF(queues_raw), "", 0, 0 },
	{ "kyud", "poll_interval", T_INT, OFF(poll_interval), "30", 1, 86400 },
	{ "kyud", "retention", T_INT, OFF(retention), "86400", 0, 315360000 },
	{ "kyud", "cleanup_every", T_INT, OFF(cleanup_every), "100", 1, 1000000 },
	{ "kyud", "cleanup_batch", T_INT, OFF(cleanup_batch), "1000", 1, 10000 },
	{ "kyud", "shutdown_grace", T_INT, OFF(shutdown_grace), "30", 0, 86400 },
	{ "kyud", "listen", T_HOSTPORT, OFF(listen), "127.0.0.1:7711", 0, 0 },
	{ "kyud", "wake_rate", T_INT, OFF(wake_rate), "200", 1, 1000000 },
	{ "kyud", "fence_margin", T_INT, OFF(fence_margin), "10", 0, 86400 },
	{ "kyud", "claim", T_CLAIM, OFF(claim), "plain", 0, 0 },
	{ "kyud", "log_level", T_LEVEL, OFF(log_level), "info", 0, 0 },

	{ "job", "max_attempts", T_INT, OFF(max_attempts), "3", 1, 1000000 },
	{ "job", "time_limit", T_INT, OFF(time_limit), "3600", 0, 31536000 },
	{ "job", "kill_grace", T_INT, OFF(kill_grace), "10", 0, 3600 },
	{ "job", "backoff_base", T_INT, OFF(backoff_base), "10", 0, 86400 },
	{ "job", "backoff_cap", T_INT, OFF(backoff_cap), "3600", 0, 31536000 },
	{ "job", "permanent_exit_codes", T_CODES, OFF(perm_codes_raw), "", 0, 0 },
	{ "job", "output_limit", T_INT, OFF(output_limit), "65536", 0, 4 * 1024 * 1024 },
	{ "job", "shell", T_STR, OFF(shell), "/bin/sh", 0, 0 },
};

#define N_KEYS (sizeof(keys) / sizeof(keys[0]))

struct parse_ctx {
	struct kyu_config *cfg;
	const char *path;
	FILE *fp;
	int line;
	char *err;
	size_t errlen;
	bool failed;
	int key_line[N_KEYS];
};

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
	case T_LEVEL: {
		enum log_level l;
		if (log_level_parse(value, &l) < 0)
			return "expected debug, info, notice, warning or error";
		*(int *)field = (int)l;
		return NULL;
	}
	case T_CLAIM:
		if (strcmp(value, "plain") == 0)
			cfg->claim = CLAIM_PLAIN;
		else if (strcmp(value, "join") == 0)
			cfg->claim = CLAIM_JOIN;
		else if (strcmp(value, "skip_locked") == 0)
			cfg->claim = CLAIM_SKIP_LOCKED;
		else
			return "expected plain, join or skip_locked";
		return NULL;
	case T_HOSTPORT: {
		char host[256];
		uint16_t port;
		unsigned char addr[16];
		if (*value && parse_hostport(value, host, sizeof(host), &port) < 0)
			return "expected ADDRESS:PORT, [IPV6]:PORT or nothing";
		/* kyud binds before it could resolve anything: numeric only. */
		if (*value && inet_pton(AF_INET, host, addr) != 1 && inet_pton(AF_INET6, host, addr) != 1)
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
			size_t len = strlen(cfg->queues[i]);
			if (len > 64) {
				free(raw);
				return "a queue name is longer than 64 bytes";
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
	if (name)
		snprintf(ctx->err, ctx->errlen, "%s:%d: [%s] %s = '%s': %s", ctx->path, line, section,
			 name, value, reason);
	else
		snprintf(ctx->err, ctx->errlen, "%s:%d: %s", ctx->path, line, reason);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	const char *reason;
	bool known_section = false;

	if (ctx->failed)
		return 1;
	for (size_t i = 0; i < N_KEYS; i++) {
		if (strcmp(keys[i].section, section) != 0)
			continue;
		known_section = true;
		if (strcmp(keys[i].name, name) != 0)
			continue;
		reason = set_value(ctx->cfg, &keys[i], value);
		if (reason) {
			fail_at(ctx, ctx->line, section, name, value, reason);
			return 0;
		}
		ctx->key_line[i] = ctx->line;
		return 1;
	}
	fail_at(ctx, ctx->line, section, name, value,
		known_section ? "unknown key" : "unknown section");
	return 0;
}

/* inih reads through this so that the handler knows the current line. */
static char *counting_reader(char *str, int num, void *stream)
{
	struct parse_ctx *ctx = stream;
	char *r = fgets(str, num, ctx->fp);
	if (r)
		ctx->line++;
	return r;
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
	if (!line_of(ctx, "fence_margin") && c->fence_margin >= c->lease / 2)
		c->fence_margin = c->lease / 4;
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
		fail_at(ctx, line_of(ctx, "shell"), "job", "shell", c->shell, "must be an absolute path");
	}
}

int config_load(const char *path, struct kyu_config *cfg, char *err, size_t errlen)
{
	struct parse_ctx ctx = { .cfg = cfg, .path = path, .err = err, .errlen = errlen };
	int r;

	memset(cfg, 0, sizeof(*cfg));
	cfg->path = xstrdup(path);
	for (size_t i = 0; i < N_KEYS; i++) {
		const char *reason = set_value(cfg, &keys[i], keys[i].def);
		if (reason) {
			snprintf(err, errlen, "internal: default of [%s] %s: %s", keys[i].section,
				 keys[i].name, reason);
			goto fail;
		}
	}

	ctx.fp = fopen(path, "re");
	if (!ctx.fp) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		goto fail;
	}
	r = ini_parse_stream(counting_reader, &ctx, handler, &ctx);
	fclose(ctx.fp);
	if (r > 0 && !ctx.failed)
		fail_at(&ctx, r, NULL, NULL, NULL, "syntax error (expected [section] or key = value)");
	else if (r < 0 && !ctx.failed)
		fail_at(&ctx, 0, NULL, NULL, NULL, "cannot read");
	if (!ctx.failed)
		validate(&ctx);
	if (ctx.failed)
		goto fail;
	return 0;
fail:
	config_free(cfg);
	return -1;
}

void config_free(struct kyu_config *cfg)
{
	for (size_t i = 0; i < N_KEYS; i++) {
		void *field = (char *)cfg + keys[i].offset;
		if (keys[i].type == T_STR || keys[i].type == T_HOSTPORT || keys[i].type == T_QUEUES ||
		    keys[i].type == T_CODES) {
			free(*(char **)field);
			*(char **)field = NULL;
		}
	}
	free(cfg->path);
	cfg->path = NULL;
	cfg->n_queues = 0;
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

bool config_key_at(size_t i, const char **section, const char **name, const char **def)
{
	if (i >= N_KEYS)
		return false;
	*section = keys[i].section;
	*name = keys[i].name;
	*def = keys[i].def;
	return true;
}
