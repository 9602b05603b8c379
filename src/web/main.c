/* kyu-web's main: the options, the [web] section's rules and the
 * listening socket; then web_serve (web.c, web.h), the HTTP server of the
 * dashboard. Run by `kyu web` (src/cli/cmd_web.c). A program of its own,
 * installed in libexec: only it loads libmicrohttpd and what that links
 * (GnuTLS and nine more libraries, 2.6 MiB more resident memory in each
 * process that maps them), so that kyu itself stays small.
 *
 * Before it listens it checks the [web] section's rules (kyu-web(1),
 * ACCESS). By default it listens on a Unix socket whose mode and group say
 * who may connect: on a shared host, loopback TCP is open to every local
 * user and every job. TCP needs a password, except on loopback with
 * open_to_local_users = yes, and beyond loopback also TLS or a proxy that
 * terminates TLS (behind_proxy = yes); behind a proxy a password always,
 * since the proxy's connections come from itself and its Host header is
 * the client's. Only strong crypt schemes are accepted. A half-set pair
 * (user without password_hash, tls_cert without tls_key) is an error. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sysexits.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <microhttpd.h>

#include "common/config.h"
#include "common/log.h"
#include "common/secret.h"
#include "common/util.h"
#include "guard.h"
#include "web.h"

#define DEFAULT_CONFIG "/etc/kyu/kyu.ini"
/* Connections the kernel queues before the server accepts them: a
 * hundred viewers' browsers may connect at once (the kernel caps it at
 * net.core.somaxconn). */
#define LISTEN_BACKLOG 1024
/* A PEM certificate chain or key; anything bigger is not one. */
#define PEM_MAX ((size_t)1024 * 1024)

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kyu web [-c FILE] [--listen PATH|ADDR:PORT] [--read-only]\n"
		"       kyu web --hash-password   (reads a password on stdin, prints its hash)\n"
		"\n"
		"Serves the dashboard: queues, running and failed jobs, schedules, locks,\n"
		"daemons; cancel, retry, run now, delete, pause and resume unless read-only.\n"
		"\n"
		"  -c FILE          configuration (default $KYU_CONFIG, else %s):\n"
		"                   [database], and [web] listen, socket_mode,\n"
		"                   socket_group, read_only, user, password_hash,\n"
		"                   tls_cert, tls_key, behind_proxy, open_to_local_users\n"
		"  --listen WHERE   a Unix socket's path (default [web] listen,\n"
		"                   /run/kyu-web/web.sock; [web] socket_mode and\n"
		"                   socket_group say who may connect), or a numeric\n"
		"                   ADDRESS:PORT: with a password (on loopback, or\n"
		"                   open_to_local_users = yes), beyond loopback also\n"
		"                   TLS or behind_proxy = yes\n"
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
	/* Non-blocking and regular files only: a FIFO with no writer would
	 * hang the start (as for kyu.ini, config.c). */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL; /* said as "not a regular file" */
	}
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
		snprintf(err, errlen, "listen address '%s': expected ADDRESS:PORT or [IPV6]:PORT",
			 addr);
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
		snprintf(err, errlen,
			 "listen address '%s': the address must be a numeric IPv4 or IPv6 address",
			 addr);
		return -1;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "listen address '%s': socket: %s", addr, strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "listen address '%s': %s", addr, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* The numeric group gid of [web] socket_group (a name or a number). */
static int group_id(const char *name, gid_t *gid, char *err, size_t errlen)
{
	struct group gr, *res = NULL;
	char buf[4096], *end;
	unsigned long n;
	int r;

	errno = 0;
	n = strtoul(name, &end, 10);
	if (*name >= '0' && *name <= '9' && !*end && !errno && (unsigned long)(gid_t)n == n &&
	    (gid_t)n != (gid_t)-1) {
		*gid = (gid_t)n;
		return 0;
	}
	r = getgrnam_r(name, &gr, buf, sizeof(buf), &res);
	if (!res) {
		snprintf(err, errlen, "[web] socket_group = '%s': %s", name,
			 r ? strerror(r) : "no such group");
		return -1;
	}
	*gid = gr.gr_gid;
	return 0;
}

