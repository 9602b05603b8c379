/* kyu.ini's syntax, on inih (config_ini.h). */
#include "config_ini.h"

#include <stdio.h>
#include <string.h>

#include <ini.h>

#include "text.h"

struct ini_ctx {
	const char *name;
	const char *pos, *end; /* what inih has not read yet */
	int line;
	bool too_long;
	int max_line;
	char *err;
	size_t errlen;
	bool failed;
	bool have_key; /* a key since the last section: what inih continues */
	config_ini_key_fn *key;
	void *arg;
};

void config_ini_error(char *err, size_t errlen, const char *file, int line, const char *section,
		      const char *name, const char *value, const char *reason)
{
	if (name)
		snprintf(err, errlen, "%s:%d: [%s] %s = '%s': %s", file, line, section, name, value,
			 reason);
	else
		snprintf(err, errlen, "%s:%d: %s", file, line, reason);
}

static void fail_at(struct ini_ctx *ctx, int line, const char *section, const char *name,
		    const char *value, const char *reason)
{
	if (ctx->failed)
		return;
	ctx->failed = true;
	config_ini_error(ctx->err, ctx->errlen, ctx->name, line, section, name, value, reason);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *ctx = user;
	const char *reason;

	ctx->have_key = true;
	if (ctx->failed)
		return 1;
	reason = ctx->key(ctx->arg, section, name, value, ctx->line);
	if (reason) {
		fail_at(ctx, ctx->line, section, name, value, reason);
		return 0;
	}
	return 1;
}

/* inih's buffer for a section name (MAX_SECTION in ini.c): a longer one
 * is cut to this many bytes less one, silently. */
#define INI_SECTION_BYTES 50

/* inih takes a section name up to the first ']' and ignores whatever
 * follows it ("[queue.a]b]" is [queue.a]), and cuts a long name short;
 * it accepts any bytes in between. Each would configure a section other
 * than the one written, or one no queue can match, so the line is checked
 * here, where its raw text is seen. Returns NULL or why not. */
static const char *section_problem(const char *line, size_t n)
{
	const char *end = line + n, *close, *p;
	char name[INI_SECTION_BYTES];
	size_t len;

	/* Where inih looks for the ']': up to an inline comment (';' after
	 * white space). Without one, inih itself reports a syntax error. */
	for (close = line + 1; close < end && *close != ']'; close++)
		if (*close == ';' && (close[-1] == ' ' || close[-1] == '\t'))
			return NULL;
	if (close >= end)
		return NULL;
	for (p = close + 1; p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'); p++)
		;
	if (p < end && *p != ';' && *p != '#')
		return "text after the section name's closing ']' (a section is [NAME], "
		       "optionally followed by a ; comment)";
	len = (size_t)(close - (line + 1));
	if (len >= sizeof(name))
		return "section name longer than 49 bytes, which the INI reader would cut short (a "
		       "queue name in [queue.NAME] has at most 43 bytes)";
	memcpy(name, line + 1, len);
	name[len] = '\0';
	if (text_name_chars(name) < 0)
		return "the section name is not valid UTF-8 or holds a control character";
	return NULL;
}

/* Whether inih will read this line (n bytes) as a section header: the
 * same order of tests as its ini_parse_stream, where an indented line
 * after a key continues that key's value. */
static bool is_section_line(const struct ini_ctx *ctx, const char *line, size_t n,
			    const char **start)
{
	const char *p = line, *end = line + n;

	if (ctx->line == 1 && n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\v' || *p == '\f' || *p == '\r'))
		p++;
	*start = p;
	if (p >= end || *p != '[')
		return false;
	return !(ctx->have_key && p > line);
}

/* inih reads through this, one line per call, so that the handler knows
 * the current line. inih's line buffer has a fixed size (num): a longer
 * line would reach it in pieces, the rest read as a line of its own (a
 * "syntax error" one line late, after a truncated value), so it ends the
 * parse here and is reported at its own line. */
static char *buffer_reader(char *str, int num, void *stream)
{
	struct ini_ctx *ctx = stream;
	const char *nl;
	size_t n, room = num > 1 ? (size_t)num - 1 : 0;

	if (ctx->too_long || ctx->pos >= ctx->end)
		return NULL;
	nl = memchr(ctx->pos, '\n', (size_t)(ctx->end - ctx->pos));
	n = nl ? (size_t)(nl - ctx->pos) + 1 : (size_t)(ctx->end - ctx->pos);
	ctx->line++;
	if (n > room) {
		ctx->too_long = true;
		/* Without its newline; a last line without one may be a
		 * character longer, which is not worth explaining. */
		ctx->max_line = num > 2 ? num - 2 : 0;
		return NULL;
	}
	{
		const char *start, *why;
		if (is_section_line(ctx, ctx->pos, n, &start)) {
			why = section_problem(start, n - (size_t)(start - ctx->pos));
			if (why) {
				fail_at(ctx, ctx->line, NULL, NULL, NULL, why);
				return NULL;
			}
			ctx->have_key = false;
		}
	}
	memcpy(str, ctx->pos, n);
	str[n] = '\0';
	ctx->pos += n;
	return str;
}

int config_ini_parse(const char *name, const char *buf, size_t len, config_ini_key_fn *key,
		     void *arg, char *err, size_t errlen)
{
	struct ini_ctx ctx = { .name = name, .err = err, .errlen = errlen, .key = key, .arg = arg };
	const char *nul;
	int r;

	ctx.pos = buf;
	ctx.end = buf + len;
	/* inih works on C strings: a NUL would silently cut its line short. */
	nul = memchr(buf, '\0', len);
	if (nul) {
		int line = 1;
		for (const char *p = buf; p < nul; p++)
			line += *p == '\n';
		fail_at(&ctx, line, NULL, NULL, NULL, "contains a NUL byte (not a text file?)");
		return -1;
	}
	r = ini_parse_stream(buffer_reader, &ctx, handler, &ctx);
	if (r > 0)
		fail_at(&ctx, r, NULL, NULL, NULL,
			"syntax error (expected [section] or key = value)");
	else if (r < 0)
		fail_at(&ctx, ctx.line, NULL, NULL, NULL, "out of memory");
	if (ctx.too_long) {
		char reason[64];
		snprintf(reason, sizeof(reason), "line too long (max %d characters)", ctx.max_line);
		fail_at(&ctx, ctx.line, NULL, NULL, NULL, reason);
	}
	return ctx.failed ? -1 : 0;
}
