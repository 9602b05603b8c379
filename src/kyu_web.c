/* kyu-web: the dashboard (web.h), run by `kyu web`. A program of its own,
 * installed in libexec: only it loads libmicrohttpd and what that links
 * (GnuTLS and nine more libraries, 2.6 MiB more resident memory in each
 * process that maps them), so that kyu itself stays small.
 *
 * Before it listens it checks the [web] section's rules: an address other
 * than loopback only with a password, and then only with TLS or behind a
 * proxy that terminates TLS (behind_proxy = yes); a half-set pair (user
 * without password_hash, tls_cert without tls_key) is an error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sysexits.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>

#include "config.h"
#include "log.h"
#include "util.h"
#include "web.h"
#include "webguard.h"

#define DEFAULT_CONFIG "/etc/kyu/kyu.ini"
/* A PEM certificate chain or key; anything bigger is not one. */
#define PEM_MAX ((size_t)1024 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kyu web [-c FILE] [--listen ADDR:PORT] [--read-only]\n"
		"       kyu web --hash-password   (reads a password on stdin, prints its hash)\n"
		"\n"
		"Serves the dashboard: queues, running and failed jobs, schedules, locks,\n"
		"daemons; cancel, retry, run now, delete, pause and resume unless read-only.\n"
		"\n"
		"  -c FILE          configuration (default $KYU_CONFIG, else %s):\n"
		"                   [database], and [web] listen, read_only, user,\n"
		"                   password_hash, tls_cert, tls_key, behind_proxy\n"
		"  --listen ADDR    numeric address and port (default [web] listen,\n"
		"                   127.0.0.1:7780); other than loopback only with a\n"
		"                   password, and TLS or behind_proxy = yes\n"
		"  --read-only      no actions (as [web] read_only = yes)\n"
		"  --hash-password  print a crypt(3) hash of the password read from\n"
		"                   stdin, for [web] password_hash\n"
		"  -h, --help  show this help;  -V, --version  show the version\n",
		DEFAULT_CONFIG);
}

static int hash_password(void)
{
	char *line = NULL, *hash;
	size_t cap = 0;
	ssize_t n;

	if (isatty(STDIN_FILENO))
		fprintf(stderr, "password (echoed; pipe it in to keep it off the screen): ");
	n = getline(&line, &cap, stdin);
	if (n <= 0) {
		fprintf(stderr, "kyu web: --hash-password: no password on stdin\n");
		free(line);
		return 2;
	}
	line[strcspn(line, "\r\n")] = '\0';
	if (!*line) {
		fprintf(stderr, "kyu web: --hash-password: the password is empty\n");
		free(line);
		return 2;
	}
	hash = guard_hash_password(line);
	explicit_bzero(line, cap);
	free(line);
	if (!hash) {
		fprintf(stderr, "kyu web: --hash-password: crypt failed: %s\n", strerror(errno));
		return 1;
	}
	printf("%s\n", hash);
	free(hash);
	return 0;
}

/* The whole file at path, NUL-terminated, into *out. */
static int read_pem(const char *path, char **out)
{
	struct strbuf sb = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;
		sb_reserve(&sb, 4096);
		n = read(fd, sb.buf + sb.len, sb.cap - sb.len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || sb.len + (size_t)n > PEM_MAX) {
			int e = n < 0 ? errno : EFBIG;
			close(fd);
			sb_free(&sb);
			return -e;
		}
		if (n == 0)
			break;
		sb.len += (size_t)n;
		sb.buf[sb.len] = '\0';
	}
	close(fd);
	*out = sb.buf ? sb.buf : xstrdup("");
	return 0;
}

