/* libFuzzer target: wake_parse on a UDP datagram, which anyone who can
 * reach [kyud] listen may send. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/wake.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* The supervisor's buffer, and smaller ones, each allocated to its
	 * exact size so that AddressSanitizer sees a write past it. */
	static const size_t lens[] = { WAKE_QUEUE_MAX + 1, 8, 1 };
	const size_t plen = sizeof(WAKE_PREFIX) - 1;

	for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
		char *queue = malloc(lens[k]);
		size_t qlen;

		if (!queue)
			abort();
		if (wake_parse((const char *)data, size, queue, lens[k]) == 0) {
			/* Accepted: the prefix, then the queue name verbatim
			 * (but for one tolerated trailing newline), free of
			 * control bytes, within the limit. */
			qlen = strlen(queue);
			if (size < plen || memcmp(data, WAKE_PREFIX, plen) != 0 ||
			    qlen > WAKE_QUEUE_MAX || qlen >= lens[k] ||
			    memcmp(queue, data + plen, qlen) != 0 ||
			    (plen + qlen != size && !(plen + qlen + 1 == size && data[size - 1] == '\n')))
				__builtin_trap();
			for (size_t i = 0; i < qlen; i++)
				if ((unsigned char)queue[i] < 0x20 || queue[i] == 0x7f)
					__builtin_trap();
		}
		free(queue);
	}
	return 0;
}
