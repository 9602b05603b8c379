#include "web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A few viewers, each browser with a handful of connections. */
#define MAX_CONNECTIONS 32
/* One browser opens six at most; more from one address is someone
 * holding the server's slots. Not behind a proxy, whose connections all
 * come from its own address: there the proxy limits its clients. */
#define MAX_CONNECTIONS_PER_ADDRESS 8
#define CONNECTION_TIMEOUT 30 /* seconds */
/* No request of the dashboard has a body. */
#define MAX_BODY 4096

#define CSRF_HEADER "X-Kyu-CSRF"

/* The page runs only its own script and style sheet: no inline script,
 * no other site, no frames, no form posts anywhere. */
#define CSP                                                                                  \
	"default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; " \
	"form-action 'none'"

struct web {
	const struct kyu_config *cfg;
	const struct web_opts *o;
	struct webapi *api;
	struct guard_auth *auth; /* NULL: no password */
	struct guard_fails *fails;
	char csrf[65];
};

/* What on_request keeps between its calls for one request: that the
 * headers have been seen. */
static char request_started;

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
				 const char *type, char *body, size_t len, enum MHD_ResponseMemoryMode mode)
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
static enum MHD_Result send_json(struct web *w, struct MHD_Connection *conn, unsigned status, json_t *doc)
{
	/* "</" comes out as "<\/": the text stays inert even if something
	 * ever put it inside HTML. */
	char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_ESCAPE_SLASH) : NULL;

	json_decref(doc);
	if (!text)
		return MHD_NO;
	return send_body(w, conn, status, "application/json", text, strlen(text), MHD_RESPMEM_MUST_FREE);
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
	return send_json(w, conn, status, json_pack("{s:o}", "error", webapi_text(msg, strlen(msg))));
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
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	snprintf(buf, len, "?");
	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, buf, (socklen_t)len);
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, buf, (socklen_t)len);
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
			return send_body(w, conn, MHD_HTTP_OK, a->type, (char *)(uintptr_t)a->data, a->len,
					 MHD_RESPMEM_PERSISTENT);
	}
	return send_error(w, conn, MHD_HTTP_NOT_FOUND, "not found: %s", url);
}

static enum MHD_Result on_get(struct web *w, struct MHD_Connection *conn, const char *url)
{
	json_t *doc = NULL;
	unsigned status;

	if (strcmp(url, "/api/session") == 0)
		return send_json(w, conn, MHD_HTTP_OK,
				 json_pack("{s:s, s:b, s:s?, s:s, s:s}", "csrf", w->csrf, "read_only",
					   w->o->read_only, "user", w->o->user, "version", KYU_VERSION,
					   "database", w->cfg->db_name));
	if (strncmp(url, "/api/", 5) != 0)
		return send_asset(w, conn, url);
	status = webapi_get(w->api, url, query_arg, conn, &doc);
	return send_json(w, conn, status, doc);
}

/* A bulk action's filter for the log: " status=failed queue=mail". */
static const char *bulk_filter_text(struct MHD_Connection *conn, char *buf, size_t len)
{
	static const char *const names[] = { "status", "queue", "q", "since", "until" };
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

static enum MHD_Result on_post(struct web *w, struct MHD_Connection *conn, const char *url)
{
	const char *site = header(conn, "Sec-Fetch-Site"), *token = header(conn, CSRF_HEADER);
	const char *name, *target;
	json_t *doc = NULL;
	enum action a = ACT_N;
	enum action_schedule sa = ACT_SCHED_N;
	unsigned status;
	char peer[INET6_ADDRSTRLEN], filter[512];

	if (strncmp(url, "/api/job/", 9) == 0)
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
	if (url[5] == 's' ? action_schedule_parse(name, &sa) < 0 || sa == ACT_SCHED_REMOVE
			  : action_parse(name, &a) < 0 || action_on_queue(a) != (url[5] == 'q') ||
				    (url[8] == 's' && !action_bulk(a)))
		return send_error(w, conn, MHD_HTTP_NOT_FOUND, "no such action: POST %s", url);
	if (w->o->read_only)
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "read-only: this dashboard was started with --read-only or "
				  "[web] read_only = yes");
	if ((site && strcmp(site, "same-origin") != 0) ||
	    !guard_origin_matches(header(conn, "Origin"), header(conn, MHD_HTTP_HEADER_HOST)))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN, "refused: the request comes from another site");
	if (!token || !guard_equal(token, w->csrf))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "refused: missing or wrong " CSRF_HEADER " header (reload the page)");
	if (sa != ACT_SCHED_N) {
		target = query_arg(conn, "name");
		status = webapi_schedule_action(w->api, sa, target, &doc);
	} else if (url[8] == 's') {
		status = webapi_bulk(w->api, a, query_arg, conn, &doc);
		peer_name(conn, peer, sizeof(peer));
		if (status == MHD_HTTP_OK)
			log_notice("%s %lld jobs matching%s (from %s%s%s)", action_name(a),
				   (long long)json_integer_value(json_object_get(doc, "count")),
				   bulk_filter_text(conn, filter, sizeof(filter)), peer, w->o->user ? " as " : "",
				   w->o->user ? w->o->user : "");
		return send_json(w, conn, status, doc);
	} else {
		target = query_arg(conn, action_on_queue(a) ? "queue" : "id");
		status = webapi_action(w->api, a, target, &doc);
	}
	peer_name(conn, peer, sizeof(peer));
	/* Who changed what, for whoever wonders later. */
	if (status == MHD_HTTP_OK)
		log_notice("%s %s '%s' (from %s%s%s)",
			   sa != ACT_SCHED_N ? action_schedule_name(sa) : action_name(a),
			   sa != ACT_SCHED_N ? "schedule" : action_on_queue(a) ? "queue" : "job", target, peer,
			   w->o->user ? " as " : "", w->o->user ? w->o->user : "");
	return send_json(w, conn, status, doc);
}

