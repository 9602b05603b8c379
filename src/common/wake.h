/* Wake-up hints: UDP datagrams "kyu:QUEUE" that tell the supervisor a job
 * may be due. They carry no authority: at most they cause one claim.
 * Used by kyud's supervisor (src/kyud), which listens, and kyu (src/cli:
 * kyu submit and kyu wake send them, kyu check tries the address). */
#ifndef KYU_WAKE_H
#define KYU_WAKE_H

#include <stdbool.h>
#include <stddef.h>
#include "attr.h"

#define WAKE_PREFIX "kyu:"
/* Bytes: the queue column holds 64 characters of utf8mb4, up to 4 bytes each. */
#define WAKE_QUEUE_MAX 256

/* The cancel hint, "kyu:" WAKE_CANCEL: a running job's row may have been
 * cancelled. A daemon that hears it makes its workers renew their leases
 * now, which is where a cancelled row is found and its process stopped,
 * and takes it as a wake-up for any queue besides (the cancelled job
 * freed its slot, its key, its dependents). CAN (0x18): no queue wake-up
 * can carry it, since wake_parse refuses control characters, so daemons
 * from before it ignore it as malformed; and the triggers of
 * sql/notify.sql send it through kyu_notify as they send a queue's name. */
#define WAKE_CANCEL "\x18"
/* Whether the datagram is the cancel hint (a trailing newline tolerated). */
bool wake_is_cancel(const char *buf, size_t n);

/* Parse one datagram. Returns 0 and the queue name (empty: any queue) or
 * -1 when it is not a kyu wake-up. */
KYU_MUSTCHECK int wake_parse(const char *buf, size_t n, char *queue, size_t queue_len);

/* A UDP socket for the numeric address "ADDR:PORT" or "[V6]:PORT". When
 * listening, bound to it and non-blocking (the supervisor's); otherwise
 * connected to it, so that send() delivers a hint there (kyu's). Returns
 * the descriptor (close-on-exec), or -errno with a message naming the
 * address in err. */
KYU_MUSTCHECK int wake_socket(const char *hostport, bool listening, char *err, size_t errlen);

#endif
