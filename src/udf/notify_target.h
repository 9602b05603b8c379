/*
 * notify_target: where kyu_notify's datagrams go. A target is a numeric
 * address and port, parsed without DNS; the datagrams leave by one shared
 * non-blocking UDP socket per address family for the whole server process.
 * What may be sent to (the defaults and the allow file) is kyu_notify.c's.
 */
#ifndef KYU_UDF_NOTIFY_TARGET_H
#define KYU_UDF_NOTIFY_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define KYU_NOTIFY_DEFAULT_PORT 7711
/* "[" + the longest IPv6 text with a scope id + "]:65535", rounded up. */
#define KYU_NOTIFY_TARGET_MAX 128

struct kyu_target {
	struct sockaddr_storage addr;
	socklen_t len;
};

/* kyud's default listen address: 127.0.0.1:7711 and [::1]:7711. */
void notify_default_targets(struct kyu_target *v4, struct kyu_target *v6);

/* Parses "a.b.c.d:port" or "[v6]:port" (text of length len, not
 * NUL-terminated). Returns 0 or -EINVAL. */
__attribute__((warn_unused_result)) int notify_parse_target(const char *text, size_t len,
							    struct kyu_target *ret);

bool notify_same_target(const struct kyu_target *a, const struct kyu_target *b);

/* The shared socket for the family, made on first use; -1 if it cannot be
 * had (no IPv6 on this host, out of descriptors): the caller does not send. */
int notify_socket(int family);

/* Sends one datagram without waiting; true if the kernel took it. */
bool notify_send(const struct kyu_target *t, const char *payload, size_t n);

/* Closes the shared sockets: only once no call can run (the library's
 * unload). */
void notify_sockets_close(void);

#endif
