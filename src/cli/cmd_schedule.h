/* kyu schedules, kyu schedule add|enable|disable|run-now|remove: each one
 * statement on kyu_schedules (kyu_jobs(7), "Schedules") that a user could
 * type instead. The expression and zone are checked here too, so that a
 * typo is refused at once rather than found by kyud later. */
#ifndef KYU_CMD_SCHEDULE_H
#define KYU_CMD_SCHEDULE_H

#include "common/attr.h"
#include "common/config.h"
#include "common/db.h"

/* kyu schedules; kyu schedule add|enable|disable|run-now|remove. */
KYU_MUSTCHECK int cmd_schedules(struct db *db);
KYU_MUSTCHECK int cmd_schedule(struct db *db, const struct kyu_config *cfg, int argc, char **argv);

#endif
