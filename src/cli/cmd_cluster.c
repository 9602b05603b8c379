#include "cmd_cluster.h"

#include "common/lock.h"
#include "common/registry.h"
#include "common/util.h"
#include "cli.h"

/* The daemons of kyu_daemons, live or not (kyud(8), "Registry"). */
int cmd_daemons(struct db *db)
{
	static const char q[] =
		"SELECT host, pid, IFNULL(wake_addr, '-') AS wake_addr, "
		"IF(queues = '', '*', queues) AS queues, version, " CLI_TIME("started") ", " CLI_TIME("last_seen") ", "
		"IF(" REGISTRY_LIVE("d") ", 'yes', 'no') AS live, id "
		"FROM kyu_daemons AS d ORDER BY host, pid, id";

	return cli_print_query(db, q, sizeof(q) - 1, false) < 0 ? cli_die_db(db, "daemons") : 0;
}

int cmd_wake(struct db *db, const struct kyu_config *cfg, const char *queue)
{
	return cli_send_wake(db, cfg, queue, false) < 0;
}

int cmd_locks(struct db *db, const char *name)
{
	struct strbuf sb = { 0 };
	int rc;

	/* lock_sql_list's rows (the dashboard's too), with acquired_at as
	 * kyu prints times (cli.h). */
	sb_adds(&sb, "SELECT name, slot, host, pid, IF(acquired_at = '-', '-', " CLI_UTC_TIME("acquired_at")
		     ") AS acquired_at, lease_left FROM (");
	lock_sql_list(&sb, name);
	sb_adds(&sb, ") AS l ORDER BY name, slot");
	rc = cli_print_query(db, sb.buf, sb.len, false) < 0 ? cli_die_db(db, "locks") : 0;
	sb_free(&sb);
	return rc;
}
