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

void log_msg(enum log_level level, const char *fmt, ...)
{
	char line[2048];
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
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		return;
	n += m;
	if ((size_t)n >= sizeof(line) - 1)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* One write per line so lines of concurrent processes never interleave. */
	{
		int saved = errno;
		ssize_t w = write(STDERR_FILENO, line, (size_t)n);
		(void)w;
		errno = saved;
	}
}
