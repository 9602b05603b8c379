/* The bytes of a configuration file: read whole, from a path or a
 * descriptor, refusing what is not a regular file or is too big to be
 * one; and a sealed memfd of them, for workers. Cut from config.c, which
 * turns the bytes into a configuration, because reading them is file
 * handling that knows nothing of the keys. config.c (config_load*) is its
 * only user. */
#ifndef KYU_CONFIG_FILE_H
#define KYU_CONFIG_FILE_H

#include <stddef.h>

/* Read fd from offset 0 to its end (pread: the offset is shared with
 * whoever else holds fd) into a malloc'd NUL-terminated buffer, *out of
 * *outlen bytes. name is for messages. Returns 0, or -1 with
 * "NAME: reason" in err. */
int config_file_read_fd(int fd, const char *name, char **out, size_t *outlen, char *err, size_t errlen);
/* The same for the file at path, opened close-on-exec. */
int config_file_read(const char *path, char **out, size_t *outlen, char *err, size_t errlen);

/* A new memfd (close-on-exec) holding exactly buf's len bytes, sealed
 * against any change. Returns it, or -1 with why in err. */
int config_file_seal(const char *buf, size_t len, char *err, size_t errlen);

#endif
