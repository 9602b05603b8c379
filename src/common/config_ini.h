/* kyu.ini's syntax: inih reads the file, held to stricter rules than its
 * own. A line too long for inih's buffer, a NUL byte, and a section
 * header inih would read as another section (text after the ']', a name
 * it would cut short, or one that is not UTF-8) are errors at their own
 * line, where inih would go on with something else than what is written.
 * Kept apart from config.c, which knows the keys, because this knows only lines,
 * sections and keys; config.c is its only user.
 *
 * Every message about the file has one of two forms, "NAME:LINE: [section]
 * key = 'value': reason" or "NAME:LINE: reason" (kyu.ini(5)). */
#ifndef KYU_CONFIG_INI_H
#define KYU_CONFIG_INI_H

#include <stdbool.h>
#include <stddef.h>
#include "attr.h"

/* Called with each key of the file, in order, and the line it is on.
 * Returns NULL, or why the key or its value is refused: the parse then
 * fails with that reason (and calls no more). */
typedef const char *config_ini_key_fn(void *arg, const char *section, const char *name,
				      const char *value, int line);

/* Parse len bytes of the file name (for messages; no terminator needed).
 * Returns 0, or -1 with the first problem in err. */
KYU_MUSTCHECK int config_ini_parse(const char *name, const char *buf, size_t len,
				   config_ini_key_fn *key, void *arg, char *err, size_t errlen);

/* A message about a value at line of file, or about the line itself when
 * name is NULL (section and value are then unused). */
void config_ini_error(char *err, size_t errlen, const char *file, int line, const char *section,
		      const char *name, const char *value, const char *reason);

#endif
