/* A worker process: its own database connection, a libev loop, up to
 * `slots` running jobs. Started by the supervisor as
 * `kyud --worker N --config-fd 4 -c FILE`. */
#ifndef KYU_WORKER_H
#define KYU_WORKER_H

#include "common/attr.h"
#include "common/config.h"

/* Takes ownership of *cfg, the configuration the supervisor handed over
 * (parsed by kyud/main.c from --config-fd). daemon_id is the daemon's token
 * (--daemon-id), under which worker 1 keeps the daemon's row of
 * kyu_daemons (registry.h); NULL: no row (a worker started by hand). Runs
 * until told to stop (or the supervisor goes away); returns the exit
 * status for the process. */
KYU_MUSTCHECK int worker_main(int index, struct kyu_config *cfg, const char *daemon_id);

#endif
