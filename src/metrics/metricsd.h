/* The HTTP server of kyud-metrics, the metrics process: serves GET
 * /metrics over HTTP (libmicrohttpd, driven by its own libev loop) from the
 * scoreboard and from per-queue figures it reads from the table at most
 * once per [kyud] metrics_interval.
 *
 * Which metrics file is which:
 *   metrics/main.c        kyud-metrics' main: options, configuration
 *   metrics/metricsd.c    this: the process's work, HTTP and the table
 *   common/metrics.c      the text served (the Prometheus exposition,
 *                         pure), and metrics_listen for the supervisor
 *   kyud/metricsproc.c    the supervisor's side: binds the socket, starts
 *                         and restarts this process
 *
 * Started and restarted by the supervisor like a worker: the supervisor
 * neither parses HTTP nor touches the database, and a slow or hostile
 * scraper can delay nothing but this process. It holds no capability
 * (dropped at start), only the listening socket the supervisor bound, a
 * read-only view of the scoreboard, and one database connection opened
 * when a scrape needs it. A program of its own rather than a mode of kyud:
 * only it loads libmicrohttpd and what that links (GnuTLS and nine more
 * libraries, measured 2.6 MiB more resident memory in each process that
 * maps them). */
#ifndef KYU_METRICSD_H
#define KYU_METRICSD_H

#include <stddef.h>

#include "common/config.h"

/* The descriptors the supervisor hands the metrics process (after the
 * control socket, 3, and the configuration, 4): the scoreboard (read-only)
 * and the listening socket. */
#define METRICS_BOARD_FD 5
#define METRICS_LISTEN_FD 6

/* The process's work, once kyud-metrics (src/metrics/main.c) has its
 * configuration; takes ownership of cfg. Returns the exit status. */
int metricsd_main(struct kyu_config *cfg);

#endif
