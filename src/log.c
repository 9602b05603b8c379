#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A process has exactly one role and one log level, so these are the
 * process-wide state the style allows. */
static char log_role[32] = "kyud";
static enum log_level log_min = LOG_LVL_INFO;

static const char *const level_names[] = { "debug", "info", "notice", "warning", "error" };

void log_set_role(const char *role)
{
	snprintf(log_role, sizeof(log_role), "%s", role);
}

void log_set_level(enum log_level level)
{
	log_min = level;
}

const char *log_level_name(enum log_level level)
{
	if ((unsigned)level >= sizeof(level_names) / sizeof(level_names[0]))
		return "?";
	return level_names[level];
}

int log_level_parse(const char *s, enum log_level *ret)
{
	for (unsigned i = 0; i < sizeof(level_names) / sizeof(level_names[0]); i++) {
		if (strcmp(s, level_names[i]) == 0) {
			*ret = (enum log_level)i;
			return 0;
		}
	}
	return -EINVAL;
}

/* Every logged value may come from a row or a datagram: a newline in a job
 * id must not forge a line of its own, and no control character may reach
 * the terminal or the journal raw. Control bytes become \xNN (a backslash
 * itself stays as it is: the form cannot be confused with a real line). */
static size_t escape_into(char *dst, size_t cap, const char *src, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)src[i];
		if (c >= 0x20 && c != 0x7f) {
			if (o + 1 > cap)
				break;
			dst[o++] = (char)c;
			continue;
		}
		if (o + 4 > cap)
			break;
		dst[o++] = '\\';
		dst[o++] = 'x';
		dst[o++] = hex[c >> 4];
		dst[o++] = hex[c & 15];
	}
	return o;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char msg[2048], line[4096];
	int n, m;
	va_list ap;

	if (level < log_min)
		return;
	/* systemd reads the <N> prefix as the syslog priority when stderr is the
	 * journal; outside systemd it is noise, so only add it there. */
	n = snprintf(line, sizeof(line), "%skyud[%s]: ",
		     getenv("JOURNAL_STREAM") ? (const char *[]){ "<7>", "<6>", "<5>", "<4>", "<3>" }[level] : "",
		     log_role);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	va_start(ap, fmt);
	m = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	if ((size_t)m >= sizeof(msg))
		m = (int)sizeof(msg) - 1;
	n += (int)escape_into(line + n, sizeof(line) - (size_t)n - 1, msg, (size_t)m);
	line[n++] = '\n';
	/* One write per line so lines of concurrent processes never interleave. */
	{
		int saved = errno;
		ssize_t w = write(STDERR_FILENO, line, (size_t)n);
		(void)w;
		errno = saved;
	}
}
