/* What to execute for a job: argv and environment built from the row's
 * command / argv / env columns. See jobspec.h. */
#include "jobspec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "common/utf8.h"
#include "common/util.h"
#include "cmdline.h"

/* jansson's reason, except where it names jansson's own flags: a row's
 * author cannot pass JSON_ALLOW_NUL, and no C string can hold a NUL. */
static const char *json_reason(const json_error_t *e)
{
	if (strstr(e->text, "JSON_ALLOW_NUL"))
		return "\\u0000 (a NUL character) cannot be passed to a program";
	return e->text;
}

static void set_shell_argv(const struct jobspec_input *in, struct jobspec *spec)
{
	spec->argv = xcalloc(4, sizeof(char *));
	spec->argv[0] = xstrdup(in->shell);
	spec->argv[1] = xstrdup("-c");
	spec->argv[2] = xstrdup(in->command);
	spec->use_path = 0;
	spec->direct = false;
}

static int build_argv(const struct jobspec_input *in, struct jobspec *spec, char *err,
		      size_t errlen)
{
	json_error_t jerr;
	json_t *root;
	size_t n;

	if (!in->argv_json) {
		if (!in->command || !*in->command) {
			snprintf(err, errlen, "neither command nor argv is set");
			return -1;
		}
		if (in->direct_exec && cmdline_split(in->command, &spec->argv)) {
			/* As the shell would search: PATH unless the name has a '/'. */
			spec->use_path = strchr(spec->argv[0], '/') == NULL;
			spec->direct = true;
			return 0;
		}
		set_shell_argv(in, spec);
		return 0;
	}
	root = json_loads(in->argv_json, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root) {
		snprintf(err, errlen, "argv is not valid JSON: %s at line %d column %d",
			 json_reason(&jerr), jerr.line, jerr.column);
		return -1;
	}
	if (!json_is_array(root) || (n = json_array_size(root)) == 0) {
		snprintf(err, errlen, "argv must be a non-empty JSON array of strings");
		json_decref(root);
		return -1;
	}
	spec->argv = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		json_t *e = json_array_get(root, i);
		if (!json_is_string(e)) {
			snprintf(err, errlen, "argv[%zu] is not a string", i);
			json_decref(root);
			return -1;
		}
		spec->argv[i] = xstrdup(json_string_value(e));
	}
	if (!*spec->argv[0]) {
		snprintf(err, errlen, "argv[0] is empty");
		json_decref(root);
		return -1;
	}
	spec->use_path = strchr(spec->argv[0], '/') == NULL;
	json_decref(root);
	return 0;
}

/* A job's environment while it is built: envp's first entries are the
 * base's (borrowed), the rest and any that replaced one are in own. */
struct envb {
	struct jobspec *spec;
	size_t n, cap, n_own, cap_own;
};

static void grow(char ***v, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	*cap = need > 2 * *cap ? need : 2 * *cap;
	*v = xrealloc(*v, *cap * sizeof(char *));
}

/* Replace or append NAME=VALUE. A replaced entry may be borrowed: it is
 * left where it is (in own, when it was the job's, freed with the spec). */
static void env_set(struct envb *b, const char *name, const char *value)
{
	struct jobspec *spec = b->spec;
	size_t nl = strlen(name), vl = strlen(value);
	char *entry = xmalloc(nl + vl + 2), *e;

	e = stpcpy(entry, name);
	*e++ = '=';
	memcpy(e, value, vl + 1);
	grow(&spec->own, &b->cap_own, b->n_own + 2);
	spec->own[b->n_own++] = entry;
	spec->own[b->n_own] = NULL;
	for (size_t i = 0; i < b->n; i++) {
		if (strncmp(spec->envp[i], name, nl) == 0 && spec->envp[i][nl] == '=') {
			spec->envp[i] = entry;
			return;
		}
	}
	grow(&spec->envp, &b->cap, b->n + 2);
	spec->envp[b->n++] = entry;
	spec->envp[b->n] = NULL;
}

static int valid_env_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s == '=')
			return 0;
	return 1;
}

static int build_env(const struct jobspec_input *in, struct jobspec *spec, char *err, size_t errlen)
{
	struct envb b = { .spec = spec };
	char attempt[16];

	for (char *const *e = in->base_env; e && *e; e++)
		b.n++;
	/* Room for the six set below at most: one allocation of each. */
	b.cap = b.n + 7;
	b.cap_own = 7;
	spec->envp = xmalloc(b.cap * sizeof(char *));
	spec->own = xmalloc(b.cap_own * sizeof(char *));
	spec->own[0] = NULL;
	if (b.n)
		memcpy(spec->envp, in->base_env, b.n * sizeof(char *));
	spec->envp[b.n] = NULL;

	if (in->env_json) {
		json_error_t jerr;
		json_t *root = json_loads(in->env_json, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
					  &jerr),
		       *v;
		const char *key;

		if (!root) {
			snprintf(err, errlen, "env is not valid JSON: %s at line %d column %d",
				 json_reason(&jerr), jerr.line, jerr.column);
			return -1;
		}
		if (!json_is_object(root)) {
			snprintf(err, errlen, "env must be a JSON object of strings");
			json_decref(root);
			return -1;
		}
		json_object_foreach(root, key, v)
		{
			if (!valid_env_name(key)) {
				snprintf(err, errlen, "env: invalid variable name '%.*s'",
					 (int)utf8_cut(key, strlen(key), 64), key);
				json_decref(root);
				return -1;
			}
			if (!json_is_string(v)) {
				snprintf(err, errlen, "env: value of %.*s is not a string",
					 (int)utf8_cut(key, strlen(key), 64), key);
				json_decref(root);
				return -1;
			}
			env_set(&b, key, json_string_value(v));
			if (strncmp(key, JOBSPEC_HOOK_ENV_PREFIX,
				    strlen(JOBSPEC_HOOK_ENV_PREFIX)) != 0)
				spec->env_foreign = true;
		}
		json_decref(root);
	}
	/* Set last, so that a job's env cannot pretend to be another job. */
	snprintf(attempt, sizeof(attempt), "%u", in->attempt);
	env_set(&b, "KYU_JOB_ID", in->job_id);
	env_set(&b, "KYU_QUEUE", in->queue);
	env_set(&b, "KYU_ATTEMPT", attempt);
	snprintf(attempt, sizeof(attempt), "%d", JOB_STATUS_FD);
	env_set(&b, "KYU_STATUS_FD", attempt);
	if (in->after_json)
		env_set(&b, "KYU_AFTER", in->after_json);
	/* Only when the row has one: a TRACEPARENT of the job's env stays. */
	if (in->traceparent)
		env_set(&b, "TRACEPARENT", in->traceparent);
	return 0;
}

int jobspec_build(const struct jobspec_input *in, struct jobspec *spec, char *err, size_t errlen)
{
	memset(spec, 0, sizeof(*spec));
	if (build_argv(in, spec, err, errlen) < 0 || build_env(in, spec, err, errlen) < 0) {
		jobspec_free(spec);
		return -1;
	}
	return 0;
}

void jobspec_use_shell(const struct jobspec_input *in, struct jobspec *spec)
{
	if (!spec->direct)
		return;
	strv_free(spec->argv);
	set_shell_argv(in, spec);
}

void jobspec_free(struct jobspec *spec)
{
	strv_free(spec->argv);
	free(spec->envp);
	strv_free(spec->own);
	spec->argv = spec->envp = spec->own = NULL;
}
