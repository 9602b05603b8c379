/* The metrics process: serves GET /metrics over HTTP (libmicrohttpd, driven
 * by its own libev loop) from the scoreboard and from per-queue figures it
 * reads from the table at most once per [kyud] metrics_interval.
 *
 * A process of its own, started and restarted by the supervisor like a
 * worker: the supervisor neither parses HTTP nor touches the database, and
 * a slow or hostile scraper can delay nothing but this process. It holds
 * no capability (dropped at start), only the listening socket the
 * supervisor bound, a read-only view of the scoreboard, and one database
 * connection opened when a scrape needs it. */
#ifndef KYU_METRICSD_H
#define KYU_METRICSD_H

#include <stddef.h>

#include "config.h"

/* The descriptors the supervisor hands the metrics process (after the
 * control socket, 3, and the configuration, 4): the scoreboard (read-only)
 * and the listening socket. */
#define METRICS_BOARD_FD 5
#define METRICS_LISTEN_FD 6

/* A listening TCP socket on the numeric "ADDR:PORT" or "[V6]:PORT" (the
 * supervisor's, so that a taken address is an error at start). Returns the
 * descriptor (close-on-exec) or -errno with a message naming the address
 * in err. */
int metrics_listen(const char *hostport, char *err, size_t errlen);

/* Entry point of `kyud --metrics`; takes ownership of cfg. Returns the
 * process exit status. */
int metricsd_main(struct kyu_config *cfg);

#endif
