/* libFuzzer target: cmdline_split on a job's command column. A line it
 * calls plain runs without the shell, so a wrong "plain" changes what the
 * job does: check what the header promises of every plain line. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "worker/cmdline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The column arrives as a C string: a NUL ends it. */
	char *line = malloc(size + 1), **argv = (char **)&argv;
	size_t words = 0;

	if (!line)
		abort();
	memcpy(line, data, size);
	line[size] = '\0';
	if (!cmdline_split(line, &argv)) {
		if (argv)
			__builtin_trap();
		free(line);
		return 0;
	}
	if (!argv || !argv[0] || strchr(argv[0], '=') || argv[0][0] == '%')
		__builtin_trap();
	for (char **w = argv; *w; w++, words++) {
		/* Words are non-empty, hold no blank, start with no '=', and
		 * hold no byte any shell would treat specially. */
		if (!**w || strpbrk(*w, " \t\n\r\"'\\$`~{}<>|&;*?[]#()!^") || **w == '=')
			__builtin_trap();
		for (const char *p = *w; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				__builtin_trap();
	}
	/* Together the words are the line's bytes less its blanks. */
	{
		size_t nonblank = 0, total = 0;
		for (const char *p = line; *p; p++)
			nonblank += *p != ' ' && *p != '\t';
		for (char **w = argv; *w; w++)
			total += strlen(*w);
		if (total != nonblank || words == 0)
			__builtin_trap();
	}
	strv_free(argv);
	free(line);
	return 0;
}
