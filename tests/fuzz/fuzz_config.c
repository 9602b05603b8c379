/* libFuzzer target: config_parse on the bytes of an ini file, as kyud reads
 * /etc/kyu/kyu.ini (and, through its memfd, every worker). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char name[] = "fuzz.ini";
	struct kyu_config cfg;
	char err[512];

	err[0] = '\0';
	if (config_parse(name, (const char *)data, size, &cfg, err, sizeof(err)) < 0) {
		/* The header promises a message that starts with the file's
		 * name, and a freed cfg. */
		if (strncmp(err, name, sizeof(name) - 1) != 0 || cfg.path || cfg.db_host || cfg.shell)
			__builtin_trap();
		return 0;
	}
	/* What validate() and the key table guarantee to the rest of kyud. */
	if (cfg.n_queues < 0 || cfg.n_queues > KYU_MAX_QUEUES || cfg.n_perm_codes < 0 ||
	    cfg.n_perm_codes > KYU_MAX_PERM_CODES || cfg.shell[0] != '/' || !cfg.db_name[0] ||
	    (cfg.heartbeat && cfg.heartbeat >= cfg.lease) || cfg.backoff_cap < cfg.backoff_base ||
	    config_heartbeat(&cfg) <= 0)
		__builtin_trap();
	for (int i = 0; i < cfg.n_queues; i++) {
		/* At most 64 characters (kyu_jobs.queue is VARCHAR(64) of
		 * utf8mb4): bytes other than UTF-8 continuation bytes. */
		size_t chars = 0;
		for (const char *p = cfg.queues[i]; *p; p++)
			chars += ((unsigned char)*p & 0xc0) != 0x80;
		if (!cfg.queues[i][0] || chars > 64)
			__builtin_trap();
	}
	for (int i = 0; i < cfg.n_perm_codes; i++)
		if (!config_is_permanent_code(&cfg, cfg.perm_codes[i]))
			__builtin_trap();
	config_free(&cfg);
	return 0;
}
