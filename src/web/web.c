/* kyu-web's HTTP server: web_serve, which the program's main (main.c)
 * calls once it has checked the [web] section. See web.h. */
#include "web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

#include <jansson.h>
#include <microhttpd.h>

#include "common/action.h"
#include "common/log.h"
#include "common/util.h"
#include "assets.h"
#include "guard.h"
#include "webapi.h"

/* Threads that answer requests, each with its own database connection
 * (webapi.h): a page that waits on the database holds up only the
 * connections its thread serves, and the database sees at most this many
 * sessions from the dashboard. */
#define WEB_THREADS 8
/* Viewers, each browser with a handful of connections; the file limit is
 * raised to fit (connections, database sessions, the threads' own). */
#define MAX_CONNECTIONS 1024
#define SPARE_FILES 64
/* Connections that have not yet carried a request with the right
 * credentials (guard_conns): beyond this many, the oldest is shut down. */
#define MAX_UNPROVEN 256
/* A connection must send a complete request within this many seconds of
 * quiet: a browser sends its headers in milliseconds. Once it has proved
 * itself, it may stay idle longer between a page's requests. */
#define UNPROVEN_TIMEOUT 5 /* seconds */
#define PROVEN_TIMEOUT 60  /* seconds */
/* Only for a listener beyond loopback and not behind a proxy, where an
 * address is one client: one browser opens six at most. On loopback or a
 * socket every local user shares the address, and the limit would be
 * theirs to exhaust for the owner. */
#define MAX_CONNECTIONS_PER_ADDRESS 8
/* No request of the dashboard has a body. */
#define MAX_BODY 4096

#define CSRF_HEADER "X-Kyu-CSRF"

/* The page runs only its own script and style sheet: no inline script,
 * no other site, no frames, no form posts anywhere. */
#define CSP                                                                                        \
	"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "      \
	"form-action 'none'"

/* The threads' database connections: a request borrows one while it is
 * answered. As many as threads, so that none waits in practice. */
struct web_apis {
	pthread_mutex_t lock;
	pthread_cond_t freed;
	struct webapi *all[WEB_THREADS];
	struct webapi *idle[WEB_THREADS];
	unsigned n_idle;
};

struct web {
	const struct kyu_config *cfg;
	const struct web_opts *o;
	struct web_apis apis;
	struct guard_auth *auth; /* NULL: no password */
	struct guard_fails *fails;
	struct guard_conns *conns;
	char csrf[65];
};

/* What on_request keeps between its calls for one request: that the
 * headers have been seen (never written: shared by all threads). */
static char request_started;

static struct webapi *api_borrow(struct web_apis *a)
{
	struct webapi *api;

	pthread_mutex_lock(&a->lock);
	while (a->n_idle == 0)
		pthread_cond_wait(&a->freed, &a->lock);
	api = a->idle[--a->n_idle];
	pthread_mutex_unlock(&a->lock);
	return api;
}

static void api_return(struct web_apis *a, struct webapi *api)
{
	pthread_mutex_lock(&a->lock);
	a->idle[a->n_idle++] = api;
	pthread_cond_signal(&a->freed);
	pthread_mutex_unlock(&a->lock);
}

