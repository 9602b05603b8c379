/* The supervisor: starts and restarts workers, turns wake-up hints and the
 * fallback poll into "acquire now" messages, handles TERM/INT/HUP. It never
 * touches jobs or the database itself. */
#ifndef KYU_SUP_H
#define KYU_SUP_H

#include "common/config.h"

/* Takes ownership of cfg and of cfg_fd, the sealed memfd of the bytes cfg
 * was parsed from (config_load_memfd), which every worker is handed.
 * Returns the process exit status: 0 once stopped by TERM/INT, 78 when a
 * worker refused its configuration, 1 when it could not start. */
int sup_main(struct kyu_config *cfg, int cfg_fd);

#endif
