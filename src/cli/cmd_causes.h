/* kyu causes: the failed and retrying jobs grouped by cause
 * (common/causes.h), and the jobs of one cause. The actions on a cause
 * are the bulk ones' --cause (cmd_bulk.h). */
#ifndef KYU_CMD_CAUSES_H
#define KYU_CMD_CAUSES_H

#include "common/attr.h"
#include "common/db.h"

/* kyu causes [-q QUEUE] [CAUSE]: with db NULL only checks the options (0
 * or EXIT_USAGE). */
KYU_MUSTCHECK int cmd_causes(struct db *db, int argc, char **argv);

/* The statements of the causes' reads on db (common/action.h's
 * action_run_fn). */
KYU_MUSTCHECK int cmd_causes_run(void *ctx, const char *sql, size_t len,
				 const struct db_result **res);

#endif
