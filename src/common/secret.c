/* Keeping the password to the process (secret.h). */
#include "secret.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

int secret_no_dump(char *err, size_t errlen)
{
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
		snprintf(err, errlen, "prctl(PR_SET_DUMPABLE, 0): %s", strerror(errno));
		return -1;
	}
	return 0;
}

void secret_free(char *s)
{
	if (!s)
		return;
	/* explicit_bzero: a memset before free may be optimised away. */
	explicit_bzero(s, strlen(s));
	free(s);
}
