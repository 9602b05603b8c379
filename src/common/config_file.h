/* The bytes of a configuration file: read whole, from a path or a
 * descriptor, refusing what is not a regular file or is too big to be
 * one; and a sealed memfd of them, for workers. Kept apart from config.c, which
 * turns the bytes into a configuration, because reading them is file
 * handling that knows nothing of the keys. config.c (config_load*) is its
 * only user. */
#ifndef KYU_CONFIG_FILE_H
#define KYU_CONFIG_FILE_H

#include <stddef.h>
#include "attr.h"

/* Read fd from offset 0 to its end (pread: the offset is shared with
 * whoever else holds fd) into a malloc'd NUL-terminated buffer, *out of
 * *outlen bytes. name is for messages. Returns 0, or -1 with
 * "NAME: reason" in err. */
KYU_MUSTCHECK int config_file_read_fd(int fd, const char *name, char **out, size_t *outlen,
				      char *err, size_t errlen);
/* The same for the file at path, opened close-on-exec; its permission
 * bits, as fstat saw them on the descriptor read, in *mode. */
KYU_MUSTCHECK int config_file_read(const char *path, char **out, size_t *outlen, unsigned *mode,
				   char *err, size_t errlen);
/* Overwrite the len bytes at buf, then free it: the file's bytes may hold
 * the database password. NULL does nothing. */
void config_file_free(char *buf, size_t len);

/* Whether a file of that mode may hold the database password: not when
 * every local user may read it (the other-read bit). Group read is how
 * the file is shared with kyud's own group (root:kyu 0640) or the group
 * of a client.ini's users, and is left to the administrator. Returns 0,
 * or -1 with "NAME: why, and the fix" in err. */
KYU_MUSTCHECK int config_file_check_secret(const char *name, unsigned mode, char *err,
					   size_t errlen);

/* A new memfd (close-on-exec) holding exactly buf's len bytes, sealed
 * against any change. Returns it, or -1 with why in err. */
KYU_MUSTCHECK int config_file_seal(const char *buf, size_t len, char *err, size_t errlen);

#endif