static enum MHD_Result ask_password(struct web *w, struct MHD_Connection *conn)
{
	static const char body[] = "{\"error\":\"authentication required\"}";
	struct MHD_Response *resp =
		MHD_create_response_from_buffer(sizeof(body) - 1, (char *)(uintptr_t)body, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result r;

	if (!resp)
		return MHD_NO;
	add_headers(w, resp, "application/json");
	r = MHD_queue_basic_auth_fail_response(conn, "kyu", resp);
	MHD_destroy_response(resp);
	return r;
}

/* The key of the client's address for the failure count: its IP
 * address's bytes; every client of a Unix socket (or a proxy) is one. */
static size_t peer_key(struct MHD_Connection *conn, unsigned char key[16])
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;

	if (sa && sa->sa_family == AF_INET) {
		memcpy(key, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
		return 4;
	}
	if (sa && sa->sa_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
		return 16;
	}
	key[0] = 0;
	return 1;
}

static long mono_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)ts.tv_sec;
}

/* 429 with Retry-After: too many wrong passwords from this address. */
static enum MHD_Result send_wait(struct web *w, struct MHD_Connection *conn, long wait)
{
	char msg[160], secs[24];
	struct MHD_Response *resp;
	enum MHD_Result r;

	snprintf(msg, sizeof(msg), "{\"error\":\"too many failed logins from this address: try again in %ld s\"}",
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload_data,
				  size_t *upload_data_size, void **req_cls)
{
	struct web *w = cls;
	bool get = strcmp(method, MHD_HTTP_METHOD_GET) == 0 || strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
	(void)version;
	(void)upload_data;

	if (!*req_cls) {
		const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
		*req_cls = &request_started;
		/* Answered before the body is read; the connection closes. */
		if ((cl && strtoull(cl, NULL, 10) > MAX_BODY) || header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING))
			return send_error(w, conn, MHD_HTTP_CONTENT_TOO_LARGE, "requests have no body here");
		return MHD_YES;
	}
	if (*upload_data_size) {
		*upload_data_size = 0;
		return MHD_YES;
	}
	if (!w->auth && !guard_host_is_local(header(conn, MHD_HTTP_HEADER_HOST)))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "refused: Host must be localhost or a loopback address when [web] sets no "
				  "password (DNS rebinding)");
	if (!w->auth && guard_is_proxied(header_of, conn))
		return send_error(w, conn, MHD_HTTP_FORBIDDEN,
				  "refused: a request through a proxy needs a password: set [web] user, "
				  "password_hash and behind_proxy = yes");
	if (w->auth) {
		unsigned char key[16];
		size_t klen = peer_key(conn, key);
		long now = mono_seconds(), wait = guard_fails_wait(w->fails, key, klen, now);
		char *pass = NULL, *user;
		bool ok;

		/* Answered before any crypt: guessing costs the guesser
		 * time, not the server. */
		if (wait > 0)
			return send_wait(w, conn, wait);
		user = MHD_basic_auth_get_username_password(conn, &pass);
		ok = guard_auth_check(w->auth, user, pass);
		/* A request without credentials is a browser asking which
		 * scheme: not a failure. */
		if (user || pass)
			guard_fails_record(w->fails, key, klen, now, ok);
		if (pass) {
			explicit_bzero(pass, strlen(pass));
			MHD_free(pass);
		}
		MHD_free(user);
		if (!ok)
			return ask_password(w, conn);
	}
	if (get)
		return on_get(w, conn, url);
	if (strcmp(method, MHD_HTTP_METHOD_POST) == 0)
		return on_post(w, conn, url);
	return send_error(w, conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed: %s", method);
}

int web_serve(const struct kyu_config *cfg, const struct web_opts *o)
{
	struct web w = { .cfg = cfg, .o = o };
	struct MHD_Daemon *mhd = NULL;
	struct MHD_OptionItem opts[9];
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
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
			log_err("cannot make the credential cache's key: getrandom: %s", strerror(errno));
			return 1;
		}
		w.fails = guard_fails_new();
	}
	w.api = webapi_new(cfg);
	/* The server's thread inherits this mask: the stop signals reach
	 * sigwait below, never the thread in a request. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_EXTERNAL_LOGGER, (intptr_t)log_library_line, (void *)(uintptr_t)"http" };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_LISTEN_SOCKET, o->listen_fd, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_LIMIT, MAX_CONNECTIONS, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, CONNECTION_TIMEOUT, NULL };
	if (!cfg->web_behind_proxy)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_PER_IP_CONNECTION_LIMIT, MAX_CONNECTIONS_PER_ADDRESS, NULL };
	if (o->tls_cert) {
		flags |= MHD_USE_TLS;
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)(uintptr_t)o->tls_key };
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)(uintptr_t)o->tls_cert };
	}
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	mhd = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &w, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (!mhd) {
		log_err("cannot start the HTTP server on %s", o->listen);
		goto out;
	}
	if (o->listen[0] == '/')
		log_info("serving the dashboard on the socket %s%s", o->listen, o->read_only ? " (read-only)" : "");
	else
		log_info("serving the dashboard on %s://%s/%s", o->tls_cert ? "https" : "http", o->listen,
			 o->read_only ? " (read-only)" : "");
	while (sigwait(&stop, &sig) == 0 && sig == SIGHUP)
		log_info("SIGHUP ignored: restart kyu web to read the file again");
	log_info("stopping on signal %d", sig);
	rc = 0;
out:
	if (mhd)
		MHD_stop_daemon(mhd);
	webapi_free(w.api);
	guard_auth_free(w.auth);
	guard_fails_free(w.fails);
	return rc;
}
