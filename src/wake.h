/* Wake-up hints: UDP datagrams "kyu:QUEUE" that tell the supervisor a job
 * may be due. They carry no authority: at most they cause one claim. */
#ifndef KYU_WAKE_H
#define KYU_WAKE_H

#include <stdbool.h>
#include <stddef.h>

#define WAKE_PREFIX "kyu:"
#define WAKE_QUEUE_MAX 64

/* Parse one datagram. Returns 0 and the queue name (empty: any queue) or
 * -1 when it is not a kyu wake-up. */
int wake_parse(const char *buf, size_t n, char *queue, size_t queue_len);

/* Bind a non-blocking UDP socket to "ADDR:PORT". Returns fd or -errno. */
int wake_listen(const char *hostport, char *err, size_t errlen);

/* Token bucket: at most rate events per second, bursts up to rate. */
struct rate_limit {
	double rate, tokens, last;
};
void rate_init(struct rate_limit *rl, double rate, double now);
bool rate_allow(struct rate_limit *rl, double now);

#endif
