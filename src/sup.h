/* The supervisor: starts and restarts workers, turns wake-up hints and the
 * fallback poll into "acquire now" messages, handles TERM/INT/HUP. It never
 * touches jobs or the database itself. */
#ifndef KYU_SUP_H
#define KYU_SUP_H

#include "config.h"

/* Takes ownership of cfg. Returns the process exit status. */
int sup_main(struct kyu_config *cfg);

#endif
