/* kyud: the job-queue daemon. The same binary is the supervisor and, when
 * started by it with --worker N, a worker (with --watcher, its watcher). */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sysexits.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "common/registry.h"
#include "common/secret.h"
#include "common/util.h"
#include "watch/watch.h"
#include "worker/worker.h"
#include "sup.h"

#define DEFAULT_CONFIG "/etc/kyu/kyu.ini"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kyud [-c FILE] [--check-config]\n"
		"\n"
		"Run the jobs inserted into the kyu_jobs table of a MariaDB/MySQL database.\n"
		"\n"
		"  -c, --config FILE   configuration file (default %s)\n"
		"  -t, --check-config  parse and check the configuration, then exit\n"
		"  -h, --help          show this help\n"
		"  -V, --version       show the version\n"
		"\n"
		"Signals: TERM drains (running jobs get [kyud] shutdown_grace), INT stops now,\n"
		"HUP reloads the configuration. See kyud(8) and kyu.ini(5).\n",
		DEFAULT_CONFIG);
}

/* Worker mode: take the configuration the supervisor validated, from the
 * descriptor it handed over (the file name is for messages only), so that
 * every worker runs on the very bytes the supervisor checked. Without
 * --config-fd (a worker started by hand), read the file. */
static int run_worker(int index, int config_fd, const char *path, const char *daemon_id)
{
	struct kyu_config cfg;
	char role[32], err[512];
	int r;

	if (index == 0) {
		signal(SIGHUP, SIG_IGN);
		log_set_role("watcher");
		r = config_fd >= 0 ? config_load_fd(config_fd, path, &cfg, err, sizeof(err))
				   : config_load(path, &cfg, err, sizeof(err));
		if (config_fd >= 0)
			close(config_fd);
		if (r < 0) {
			log_err("%s", err);
			return EX_CONFIG;
		}
		log_set_level((enum log_level)cfg.log_level);
		return watch_main(&cfg, daemon_id);
	}

	/* First: the supervisor relays reloads, and a HUP sent to the whole
	 * process group must not kill a worker. (The supervisor starts us
	 * with it ignored already; this covers a worker started by hand.) */
	signal(SIGHUP, SIG_IGN);
	snprintf(role, sizeof(role), "worker %d", index);
	log_set_role(role);
	if (config_fd >= 0) {
		r = config_load_fd(config_fd, path, &cfg, err, sizeof(err));
		close(config_fd);
	} else {
		r = config_load(path, &cfg, err, sizeof(err));
	}
	if (r < 0) {
		/* The supervisor does not restart a worker that exits 78. */
		log_err("%s", err);
		return EX_CONFIG;
	}
	log_set_level((enum log_level)cfg.log_level);
	return worker_main(index, &cfg, daemon_id);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 't' },
		{ "worker", required_argument, NULL, 'W' },
		{ "watcher", no_argument, NULL, 'w' },
		{ "config-fd", required_argument, NULL, 'F' },
		{ "daemon-id", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = DEFAULT_CONFIG, *daemon_id = NULL;
	struct kyu_config cfg;
	char err[512];
	bool check = false, watcher = false;
	int64_t worker = 0, config_fd = -1;
	int c, r, fd = -1;

	/* Before any line: the supervisor and each worker (exec'd anew) look
	 * at their own stderr. */
	log_detect_journal();
	while ((c = getopt_long(argc, argv, "c:thV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 't':
			check = true;
			break;
		case 'W':
			if (parse_i64(optarg, 1, 256, &worker) < 0) {
				fprintf(stderr, "kyud: --worker: bad index '%s'\n", optarg);
				return 2;
			}
			break;
		case 'w':
			watcher = true;
			break;
		case 'F':
			if (parse_i64(optarg, 0, INT_MAX, &config_fd) < 0) {
				fprintf(stderr, "kyud: --config-fd: bad descriptor '%s'\n", optarg);
				return 2;
			}
			break;
		case 'D':
			if (!registry_id_valid(optarg)) {
				fprintf(stderr, "kyud: --daemon-id: bad token '%s'\n", optarg);
				return 2;
			}
			daemon_id = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kyud %s\n", KYU_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "kyud: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (worker || watcher)
		return run_worker(watcher ? 0 : (int)worker, (int)config_fd, path, daemon_id);

	/* Before the password is read: no core dump of the supervisor, and
	 * no other process of its user (its jobs, when they run as kyud's
	 * user) may ptrace it or read its memory. Workers are exec'd anew,
	 * dumpable: their jobs' life line opens the worker's pipe through
	 * /proc. A kernel that refuses is no reason not to run. */
	if (secret_no_dump(err, sizeof(err)) < 0)
		fprintf(stderr,
			"kyud: warning: %s; a core dump of kyud would hold the database password\n",
			err);
	/* The supervisor reads the file once and keeps its bytes, sealed, for
	 * the workers. */
	if (check)
		r = config_load(path, &cfg, err, sizeof(err));
	else
		r = config_load_memfd(path, &cfg, &fd, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "kyud: %s\n", err);
		/* EX_CONFIG: restarting will not help. */
		return r == -1 ? EX_CONFIG : 1;
	}
	if (config_check_system(&cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyud: %s\n", err);
		config_free(&cfg);
		if (fd >= 0)
			close(fd);
		return EX_CONFIG;
	}
	if (check) {
		printf("%s: OK\n", path);
		config_free(&cfg);
		return 0;
	}
	log_set_level((enum log_level)cfg.log_level);
	return sup_main(&cfg, fd);
}
