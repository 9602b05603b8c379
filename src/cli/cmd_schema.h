/* kyu schema status|upgrade and kyu check: the database's schema version
 * against this build's, the upgrade steps embedded in it, and the checks
 * of a kyud installation (configuration, connection, privileges, schema,
 * wake-up address). */
#ifndef KYU_CMD_SCHEMA_H
#define KYU_CMD_SCHEMA_H

#include "common/attr.h"
#include "common/config.h"

/* kyu schema status|upgrade; upgrade may replace the account in cfg
 * (-u). */
KYU_MUSTCHECK int cmd_schema(struct kyu_config *cfg, int argc, char **argv);
/* kyu check: reads the file at path itself (its errors are problems). */
KYU_MUSTCHECK int cmd_check(const char *path, int argc, char **argv);

#endif