/* A listening TCP socket on the numeric ADDR:PORT. */
static int listen_on(const char *addr, char *err, size_t errlen)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
	char host[256];
	uint16_t port;
	socklen_t len;
	int fd, one = 1;

	if (parse_hostport(addr, host, sizeof(host), &port) < 0) {
		snprintf(err, errlen, "listen address '%s': expected ADDRESS:PORT or [IPV6]:PORT", addr);
		return -1;
	}
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons(port);
		len = sizeof(*v4);
	} else if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons(port);
		len = sizeof(*v6);
	} else {
		snprintf(err, errlen, "listen address '%s': the address must be a numeric IPv4 or IPv6 address",
			 addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "listen address '%s': socket: %s", addr, strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		snprintf(err, errlen, "listen address '%s': %s", addr, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "read-only", no_argument, NULL, 'r' },
		{ "hash-password", no_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = getenv("KYU_CONFIG"), *addr = NULL;
	struct web_opts o = { .listen_fd = -1 };
	struct kyu_config cfg;
	char err[512], host[256];
	char *cert = NULL, *key = NULL;
	bool read_only = false, loopback;
	uint16_t port;
	int c, r, rc = EX_CONFIG;

	log_detect_journal();
	log_set_program("kyu-web");
	log_set_role("");
	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': path = optarg; break;
		case 'l': addr = optarg; break;
		case 'r': read_only = true; break;
		case 'H': return hash_password();
		case 'h': usage(stdout); return 0;
		case 'V': printf("kyu-web %s\n", KYU_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	if (!path || !*path)
		path = DEFAULT_CONFIG;
	if (config_load(path, &cfg, err, sizeof(err)) < 0) {
		log_err("%s", err);
		return EX_CONFIG;
	}
	log_set_level((enum log_level)cfg.log_level);
	o.listen = addr ? addr : cfg.web_listen;
	o.read_only = read_only || cfg.web_read_only;
	if (!*o.listen) {
		log_err("%s: [web] listen is empty and no --listen was given: nowhere to serve", path);
		goto out;
	}
	if (!*cfg.web_user != !*cfg.web_password_hash) {
		log_err("%s: [web] user and password_hash go together: set both (a hash from "
			"kyu web --hash-password) or neither",
			path);
		goto out;
	}
	if (*cfg.web_user) {
		o.user = cfg.web_user;
		o.password_hash = cfg.web_password_hash;
		/* crypt(3) hashes start with "$id$" (or are DES, 13
		 * characters, which no one should use any more). */
		if (cfg.web_password_hash[0] != '$') {
			log_err("%s: [web] password_hash = '%s': not a crypt(3) hash such as "
				"kyu web --hash-password prints",
				path, cfg.web_password_hash);
			goto out;
		}
	}
	if (!*cfg.web_tls_cert != !*cfg.web_tls_key) {
		log_err("%s: [web] tls_cert and tls_key go together: set both or neither", path);
		goto out;
	}
	if (*cfg.web_tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			log_err("%s: [web] tls_cert is set, but this libmicrohttpd was built without TLS", path);
			goto out;
		}
		r = read_pem(cfg.web_tls_cert, &cert);
		if (r == 0)
			r = read_pem(cfg.web_tls_key, &key);
		if (r < 0) {
			log_err("%s: [web] tls_cert = '%s', tls_key = '%s': cannot read: %s", path,
				cfg.web_tls_cert, cfg.web_tls_key, strerror(-r));
			goto out;
		}
		o.tls_cert = cert;
		o.tls_key = key;
	}
	if (parse_hostport(o.listen, host, sizeof(host), &port) < 0) {
		log_err("listen address '%s': expected ADDRESS:PORT or [IPV6]:PORT", o.listen);
		goto out;
	}
	{
		unsigned char a[16];
		if (inet_pton(AF_INET, host, a) != 1 && inet_pton(AF_INET6, host, a) != 1) {
			log_err("listen address '%s': the address must be a numeric IPv4 or IPv6 address",
				o.listen);
			goto out;
		}
	}
	loopback = guard_addr_is_loopback(host);
	/* Anyone who reaches the port could cancel and delete jobs, and read
	 * every job's command, environment and output. */
	if (!loopback && !o.user) {
		log_err("refusing to listen on %s, which is not a loopback address, without a password: "
			"set [web] user and password_hash (kyu web --hash-password), or listen on "
			"127.0.0.1 and reach it through an SSH tunnel",
			o.listen);
		goto out;
	}
	/* Basic authentication sends the password with every request. */
	if (!loopback && !o.tls_cert && !cfg.web_behind_proxy) {
		log_err("refusing to listen on %s without TLS: the password would cross the network in "
			"clear; set [web] tls_cert and tls_key, or behind_proxy = yes when a proxy that "
			"terminates TLS is the only way in",
			o.listen);
		goto out;
	}
	o.listen_fd = listen_on(o.listen, err, sizeof(err));
	if (o.listen_fd < 0) {
		log_err("%s", err);
		goto out;
	}
	rc = web_serve(&cfg, &o);
out:
	if (o.listen_fd >= 0)
		close(o.listen_fd);
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
	free(cert);
	config_free(&cfg);
	return rc;
}
