/* The database servers a connection may use: `[database] host` (and
 * `replica`) name one or several, comma-separated, each optionally with
 * its port. A connection tries them in the order given, so the list is a
 * preference, not a balance (kyud(8), "Galera"). Used within common/:
 * config.c checks the lists, db_session.c connects to them; every
 * program gets there through config.h and db.h. */
#ifndef KYU_HOSTS_H
#define KYU_HOSTS_H

#include <stddef.h>
#include "attr.h"

#define HOSTS_MAX 16

struct host_port {
	char name[256];
	unsigned port;
};

/* Split list ("a, b:3307, [::1]:3308, ::1") into out[0..*n). A name
 * without a port gets default_port; a bare IPv6 address (more than one
 * colon, no brackets) is a name without a port. Returns 0, or -EINVAL for
 * an empty entry, a bad port or a name too long, -E2BIG for more than max
 * entries; an empty list gives *n = 0. */
KYU_MUSTCHECK int hosts_parse(const char *list, unsigned default_port, struct host_port *out,
			      int max, int *n);

#endif