/* A listening Unix socket at path, mode and group as [web] says. It is
 * bound under umask 0177 (no one else can connect to it before its mode
 * is set; before listen no one can at all). A socket left at path by a
 * kyu web that died is replaced; one that answers is not. */
static int listen_unix(const struct kyu_config *cfg, const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	unsigned long mode;
	char *end;
	gid_t gid = (gid_t)-1;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "listen socket '%s': longer than %zu bytes", path,
			 sizeof(sun.sun_path) - 1);
		return -1;
	}
	errno = 0;
	mode = strtoul(cfg->web_socket_mode, &end, 8);
	if (!*cfg->web_socket_mode || *end || errno || mode > 0777) {
		snprintf(
			err, errlen,
			"listen socket '%s': [web] socket_mode = '%s': expected an octal mode such "
			"as 0660 or 0600",
			path, cfg->web_socket_mode);
		return -1;
	}
	if (mode & 0007) {
		snprintf(
			err, errlen,
			"listen socket '%s': [web] socket_mode = '%s': refusing a socket that every local "
			"user may connect to; to open the dashboard to all of them, say so with a TCP "
			"listen address and open_to_local_users = yes",
			path, cfg->web_socket_mode);
		return -1;
	}
	if (*cfg->web_socket_group && group_id(cfg->web_socket_group, &gid, err, errlen) < 0)
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "listen socket '%s': socket: %s", path, strerror(errno));
		return -1;
	}
	old = umask(0177);
	r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	if (r < 0 && errno == EADDRINUSE) {
		struct stat st;
		int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		/* Only a socket nobody answers on is stale. */
		if (probe >= 0 && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode) &&
		    connect(probe, (struct sockaddr *)&sun, sizeof(sun)) < 0 &&
		    errno == ECONNREFUSED && unlink(path) == 0)
			r = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
		else
			errno = EADDRINUSE;
		if (probe >= 0)
			close(probe);
	}
	umask(old);
	if (r < 0) {
		snprintf(err, errlen, "listen socket '%s': %s%s", path, strerror(errno),
			 errno == ENOENT ? " (its directory does not exist: systemd's unit makes "
					   "/run/kyu-web; elsewhere name a path with --listen)"
			 : errno == EADDRINUSE
				 ? " (another kyu web serves it, or it is not a socket)"
				 : "");
		close(fd);
		return -1;
	}
	if ((gid != (gid_t)-1 && chown(path, (uid_t)-1, gid) < 0) ||
	    chmod(path, (mode_t)mode) < 0) {
		snprintf(err, errlen, "listen socket '%s': %s %s: %s", path,
			 gid != (gid_t)-1 ? "chown to [web] socket_group, chmod to" : "chmod to",
			 cfg->web_socket_mode, strerror(errno));
		goto fail;
	}
	if (listen(fd, LISTEN_BACKLOG) < 0) {
		snprintf(err, errlen, "listen socket '%s': listen: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	unlink(path);
	close(fd);
	return -1;
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
	const char *unix_path = NULL;
	bool read_only = false, loopback;
	uint16_t port;
	int c, r, rc = EX_CONFIG;

	log_detect_journal();
	log_set_program("kyu-web");
	log_set_role("");
	/* Before any password is read (the database's, or one to hash): no
	 * core dump, and no ptrace or /proc/PID/mem by the same user
	 * (common/secret.h). */
	if (secret_no_dump(err, sizeof(err)) < 0)
		log_warn("%s; a core dump of kyu-web would hold the database password", err);
	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'l':
			addr = optarg;
			break;
		case 'r':
			read_only = true;
			break;
		case 'H':
			return hash_password();
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kyu-web %s\n", KYU_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
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
		log_err("%s: [web] listen is empty and no --listen was given: nowhere to serve",
			path);
		goto out;
	}
	if (!*cfg.web_user != !*cfg.web_password_hash) {
		log_err("%s: [web] user and password_hash go together: set both (a hash from "
			"kyu web --hash-password) or neither",
			path);
		goto out;
	}
	if (*cfg.web_user) {
		char prefix[16];
		o.user = cfg.web_user;
		o.password_hash = cfg.web_password_hash;
		if (!guard_hash_is_strong(cfg.web_password_hash, prefix, sizeof(prefix))) {
			if (cfg.web_password_hash[0] == '$' &&
			    strchr("y27", cfg.web_password_hash[1]))
				log_err("%s: [web] password_hash: this libcrypt cannot compute it (or it is "
					"malformed): make one with kyu web --hash-password",
					path);
			else
				log_err("%s: [web] password_hash starts with '%s': not a strong crypt(3) "
					"scheme; only yescrypt ($y$), scrypt ($7$), bcrypt ($2b$, $2y$) and "
					"SHA-512 ($6$) are accepted: make one with kyu web --hash-password",
					path, prefix);
			goto out;
		}
	}
	/* A proxy connects from loopback (or a socket) on behalf of anyone
	 * who reaches it, and forwards the client's Host header: without a
	 * password, the dashboard would be the proxy's clients'. */
	if (cfg.web_behind_proxy && !o.user) {
		log_err("%s: [web] behind_proxy = yes needs [web] user and password_hash (kyu web "
			"--hash-password): a proxy makes the dashboard reachable by whoever reaches the proxy",
			path);
		goto out;
	}
	if (!*cfg.web_tls_cert != !*cfg.web_tls_key) {
		log_err("%s: [web] tls_cert and tls_key go together: set both or neither", path);
		goto out;
	}
	if (*cfg.web_tls_cert) {
		if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
			log_err("%s: [web] tls_cert is set, but this libmicrohttpd was built without TLS",
				path);
			goto out;
		}
		r = read_pem(cfg.web_tls_cert, &cert);
		if (r == 0)
			r = read_pem(cfg.web_tls_key, &key);
		if (r < 0) {
			log_err("%s: [web] tls_cert = '%s', tls_key = '%s': cannot read: %s", path,
				cfg.web_tls_cert, cfg.web_tls_key,
				r == -EINVAL ? "not a regular file" : strerror(-r));
			goto out;
		}
		o.tls_cert = cert;
		o.tls_key = key;
	}
	if (o.listen[0] == '/') {
		o.listen_fd = listen_unix(&cfg, o.listen, err, sizeof(err));
		if (o.listen_fd < 0) {
			log_err("%s", err);
			goto out;
		}
		unix_path = o.listen;
		goto serve;
	}
	if (parse_hostport(o.listen, host, sizeof(host), &port) < 0) {
		log_err("listen address '%s': expected a socket path (from '/'), ADDRESS:PORT or [IPV6]:PORT",
			o.listen);
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
	/* Any local user, and any job of any queue, can connect to a
	 * loopback port: unless the configuration says that is meant, the
	 * password is what tells the operator from them. */
	if (loopback && !o.user && !cfg.web_open_to_local_users) {
		log_err("refusing to listen on %s without a password: every local user and every job "
			"could connect to it; listen on a socket path (the default, /run/kyu-web/web.sock), "
			"set [web] user and password_hash (kyu web --hash-password), or set [web] "
			"open_to_local_users = yes if everyone on this host may use the dashboard",
			o.listen);
		goto out;
	}
	if (loopback && !o.user)
		log_warn(
			"listening on %s without a password (open_to_local_users = yes): every local "
			"user and every job may use the dashboard",
			o.listen);
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
serve:
	rc = web_serve(&cfg, &o);
out:
	if (unix_path)
		unlink(unix_path);
	if (o.listen_fd >= 0)
		close(o.listen_fd);
	if (key)
		explicit_bzero(key, strlen(key));
	free(key);
	free(cert);
	config_free(&cfg);
	return rc;
}
