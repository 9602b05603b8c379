/* kyud: the job-queue daemon. The same binary is the supervisor and, when
 * started by it with --worker N, a worker. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "log.h"
#include "sup.h"
#include "util.h"
#include "worker.h"

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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "check-config", no_argument, NULL, 't' },
		{ "worker", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = DEFAULT_CONFIG;
	struct kyu_config cfg;
	char err[512];
	bool check = false;
	int64_t worker = 0;
	int c;

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
	if (worker)
		return worker_main((int)worker, path);

	if (config_load(path, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "kyud: %s\n", err);
		return 78; /* EX_CONFIG: restarting will not help */
	}
	if (check) {
		printf("%s: OK\n", path);
		config_free(&cfg);
		return 0;
	}
	log_set_level((enum log_level)cfg.log_level);
	return sup_main(&cfg);
}
