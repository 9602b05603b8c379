/* What this process may do: its ids, its nice and the capabilities that
 * let it switch user and group, raise limits or lower nice; and sealing
 * them so that nothing it executes inherits any. Kept apart from domain.c
 * because it is the process's own state, read through libcap, not a
 * section's. domain.h includes this header; config_check_system reads
 * it (kyud, at start-up and on reload) and a worker (src/worker) seals
 * through domain_privs_seal. */
#ifndef KYU_DOMAIN_PRIVS_H
#define KYU_DOMAIN_PRIVS_H

#include <stdbool.h>
#include <sys/types.h>

/* What this process may do, read once: its uid, and whether it holds the
 * capabilities to switch user, group and to raise limits or lower nice. */
struct domain_privs {
	uid_t uid;
	gid_t gid;
	int nice; /* kyud's own */
	bool setuid, setgid, sys_resource, sys_nice;
};
void domain_privs_get(struct domain_privs *p);

/* Clear the ambient and inheritable capability sets: a process that
 * holds CAP_SETUID through them (the systemd drop-in in kyud(8)) keeps it
 * for itself, but nothing it executes inherits it (domain_privs_seal). */
void domain_privs_seal(void);

#endif
