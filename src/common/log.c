/* Logging: one line per event on stderr, tagged with the process role. See
 * log.h. */
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A process has exactly one role and one log level, so these are the
 * process-wide state the style allows. */
static char log_program[16] = "kyud";
static char log_role[32] = "kyud";
static enum log_level log_min = LOG_LVL_INFO;
static bool log_journal;

static const char *const level_names[] = { "debug", "info", "notice", "warning", "error" };

void log_set_program(const char *program)
{
	snprintf(log_program, sizeof(log_program), "%s", program);
}

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

/* One decimal number of at most 20 digits, no sign, no space. */
static const char *parse_ull(const char *s, unsigned long long *ret)
{
	unsigned long long v = 0;
	const char *start = s;

	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (~0ULL - d) / 10)
			return NULL;
		v = v * 10 + d;
	}
	if (s == start)
		return NULL;
	*ret = v;
	return s;
}

bool log_journal_matches(const char *value, unsigned long long dev, unsigned long long ino)
{
	unsigned long long d, i;
	const char *p;

	if (!value || !(p = parse_ull(value, &d)) || *p != ':' || !(p = parse_ull(p + 1, &i)) || *p)
		return false;
	return d == dev && i == ino;
}

void log_detect_journal(void)
{
	struct stat st;

	/* JOURNAL_STREAM is inherited by whatever systemd's child starts: a
	 * kyud run by hand from a shell of a unit, or with stderr redirected
	 * to a file, would otherwise write "<6>" into a terminal or a file. */
	log_journal = fstat(STDERR_FILENO, &st) == 0 &&
		      log_journal_matches(getenv("JOURNAL_STREAM"), (unsigned long long)st.st_dev,
					  (unsigned long long)st.st_ino);
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
	/* journald reads the <N> prefix as the syslog priority (so that
	 * journalctl -p err finds errors); anywhere else it is noise. */
	n = snprintf(line, sizeof(line), "%s%s%s%s%s: ",
		     log_journal ? (const char *[]){ "<7>", "<6>", "<5>", "<4>", "<3>" }[level]
				 : "",
		     log_program, log_role[0] ? "[" : "", log_role, log_role[0] ? "]" : "");
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

void log_library_line(void *cls, const char *fmt, va_list ap)
{
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Libraries end their messages with a newline of their own. */
	msg[strcspn(msg, "\n")] = '\0';
	log_warn("%s: %s", (const char *)cls, msg);
}
