/* Time zones by IANA name, for schedules written in local time ("30 2 * * *"
 * in Europe/Berlin). See tz.h. */
#include "tz.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TZDIR_DEFAULT "/usr/share/zoneinfo"

struct tz {
	bool utc;
	char name[TZ_NAME_MAX + 1];
};

static bool name_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '+' || c == '.' || c == '/' || c == '-';
}

/* The name for an error message: at most TZ_NAME_MAX bytes, anything
 * unprintable as '?', so that a hostile name cannot forge log lines. */
static void printable(char *dst, size_t len, const char *name)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len && i < TZ_NAME_MAX; i++) {
		if (name[i] >= 0x20 && name[i] < 0x7f)
			dst[i] = name[i];
		else
			dst[i] = '?';
	}
	dst[i] = '\0';
	if (name[i] && len > 4 && i >= 3)
		memcpy(dst + i - 3, "...", 3);
}

/* Why name cannot be a zone file below TZDIR, or NULL when its syntax is
 * fine. Dot parts are refused outright: ".." could leave TZDIR, and "."
 * or an empty part only makes a second spelling of a name. */
static const char *bad_syntax(const char *name)
{
	size_t len = strlen(name);
	const char *part;

	if (len == 0)
		return "empty name";
	if (len > TZ_NAME_MAX)
		return "name longer than 64 bytes";
	if (name[0] == '/')
		return "a path, not a zone name such as Europe/Berlin";
	for (size_t i = 0; i < len; i++)
		if (!name_byte((unsigned char)name[i]))
			return "characters other than A-Z a-z 0-9 _ + . / -";
	for (part = name;; part++) {
		size_t n = strcspn(part, "/");

		if (n == 0)
			return "empty part between slashes";
		if ((n == 1 && part[0] == '.') || (n == 2 && part[0] == '.' && part[1] == '.'))
			return "\".\" or \"..\" part";
		part += n;
		if (!*part)
			return NULL;
	}
}

/* 0 when $TZDIR/name is a regular file that starts like a TZif file. */
static int check_file(const char *name, char *err, size_t errlen, const char *shown)
{
	const char *dir = getenv("TZDIR");
	char path[PATH_MAX], magic[4];
	struct stat st;
	int fd, n;

	if (!dir || !*dir)
		dir = TZDIR_DEFAULT;
	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		snprintf(err, errlen, "time zone \"%s\": TZDIR path too long", shown);
		return -1;
	}
	/* O_NONBLOCK: a FIFO planted under TZDIR must not hang the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			snprintf(err, errlen,
				 "time zone \"%s\": not found in %s (is tzdata installed?)", shown,
				 dir);
		else
			snprintf(err, errlen, "time zone \"%s\": %s: %s", shown, path,
				 strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "time zone \"%s\": %s is not a regular file", shown, path);
		close(fd);
		return -1;
	}
	n = (int)read(fd, magic, sizeof(magic));
	close(fd);
	if (n != (int)sizeof(magic) || memcmp(magic, "TZif", 4) != 0) {
		snprintf(err, errlen, "time zone \"%s\": %s is not a TZif zone file", shown, path);
		return -1;
	}
	return 0;
}

int tz_open(struct tz **out, const char *name, char *err, size_t errlen)
{
	char shown[TZ_NAME_MAX + 1];
	const char *why;
	struct tz *z;
	bool utc = strcmp(name, "UTC") == 0 || strcmp(name, "Etc/UTC") == 0;

	*out = NULL;
	printable(shown, sizeof(shown), name);
	if (!utc) {
		why = bad_syntax(name);
		if (why) {
			snprintf(err, errlen, "time zone \"%s\": %s", shown, why);
			return -1;
		}
		if (check_file(name, err, errlen, shown) != 0)
			return -1;
	}
	z = calloc(1, sizeof(*z));
	if (!z) {
		snprintf(err, errlen, "time zone \"%s\": out of memory", shown);
		return -1;
	}
	z->utc = utc;
	memcpy(z->name, name, strlen(name) + 1);
	*out = z;
	return 0;
}

void tz_free(struct tz *z)
{
	free(z);
}

const char *tz_name(const struct tz *z)
{
	return z->name;
}

bool tz_is_utc(const struct tz *z)
{
	return z->utc;
}

int tz_offset(const struct tz *z, int64_t t)
{
	char saved[256];
	const char *old;
	time_t tt = (time_t)t;
	struct tm tm;
	bool ok;

	if (z->utc || (int64_t)tt != t)
		return 0;
	/* Keep the caller's TZ to put back. A value too long for the buffer
	 * (no real zone has one) is kept by pointer: glibc's setenv never
	 * frees a string it replaces, since a getenv caller may hold it. */
	old = getenv("TZ");
	if (old && strlen(old) < sizeof(saved))
		old = memcpy(saved, old, strlen(old) + 1);
	if ((!old || strcmp(old, z->name) != 0) && setenv("TZ", z->name, 1) != 0)
		return 0; /* out of memory: nothing was changed */
	/* localtime_r alone would keep using the zone glibc loaded before;
	 * tzset reloads only when TZ differs from that one. */
	tzset();
	ok = localtime_r(&tt, &tm) != NULL;
	if (!old)
		unsetenv("TZ");
	else if (strcmp(old, z->name) != 0)
		setenv("TZ", old, 1);
	return ok ? (int)tm.tm_gmtoff : 0;
}
