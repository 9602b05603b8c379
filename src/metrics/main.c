/* kyud-metrics' main: the options and the configuration of the metrics
 * process of kyud, whose work (the HTTP server) is metricsd.c's; see
 * metricsd.h for which metrics file is which. Started by kyud's supervisor
 * (kyud/metricsproc.c), never by hand: it finds the scoreboard and the
 * listening socket on descriptors 5 and 6 and its configuration on
 * --config-fd. */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <sysexits.h>
#include <unistd.h>

#include "common/config.h"
#include "common/log.h"
#include "common/util.h"
#include "metricsd.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: kyud-metrics --config-fd FD -c FILE\n"
		   "\n"
		   "The metrics process of kyud(8), started by its supervisor when kyu.ini sets\n"
		   "[kyud] metrics; it serves /metrics on the socket the supervisor bound.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-fd", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL;
	int64_t config_fd = -1;
	struct kyu_config cfg;
	char err[512];
	int c, r;

	log_detect_journal();
	log_set_role("metrics");
	/* The supervisor relays stops; a HUP or ^C to the process group must
	 * not end this process on its own. */
	signal(SIGHUP, SIG_IGN);
	while ((c = getopt_long(argc, argv, "c:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'F':
			if (parse_i64(optarg, 0, INT_MAX, &config_fd) < 0) {
				fprintf(stderr, "kyud-metrics: --config-fd: bad descriptor '%s'\n",
					optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("kyud-metrics %s\n", KYU_VERSION);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || config_fd < 0 || !path) {
		usage(stderr);
		return 2;
	}
	r = config_load_fd((int)config_fd, path, &cfg, err, sizeof(err));
	close((int)config_fd);
	if (r < 0) {
		log_err("%s", err);
		return EX_CONFIG;
	}
	log_set_level((enum log_level)cfg.log_level);
	return metricsd_main(&cfg);
}
