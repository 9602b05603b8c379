/* kyu lock's statements (lock_sql.h). */
#include "lock_sql.h"

#include <inttypes.h>

#include "db.h"

/* The database's clock in UTC: NOW(6) would follow the session's time zone,
 * and a summer-time change would make every live lease look expired (or
 * keep dead ones for an hour). */
#define LOCK_NOW "UTC_TIMESTAMP(6)"

void lock_sql_acquire(struct strbuf *sb, const char *name, unsigned slots, uint64_t token,
		      const char *host, long pid, unsigned ttl)
{
	sb_adds(sb, "INSERT IGNORE INTO kyu_locks (name, slot) VALUES ");
	for (unsigned s = 0; s < slots; s++) {
		sb_adds(sb, s ? ", (" : "(");
		db_quotes(sb, name);
		sb_printf(sb, ", %u)", s);
	}
	sb_printf(sb, "; UPDATE kyu_locks SET holder = %" PRIu64 ", host = ", token);
	db_quotes(sb, host);
	sb_printf(sb,
		  ", pid = %ld, acquired_at = " LOCK_NOW ", expires = " LOCK_NOW
		  " + INTERVAL %u SECOND WHERE name = ",
		  pid, ttl);
	db_quotes(sb, name);
	sb_printf(sb,
		  " AND slot < %u AND (holder IS NULL OR expires < " LOCK_NOW
		  ") ORDER BY slot LIMIT 1; SELECT slot FROM kyu_locks WHERE name = ",
		  slots);
	db_quotes(sb, name);
	sb_printf(sb, " AND holder = %" PRIu64 " ORDER BY slot", token);
}

void lock_sql_extend(struct strbuf *sb, const char *name, unsigned slot, uint64_t token,
		     unsigned ttl)
{
	sb_printf(sb,
		  "UPDATE kyu_locks SET expires = " LOCK_NOW " + INTERVAL %u SECOND WHERE name = ",
		  ttl);
	db_quotes(sb, name);
	sb_printf(sb, " AND slot = %u AND holder = %" PRIu64 " AND expires >= " LOCK_NOW, slot,
		  token);
}

void lock_sql_release(struct strbuf *sb, const char *name, unsigned slot, uint64_t token)
{
	sb_adds(sb,
		"UPDATE kyu_locks SET holder = NULL, host = NULL, pid = NULL, acquired_at = NULL, "
		"expires = NULL WHERE name = ");
	db_quotes(sb, name);
	sb_printf(sb, " AND slot = %u AND holder = %" PRIu64, slot, token);
}

void lock_sql_list(struct strbuf *sb, const char *name)
{
	sb_adds(sb,
		"SELECT name, slot, IFNULL(host, '-') AS host, IFNULL(pid, '-') AS pid, "
		"IFNULL(acquired_at, '-') AS acquired_at, CASE WHEN holder IS NULL THEN 'free' "
		"WHEN expires < " LOCK_NOW " THEN 'expired' "
		"ELSE ROUND(TIMESTAMPDIFF(MICROSECOND, " LOCK_NOW ", expires) / 1000000, 1) END "
		"AS lease_left FROM kyu_locks");
	if (name) {
		sb_adds(sb, " WHERE name = ");
		db_quotes(sb, name);
	}
	sb_adds(sb, " ORDER BY name, slot");
}
