/* Sockets on numeric addresses: what the metrics listener and the wake-up
 * datagrams (kyud's listener, kyu's and the dashboard's senders) share.
 * Numeric only: the supervisor binds before anything could resolve a
 * name, and a sender must reach the very address a daemon binds. */
#ifndef KYU_NET_H
#define KYU_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <netdb.h>

#include "attr.h"

/* A socket of type (SOCK_STREAM or SOCK_DGRAM, close-on-exec, | flags)
 * for hostport, ADDRESS:PORT; *ai is its address (passive: to bind), the
 * caller's to freeaddrinfo. Returns the descriptor, or -EINVAL (a bad
 * address) or -errno with err naming what ("metrics address '...' is not
 * ADDRESS:PORT", "TCP socket for ...: why"); *ai is then NULL. */
KYU_MUSTCHECK int net_socket(const char *what, const char *hostport, int type, int flags,
			     bool passive, struct addrinfo **ai, char *err, size_t errlen);

#endif
