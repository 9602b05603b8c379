/* kyu-web's HTTP server (web.c): web_serve, which the program's main
 * (main.c) calls once it has checked the [web] section and opened the
 * listening socket. It serves the dashboard (kyu web): the embedded page
 * (assets.h), the JSON endpoints (webapi.h) and the actions, behind the
 * rules of guard.h.
 *
 * libmicrohttpd with a pool of threads (WEB_THREADS, web.c), each
 * serving its share of the connections on epoll; a request borrows one of
 * as many database connections (webapi.h) while it is answered, so that
 * a slow page holds up only its own thread's connections and the
 * database sees a bounded number of sessions. A connection must send its
 * request within seconds and counts among a bounded number of unproven
 * ones until a request passes the rules of guard.h (the password): a
 * client without the password can neither hold the server's connections
 * nor, by failing, lock out the owner (guard_fails).
 *
 *   GET  /  /index.html  /app.js  /style.css         the page
 *   GET  /api/session                                 CSRF token, read-only
 *   GET  /api/overview|running|jobs|retrying|job|schedules|locks|daemons
 *   POST /api/job/cancel|retry|run-now|delete?id=ID  (not when read-only)
 *   POST /api/queue/pause|resume?queue=NAME
 *
 * A POST needs the header X-Kyu-CSRF with the token of /api/session: a
 * page of another site can neither read that token (no CORS headers are
 * ever sent) nor send a custom header without a preflight that is never
 * granted. A browser's Origin and Sec-Fetch-Site headers, when present,
 * must name this site as well. */
#ifndef KYU_WEB_H
#define KYU_WEB_H

#include <stdbool.h>

#include "common/attr.h"
#include "common/config.h"

struct web_opts {
	int listen_fd;      /* bound and listening: TCP or a Unix socket */
	const char *listen; /* for messages: "127.0.0.1:7780" or a socket's path */
	bool read_only;
	/* Both set: basic authentication. Neither: none, and then only a
	 * Host header naming localhost or an address is served. */
	const char *user;
	const char *password_hash;
	/* PEM text, both or neither: HTTPS. */
	const char *tls_cert;
	const char *tls_key;
};

/* Serve until SIGTERM or SIGINT. Returns the exit status. */
KYU_MUSTCHECK int web_serve(const struct kyu_config *cfg, const struct web_opts *o);

#endif
