/* kyu.ini: one table of keys drives parsing, defaults and validation. */
#ifndef KYU_CONFIG_H
#define KYU_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum claim_shape { CLAIM_PLAIN, CLAIM_JOIN, CLAIM_SKIP_LOCKED };

#define KYU_MAX_QUEUES 32
#define KYU_MAX_PERM_CODES 32

struct kyu_config {
	char *path;

	/* [database] */
	char *db_host;
	int db_port;
	char *db_socket;
	char *db_user;
	char *db_password;
	char *db_name;
	int db_connect_timeout;

	/* [kyud] */
	int workers;
	int slots;
	int prefetch;
	int lease;
	int heartbeat;
	char *queues_raw;
	char *queues[KYU_MAX_QUEUES];
	int n_queues;
	int poll_interval;
	int retention;
	int cleanup_every;
	int cleanup_batch;
	int shutdown_grace;
	char *listen;
	int wake_rate;
	int fence_margin;
	int claim;
	int log_level;

	/* [job] */
	int max_attempts;
	int time_limit;
	int kill_grace;
	int backoff_base;
	int backoff_cap;
	char *perm_codes_raw;
	int perm_codes[KYU_MAX_PERM_CODES];
	int n_perm_codes;
	int output_limit;
	char *shell;
};

/* Load path into *cfg (zeroed first). On error returns -1 with a message
 * "FILE:LINE: [section] key = 'value': reason" in err; cfg is then freed. */
int config_load(const char *path, struct kyu_config *cfg, char *err, size_t errlen);
void config_free(struct kyu_config *cfg);

/* Heartbeat interval actually used (the configured one, or lease/4). */
double config_heartbeat(const struct kyu_config *cfg);
bool config_is_permanent_code(const struct kyu_config *cfg, int code);

/* The key table, for documentation checks: returns false past the end. */
bool config_key_at(size_t i, const char **section, const char **name, const char **def);

#endif
