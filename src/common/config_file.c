/* Reading a configuration file, and sealing it for workers
 * (config_file.h). */
#include "config_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* Anything bigger is not a configuration file, and would only cost memory. */
#define CONFIG_MAX_BYTES (1024 * 1024)

/* What a file that is not a regular one is, for the message refusing it. */
static const char *file_kind(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFDIR:
		return "a directory";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	default:
		return "not a regular file";
	}
}

/* Read fd from offset 0 to its end into a NUL-terminated buffer. Only a
 * regular file (or memfd) is read: a FIFO without a writer or a terminal
 * would block kyud --check-config and kyu for ever, a directory used to
 * read as an empty file, and a device may never end. */
int config_file_read_fd(int fd, const char *name, char **out, size_t *outlen, char *err,
			size_t errlen)
{
	struct strbuf sb = { 0 };
	struct stat st;

	if (fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat: %s", name, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: is %s, not a regular file", name, file_kind(st.st_mode));
		return -1;
	}
	for (;;) {
		ssize_t n;
		sb_reserve(&sb, 4096);
		n = pread(fd, sb.buf + sb.len, sb.cap - sb.len - 1, (off_t)sb.len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "%s: cannot read: %s", name, strerror(errno));
			goto fail;
		}
		if (n == 0)
			break;
		sb.len += (size_t)n;
		if (sb.len > (size_t)CONFIG_MAX_BYTES) {
			snprintf(err, errlen, "%s: larger than %d bytes: not a configuration file",
				 name, CONFIG_MAX_BYTES);
			goto fail;
		}
	}
	sb.buf[sb.len] = '\0';
	*out = sb.buf;
	*outlen = sb.len;
	return 0;
fail:
	sb_free(&sb);
	return -1;
}

int config_file_read(const char *path, char **out, size_t *outlen, unsigned *mode, char *err,
		     size_t errlen)
{
	struct stat st;
	/* O_NONBLOCK: opening a FIFO without a writer would block before
	 * config_file_read_fd could look at what it is; on a regular file it
	 * changes nothing. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), r;

	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	r = config_file_read_fd(fd, path, out, outlen, err, errlen);
	/* The mode of the file read, not of whatever the path names later. */
	if (r == 0 && fstat(fd, &st) < 0) {
		snprintf(err, errlen, "%s: cannot stat: %s", path, strerror(errno));
		config_file_free(*out, *outlen);
		r = -1;
	}
	if (r == 0)
		*mode = (unsigned)st.st_mode & 07777;
	close(fd);
	return r;
}

void config_file_free(char *buf, size_t len)
{
	if (!buf)
		return;
	explicit_bzero(buf, len);
	free(buf);
}

int config_file_check_secret(const char *name, unsigned mode, char *err, size_t errlen)
{
	if (!(mode & S_IROTH))
		return 0;
	snprintf(err, errlen,
		 "%s: holds [database] password, but its mode %04o lets every local user read "
		 "it: refused. Make it private: chmod 600 %s, or chmod 640 and give it to the "
		 "group that runs kyud (chown root:kyu)",
		 name, mode, name);
	return -1;
}

/* A memfd holding exactly buf, sealed so that neither the supervisor nor a
 * worker can change it afterwards: every worker parses the same bytes. */
int config_file_seal(const char *buf, size_t len, char *err, size_t errlen)
{
	int fd = memfd_create("kyu.ini", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t done = 0;

	if (fd < 0) {
		snprintf(err, errlen, "memfd_create for the configuration: %s", strerror(errno));
		return -1;
	}
	while (done < len) {
		ssize_t n = write(fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(err, errlen, "writing the configuration to a memfd: %s",
				 strerror(errno));
			goto fail;
		}
		done += (size_t)n;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		snprintf(err, errlen, "sealing the configuration memfd: %s", strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}
