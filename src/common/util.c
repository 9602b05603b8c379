/* Small checked helpers, used by every program (kyud, kyud-metrics, kyu web,
 * kyu), most modules and the tests. See util.h. */
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int parse_i64(const char *s, int64_t min, int64_t max, int64_t *ret)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != '\0' || end == s)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_hostport(const char *s, char *host, size_t hostlen, uint16_t *port)
{
	const char *colon, *h = s;
	size_t hl;
	int64_t p;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= hostlen)
		return -EINVAL;
	if (parse_i64(colon + 1, 1, 65535, &p) < 0)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	*port = (uint16_t)p;
	return 0;
}

bool hostport_is_wildcard(const char *s)
{
	char host[256];
	uint16_t port;
	unsigned char addr[16], zero[16] = { 0 };

	if (parse_hostport(s, host, sizeof(host), &port) < 0)
		return false;
	if (inet_pton(AF_INET, host, addr) == 1)
		return memcmp(addr, zero, 4) == 0;
	return inet_pton(AF_INET6, host, addr) == 1 && memcmp(addr, zero, 16) == 0;
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		abort();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		abort();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		abort();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		abort();
	return p;
}

size_t strv_len(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

void strv_push(char ***v, char *s)
{
	size_t n = strv_len(*v);
	*v = xrealloc(*v, (n + 2) * sizeof(char *));
	(*v)[n] = s;
	(*v)[n + 1] = NULL;
}

void strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}

void sb_reserve(struct strbuf *sb, size_t extra)
{
	if (sb->len + extra + 1 <= sb->cap)
		return;
	size_t cap = sb->cap ? sb->cap : 256;
	while (cap < sb->len + extra + 1)
		cap *= 2;
	sb->buf = xrealloc(sb->buf, cap);
	sb->cap = cap;
}

void sb_add(struct strbuf *sb, const char *s, size_t n)
{
	sb_reserve(sb, n);
	if (n == 0) {
		sb->buf[sb->len] = '\0';
		return;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

/* Formatted straight into the room left, and a second time only when
 * it did not fit: the hot statements are built from many small pieces. */
void sb_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	sb_reserve(sb, 63);
	room = sb->cap - sb->len;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	if ((size_t)n >= room) {
		sb_reserve(sb, (size_t)n);
		va_start(ap, fmt);
		vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	sb->len += (size_t)n;
}

void sb_addu64(struct strbuf *sb, uint64_t v)
{
	char d[20];
	size_t i = sizeof(d);

	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	sb_add(sb, d + i, sizeof(d) - i);
}

void sb_addi64(struct strbuf *sb, int64_t v)
{
	if (v < 0) {
		sb_add(sb, "-", 1);
		sb_addu64(sb, (uint64_t)0 - (uint64_t)v);
		return;
	}
	sb_addu64(sb, (uint64_t)v);
}

void sb_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

void sb_free(struct strbuf *sb)
{
	free(sb->buf);
	sb->buf = NULL;
	sb->len = sb->cap = 0;
}

double mono_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void describe_wait_status(int wstatus, char *buf, size_t len)
{
	if (len == 0)
		return;
	if (WIFEXITED(wstatus)) {
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(wstatus));
	} else if (WIFSIGNALED(wstatus)) {
		/* The number is what scripts match; the name is for people. */
		const char *name = sigabbrev_np(WTERMSIG(wstatus));
		snprintf(buf, len, "killed by signal %d%s%s%s%s", WTERMSIG(wstatus),
			 name ? " (SIG" : "", name ? name : "", name ? ")" : "",
			 WCOREDUMP(wstatus) ? " (core dumped)" : "");
	} else {
		/* Stopped or continued: only seen with WUNTRACED/WCONTINUED. */
		snprintf(buf, len, "changed state (wait status 0x%x)", (unsigned)wstatus);
	}
}

uint64_t random_token(void)
{
	uint64_t t = 0;

	while (t == 0) {
		if (getrandom(&t, sizeof(t), 0) != sizeof(t))
			t = ((uint64_t)getpid() << 32) ^ (uint64_t)(mono_now() * 1e9);
		t &= INT64_MAX;
	}
	return t;
}