static void add_headers(const struct web *w, struct MHD_Response *resp, const char *type)
{
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(resp, "Content-Security-Policy", CSP);
	MHD_add_response_header(resp, "X-Frame-Options", "DENY");
	MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(resp, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(resp, "Cross-Origin-Resource-Policy", "same-origin");
	/* Job pages hold output and errors: nothing is kept by the browser
	 * or a proxy, the page and its script included (they are small). */
	MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (w->o->tls_cert)
		MHD_add_response_header(resp, "Strict-Transport-Security", "max-age=31536000");
}

static enum MHD_Result send_body(struct web *w, struct MHD_Connection *conn, unsigned status,
				 const char *type, char *body, size_t len,
				 enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
	enum MHD_Result r;

	if (!resp) {
		if (mode == MHD_RESPMEM_MUST_FREE)
			free(body);
		return MHD_NO;
	}
	add_headers(w, resp, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD, POST");
	r = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return r;
}

/* Sends doc (taken over) as the body. */
static enum MHD_Result send_json(struct web *w, struct MHD_Connection *conn, unsigned status,
				 json_t *doc)
{
	/* "</" comes out as "<\/": the text stays inert even if something
	 * ever put it inside HTML. */
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_ESCAPE_SLASH) : NULL;

	json_decref(doc);
	if (!text)
		return MHD_NO;
	return send_body(w, conn, status, "application/json", text, strlen(text),
			 MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result send_error(struct web *w, struct MHD_Connection *conn, unsigned status,
				  const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static enum MHD_Result send_error(struct web *w, struct MHD_Connection *conn, unsigned status,
				  const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return send_json(w, conn, status,
			 json_pack("{s:o}", "error", webapi_text(msg, strlen(msg))));
}

static const char *header(struct MHD_Connection *conn, const char *name)
{
	return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static const char *header_of(void *ctx, const char *name)
{
	return header(ctx, name);
}

static const char *query_arg(void *ctx, const char *name)
{
	return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static void peer_name(struct MHD_Connection *conn, char *buf, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(buf, len, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf,
			  (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  buf, (socklen_t)len);
	else if (sa && sa->sa_family == AF_UNIX)
		snprintf(buf, len, "the socket");
}

static enum MHD_Result send_asset(struct web *w, struct MHD_Connection *conn, const char *url)
{
	if (strcmp(url, "/") == 0)
		url = "/index.html";
	for (const struct web_asset *a = web_assets; a->path; a++) {
		if (strcmp(a->path, url) == 0)
			/* The library only reads a persistent buffer; its API
			 * has no const. */
			return send_body(w, conn, MHD_HTTP_OK, a->type, (char *)(uintptr_t)a->data,
					 a->len, MHD_RESPMEM_PERSISTENT);
	}
	return send_error(w, conn, MHD_HTTP_NOT_FOUND, "not found: %s", url);
}

static enum MHD_Result on_get(struct web *w, struct webapi *api, struct MHD_Connection *conn,
			      const char *url)
{
	json_t *doc = NULL;
	unsigned status;

	if (strcmp(url, "/api/session") == 0)
		return send_json(w, conn, MHD_HTTP_OK,
				 json_pack("{s:s, s:b, s:s?, s:s, s:s}", "csrf", w->csrf,
					   "read_only", w->o->read_only, "user", w->o->user,
					   "version", KYU_VERSION, "database", w->cfg->db_name));
	if (strncmp(url, "/api/", 5) != 0)
		return send_asset(w, conn, url);
	status = webapi_get(api, url, query_arg, conn, &doc);
	return send_json(w, conn, status, doc);
}

/* A bulk action's filter for the log: " status=failed queue=mail". */
static const char *bulk_filter_text(struct MHD_Connection *conn, char *buf, size_t len)
{
	static const char *const names[] = { "status", "queue", "q", "since", "until", "cause" };
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && o < len; i++) {
		const char *v = query_arg(conn, names[i]);
		if (v && *v) {
			int n = snprintf(buf + o, len - o, " %s='%s'", names[i], v);
			o += n > 0 ? (size_t)n : 0;
		}
	}
	return buf;
}

static enum MHD_Result on_post(struct web *w, struct webapi *api, struct MHD_Connection *conn,
			       const char *url)
{
	const char *site = header(conn, "Sec-Fetch-Site"), *token = header(conn, CSRF_HEADER);
	const char *name, *target;
	json_t *doc = NULL;
	enum action a = ACT_N;
	enum action_schedule sa = ACT_SCHED_N;
	unsigned status;
	char peer[INET6_ADDRSTRLEN], filter[512];

	bool drain = strcmp(url, "/api/daemon/drain") == 0;

	if (drain)
		name = "drain";
	else if (strncmp(url, "/api/job/", 9) == 0)
		name = url + 9;
	else if (strncmp(url, "/api/jobs/", 10) == 0)
		name = url + 10; /* bulk: the jobs a filter matches */
	else if (strncmp(url, "/api/queue/", 11) == 0)
		name = url + 11;
	else if (strncmp(url, "/api/schedule/", 14) == 0)
		name = url + 14;
	else
		return send_error(w, conn, MHD_HTTP_NOT_FOUND, "not found: POST %s", url);
	/* A schedule's remove stays kyu's (kyu schedule remove): the
	 * dashboard enables, disables and runs. */
	if (!drain &&
	    (url[5] == 's' ? action_schedule_parse(name, &sa) < 0 || sa == ACT_SCHED_REMOVE
			   : action_parse(name, &a) < 0 || action_on_queue(a) != (url[5] == 'q') ||
				     (url[8] == 's' && !action_bulk(a))))
		return send_error(w, conn, MHD_HTTP_NOT_FOUND, "no such action: POST %s", url);
	if (w->o->read_only)
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "read-only: this dashboard was started with --read-only or "
				  "[web] read_only = yes");
	if ((site && strcmp(site, "same-origin") != 0) ||
	    !guard_origin_matches(header(conn, "Origin"), header(conn, MHD_HTTP_HEADER_HOST)))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "refused: the request comes from another site");
	if (!token || !guard_equal(token, w->csrf))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "refused: missing or wrong " CSRF_HEADER
				  " header (reload the page)");
	if (drain) {
		target = query_arg(conn, "id");
		status = webapi_drain(api, target, &doc);
		peer_name(conn, peer, sizeof(peer));
		if (status == MHD_HTTP_OK)
			log_notice("drain daemon '%s' (from %s%s%s)", target, peer,
				   w->o->user ? " as " : "", w->o->user ? w->o->user : "");
		return send_json(w, conn, status, doc);
	} else if (sa != ACT_SCHED_N) {
		target = query_arg(conn, "name");
		status = webapi_schedule_action(api, sa, target, &doc);
	} else if (url[8] == 's') {
		status = webapi_bulk(api, a, query_arg, conn, &doc);
		peer_name(conn, peer, sizeof(peer));
		if (status == MHD_HTTP_OK)
			log_notice("%s %lld jobs matching%s (from %s%s%s)", action_name(a),
				   (long long)json_integer_value(json_object_get(doc, "count")),
				   bulk_filter_text(conn, filter, sizeof(filter)), peer,
				   w->o->user ? " as " : "", w->o->user ? w->o->user : "");
		return send_json(w, conn, status, doc);
	} else {
		target = query_arg(conn, action_on_queue(a) ? "queue" : "id");
		status = webapi_action(api, a, target, &doc);
	}
	peer_name(conn, peer, sizeof(peer));
	/* Who changed what, for whoever wonders later. */
	if (status == MHD_HTTP_OK)
		log_notice("%s %s '%s' (from %s%s%s)",
			   sa != ACT_SCHED_N ? action_schedule_name(sa) : action_name(a),
			   sa != ACT_SCHED_N    ? "schedule"
			   : action_on_queue(a) ? "queue"
						: "job",
			   target, peer, w->o->user ? " as " : "", w->o->user ? w->o->user : "");
	return send_json(w, conn, status, doc);
}

static enum MHD_Result ask_password(struct web *w, struct MHD_Connection *conn)
{
	static const char body[] = "{\"error\":\"authentication required\"}";
	struct MHD_Response *resp = MHD_create_response_from_buffer(
		sizeof(body) - 1, (char *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	add_headers(w, resp, "application/json");
	r = MHD_queue_basic_auth_fail_response(conn, "kyu", resp);
	MHD_destroy_response(resp);
	return r;
}

static long mono_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec;
}

/* 429 with Retry-After: too many wrong passwords (guard_fails). */
static enum MHD_Result send_wait(struct web *w, struct MHD_Connection *conn, long wait)
{
	char msg[160], secs[24];
	struct MHD_Response *resp;
	enum MHD_Result r;

	snprintf(msg, sizeof(msg), "{\"error\":\"too many failed logins: try again in %ld s\"}",
		 wait);
	snprintf(secs, sizeof(secs), "%ld", wait);
	resp = MHD_create_response_from_buffer(strlen(msg), msg, MHD_RESPMEM_MUST_COPY);
	if (!resp)
		return MHD_NO;
	add_headers(w, resp, "application/json");
	MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, secs);
	r = MHD_queue_response(conn, MHD_HTTP_TOO_MANY_REQUESTS, resp);
	MHD_destroy_response(resp);
	return r;
}

static struct guard_conn *conn_entry(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

static int conn_fd(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);

	return ci ? ci->connect_fd : -1;
}

static const struct sockaddr *conn_peer(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return ci ? ci->client_addr : NULL;
}

/* Basic authentication: NULL when the credentials match, else the
 * answer to send (401, or 429 while the client must wait). The pair that
 * matched last is recognised first, at the cost of a digest: an owner
 * who is in stays in, whatever others try. A new pair is checked (crypt)
 * unless its client must wait, by its own failures or, when it has failed
 * lately, for the budget of all clients (guard.h). */
static enum MHD_Result check_password(struct web *w, struct MHD_Connection *conn, bool *ok)
{
	unsigned char key[GUARD_KEY_MAX];
	char *pass = NULL, *user = MHD_basic_auth_get_username_password(conn, &pass);
	enum MHD_Result r = MHD_YES;
	size_t klen;
	long now, wait;

	*ok = guard_auth_cached(w->auth, user, pass);
	/* A request without credentials is a browser asking which scheme:
	 * not a failure. */
	if (*ok || (!user && !pass))
		goto out;
	klen = guard_peer_key(conn_fd(conn), conn_peer(conn), key);
	now = mono_seconds();
	wait = guard_fails_wait(w->fails, key, klen, now);
	if (wait == 0)
		wait = guard_fails_storm_wait(w->fails, key, klen, now);
	/* Answered before any crypt: guessing costs the guesser time, not
	 * the server. */
	if (wait > 0) {
		r = send_wait(w, conn, wait);
		goto done;
	}
	*ok = guard_auth_check(w->auth, user, pass);
	guard_fails_record(w->fails, key, klen, now, *ok);
out:
	if (!*ok)
		r = ask_password(w, conn);
done:
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	MHD_free(user);
	return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct web *w = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
		   strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	struct webapi *api;
	enum MHD_Result r;
	(void)version;
	(void)upload_data;

	if (!*req_cls) {
		const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		*req_cls = &request_started;
		/* In a request until on_completed: not shut down meanwhile. */
		guard_conns_busy(w->conns, conn_entry(conn), true);
		/* Answered before the body is read; the connection closes. */
		if ((cl && strtoull(cl, NULL, 10) > MAX_BODY) ||
		    header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return send_error(w, conn, MHD_HTTP_CONTENT_TOO_LARGE,
					  "requests have no body here");
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!w->auth && !guard_host_is_local(header(conn, MHD_HTTP_HEADER_HOST)))
		return send_error(
			w, conn, MHD_HTTP_FORBIDDEN,
			"refused: Host must be localhost or a loopback address when [web] sets no "
			"password (DNS rebinding)");
	if (!w->auth && guard_is_proxied(header_of, conn))
		return send_error(
			w, conn, MHD_HTTP_FORBIDDEN,
			"refused: a request through a proxy needs a password: set [web] user, "
			"password_hash and behind_proxy = yes");
	if (w->auth) {
		bool ok;
		r = check_password(w, conn, &ok);
		if (!ok)
			return r;
	}
	/* Passed: the connection is the server's to keep a while. */
	if (guard_conns_prove(w->conns, conn_entry(conn)))
		(void)MHD_set_connection_option(conn, MHD_CONNECTION_OPTION_TIMEOUT,
						(unsigned)PROVEN_TIMEOUT);
	api = api_borrow(&w->apis);
	if (get)
		r = on_get(w, api, conn, url);
	else if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
		r = on_post(w, api, conn, url);
	else
		r = send_error(w, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: %s",
			       method);
	api_return(&w->apis, api);
	return r;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct web *w = cls;
	(void)toe;

	if (*req_cls)
		guard_conns_busy(w->conns, conn_entry(conn), false);
	*req_cls = NULL;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct web *w = cls;

	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		*socket_context = guard_conns_open(w->conns, conn_fd(conn));
	} else {
		guard_conns_close(w->conns, *socket_context);
		*socket_context = NULL;
	}
}

/* Whether an address names one client here: a TCP listener beyond
 * loopback. On loopback or a Unix socket every local user is one
 * address. */
static bool addresses_are_clients(int fd)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t len = sizeof(ss);
	char buf[INET6_ADDRSTRLEN];

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return false;
	if (ss.ss_family == AF_INET)
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, buf, sizeof(buf));
	else if (ss.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, buf, sizeof(buf));
	else
		return false;
	return !guard_addr_is_loopback(buf);
}

/* The connection limit, with the open-file limit raised to fit it where
 * the hard limit allows. */
static unsigned connection_limit(void)
{
	struct rlimit rl;
	rlim_t want = MAX_CONNECTIONS + SPARE_FILES;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return MAX_CONNECTIONS / 4;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
		(void)getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		return rl.rlim_cur > (rlim_t)2 * SPARE_FILES ? (unsigned)(rl.rlim_cur - SPARE_FILES)
							     : SPARE_FILES;
	return MAX_CONNECTIONS;
}

int web_serve(const struct kyu_config *cfg, const struct web_opts *o)
{
	struct web w = { .cfg = cfg, .o = o };
	struct MHD_Daemon *mhd = NULL;
	struct MHD_OptionItem opts[14];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
	unsigned limit = connection_limit();
	sigset_t stop;
	int n = 0, sig = 0, rc = 1, r;

	r = guard_token(w.csrf);
	if (r < 0) {
		log_err("cannot make the CSRF token: getrandom: %s", strerror(-r));
		return 1;
	}
	if (o->user) {
		w.auth = guard_auth_new(o->user, o->password_hash);
		if (!w.auth) {
			log_err("cannot make the credential cache's key: getrandom: %s",
				strerror(errno));
			return 1;
		}
		w.fails = guard_fails_new();
	}
	w.conns = guard_conns_new(MAX_UNPROVEN);
	pthread_mutex_init(&w.apis.lock, NULL);
	pthread_cond_init(&w.apis.freed, NULL);
	for (unsigned i = 0; i < WEB_THREADS; i++)
		w.apis.all[i] = w.apis.idle[w.apis.n_idle++] = webapi_new(cfg);
	/* Seeded here, not by the first thread to make an object. */
	json_object_seed(0);
	/* The server's threads inherit this mask: the stop signals reach
	 * sigwait below, never a thread in a request. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)log_library_line,
					     (void *)(uintptr_t) "http" };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, o->listen_fd, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_THREAD_POOL_SIZE, WEB_THREADS, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, limit, NULL };
	opts[n++] =
		(struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, UNPROVEN_TIMEOUT, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_NOTIFY_CONNECTION, (intptr_t)on_connection,
					     &w };
	opts[n++] =
		(struct MHD_OptionItem){ MHD_OPTION_NOTIFY_COMPLETED, (intptr_t)on_completed, &w };
	if (!cfg->web_behind_proxy && addresses_are_clients(o->listen_fd))
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT,
						     MAX_CONNECTIONS_PER_ADDRESS, NULL };
	if (o->tls_cert) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0,
						     (void *)(uintptr_t)o->tls_key };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0,
						     (void *)(uintptr_t)o->tls_cert };
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &w, MHD_OPTION_ARRAY, opts,
			       MHD_OPTION_END);
	if (!mhd) {
		log_err("cannot start the HTTP server on %s", o->listen);
		goto out;
	}
	if (o->listen[0] == '/')
		log_info("serving the dashboard on the socket %s%s", o->listen,
			 o->read_only ? " (read-only)" : "");
	else
		log_info("serving the dashboard on %s://%s/%s", o->tls_cert ? "https" : "http",
			 o->listen, o->read_only ? " (read-only)" : "");
	if (limit < MAX_CONNECTIONS)
		log_notice("at most %u connections at once: the open-file limit allows no more",
			   limit);
	while (sigwait(&stop, &sig) == 0 && sig == SIGHUP)
		log_info("SIGHUP ignored: restart kyu web to read the file again");
	log_info("stopping on signal %d", sig);
	rc = 0;
out:
	/* Joins the threads: nothing below is in use any more. */
	if (mhd)
		MHD_stop_daemon(mhd);
	for (unsigned i = 0; i < WEB_THREADS; i++)
		webapi_free(w.apis.all[i]);
	pthread_cond_destroy(&w.apis.freed);
	pthread_mutex_destroy(&w.apis.lock);
	guard_conns_free(w.conns);
	guard_auth_free(w.auth);
	guard_fails_free(w.fails);
	return rc;
}
