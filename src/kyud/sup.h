/* The supervisor: the master process of kyud and its libev loop. It starts
 * and restarts the workers, turns wake-up hints and the fallback poll into
 * "acquire now" messages, runs the metrics process, tells systemd how it
 * goes, and handles TERM/INT (stop) and HUP (reload). It never touches
 * jobs or the database itself.
 *
 * Its rooms, one job each; sup.c holds what ties them together: the start,
 * the stop, the reload, and the children's events, each handed to the room
 * that owns the child.
 *   child.c        fork and exec of a child, its control socket, its watchers
 *   pool.c         the worker processes: start, restart with backoff, retire
 *   fanout.c       which worker is woken when (hints, the poll timer)
 *   listener.c     the UDP socket of wake-up datagrams
 *   metricsproc.c  kyud-metrics: its socket, its start and restarts
 *   sweep.c        the jobs left running by a worker that died
 *   sdnotify.c     sd_notify and the watchdog; kills a silent worker
 *   ratelimit.c    the token bucket of [kyud] wake_rate */
#ifndef KYU_SUP_H
#define KYU_SUP_H

#include "common/config.h"

/* Takes ownership of cfg and of cfg_fd, the sealed memfd of the bytes cfg
 * was parsed from (config_load_memfd), which every worker is handed.
 * Returns the process exit status: 0 once stopped by TERM/INT, 78 when a
 * worker refused its configuration, 1 when it could not start. */
int sup_main(struct kyu_config *cfg, int cfg_fd);

#endif
