/* kyu.ini, read by every program (kyud's supervisor and workers,
 * kyud-metrics, kyu web, kyu): one table of keys drives parsing,
 * defaults, validation and printing values. This module knows the keys;
 * config_ini.c reads the file's syntax (on inih) and config_file.c its
 * bytes (and seals them for workers), both for config.c alone; the
 * [queue.*] sections are domain.h's. */
#ifndef KYU_CONFIG_H
#define KYU_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

enum claim_shape { CLAIM_PLAIN, CLAIM_JOIN, CLAIM_SKIP_LOCKED };
/* [kyud] history: which ended attempts get a row of kyu_attempts. failures:
 * all but a first attempt that succeeded (whose job row says everything). */
enum history_mode { HISTORY_OFF, HISTORY_FAILURES, HISTORY_ALL };
/* [kyud] wake_binlog: follow the server's binary log for wake-ups (auto:
 * where the server writes one and kyud's user may read it). */
enum wake_binlog_mode { WAKE_BINLOG_AUTO, WAKE_BINLOG_ON, WAKE_BINLOG_OFF };

#define KYU_MAX_QUEUES 32
#define KYU_MAX_PERM_CODES 32

#include "attr.h"

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
	char *db_replica; /* read-only commands of kyu read here ("": from db_host) */

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
	int retention_failed; /* failed and cancelled rows: the longer of it and retention */
	int cleanup_every;
	int cleanup_batch;
	int shutdown_grace;
	char *listen;
	char *advertise; /* "": listen's address */
	int wake_rate;
	int wake_binlog; /* enum wake_binlog_mode */
	int wake_poll;   /* seconds between the watcher's change checks; 0: none */
	char *metrics;   /* "": no metrics process */
	int metrics_interval;
	int fence_margin;
	int live_output;    /* seconds between writes of running jobs' output tails; 0: none */
	int history;        /* enum history_mode */
	int attempt_output; /* bytes of an attempt's output kept in its row of kyu_attempts */
	int result_max;     /* bytes of a result on a job's status channel */
	int claim;
	bool schedules;
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
	bool direct_exec;

	/* [web]: the dashboard, kyu web (src/web/main.c) */
	char *web_listen;
	char *web_socket_mode;
	char *web_socket_group;
	bool web_open_to_local_users;
	bool web_read_only;
	char *web_user;
	char *web_password_hash;
	char *web_tls_cert;
	char *web_tls_key;
	bool web_behind_proxy;

	/* [queue.NAME] and [queue.*] (domain.h) */
	struct domain *domains;
	int n_domains;
};

/* Every loader fills *cfg (zeroed first) from the defaults and the file's
 * bytes. On error it returns -1 with a message naming the offending value,
 * "NAME:LINE: [section] key = 'value': reason" (or "NAME: ..." for the file
 * itself), in err; cfg is then freed. NAME, the file's path, is kept in
 * cfg->path for messages. */

/* Read the file at path, then parse it. A file that sets [database]
 * password is refused when every local user may read it
 * (config_file_check_secret), here and in config_load_memfd. */
KYU_MUSTCHECK int config_load(const char *path, struct kyu_config *cfg, char *err, size_t errlen);
/* Parse len bytes (NUL bytes are an error; no terminator needed). */
KYU_MUSTCHECK int config_parse(const char *name, const char *buf, size_t len,
			       struct kyu_config *cfg, char *err, size_t errlen);
/* Read fd from offset 0 to its end (pread: descriptors passed to several
 * workers share one offset), then parse it as the file name. fd stays
 * open. */
KYU_MUSTCHECK int config_load_fd(int fd, const char *name, struct kyu_config *cfg, char *err,
				 size_t errlen);
/* For the supervisor: read the file at path once, parse it, and on success
 * put the very bytes it parsed into a sealed memfd (close-on-exec, read
 * only for everyone) in *memfd, for workers to load with config_load_fd.
 * Returns 0, -1 for a file that cannot be read or is invalid (exit 78), or
 * -2 when the memfd cannot be made (cfg freed; exit 1). */
KYU_MUSTCHECK int config_load_memfd(const char *path, struct kyu_config *cfg, int *memfd, char *err,
				    size_t errlen);
void config_free(struct kyu_config *cfg);

/* What parsing cannot tell: that the users and groups of the [queue.*]
 * sections exist, that this process may switch to them, and that no
 * queue's jobs would run as root unless a section says user = root.
 * kyud runs it at start-up (exit 78) and on reload (keeping the old
 * configuration). Returns -1 with the first problem, "FILE:LINE: [queue.Q]
 * key = 'value': reason", in err. */
KYU_MUSTCHECK int config_check_system(const struct kyu_config *cfg, char *err, size_t errlen);

/* On reload, for a process that cannot apply every key (a worker sizes its
 * slots at start): copy into nc, from old, each key the key table marks as
 * applying only when the worker restarts, and log at notice each one whose
 * value differs ("[kyud] slots changed from 8 to 16: applies when the
 * worker restarts"). Returns how many differed. */
int config_keep_restart_keys(struct kyu_config *nc, const struct kyu_config *old);

/* Heartbeat interval actually used (the configured one, or lease/4). */
double config_heartbeat(const struct kyu_config *cfg);
/* The longest kill_grace any job may get: [job]'s or a queue section's. */
/* The address other hosts send this daemon's wake-ups to: advertise, else
 * listen; NULL when it listens for none. */
const char *config_wake_addr(const struct kyu_config *cfg);

int config_max_kill_grace(const struct kyu_config *cfg);
bool config_is_permanent_code(const struct kyu_config *cfg, int code);

/* The key table, for documentation checks: returns false past the end.
 * *restart_only: a reload does not change it in a running worker. */
bool config_key_at(size_t i, const char **section, const char **name, const char **def,
		   bool *restart_only);

#endif
