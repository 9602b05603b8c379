#!/usr/bin/env bash
# A table of the first release's shape, holding jobs, upgraded in place by
# running today's sql/schema.sql (twice: it is idempotent): the old rows run,
# and the new features work on the upgraded table.
. "$KYU_SRC/tests/lib.sh"

# The test database was loaded with today's schema: start from the old one.
sql "DROP TABLE kyu_jobs; DROP TABLE kyu_queues; DROP TABLE kyu_queue_starts"
root_sql -D "$T_DB" <"$KYU_SRC/tests/fixtures/schema-release-1.sql" || fail "loading the old schema"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('old1', 'true'), ('old2', 'exit 0')"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('concurrency_key', 'cpu_user', 'cpu_sys', 'max_rss')")" \
	"concurrency_key and the cost columns before the upgrade"

for _ in 1 2; do root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql on the old table"; done
assert_eq 2 "$(sql "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('concurrency_key', 'running_key')")" "new columns"
assert_eq "cpu_sys double,cpu_user double,max_rss bigint(20) unsigned" \
	"$(sql "SELECT GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE ORDER BY COLUMN_NAME) FROM information_schema.COLUMNS
	        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('cpu_user', 'cpu_sys', 'max_rss')
	        AND IS_NULLABLE = 'YES'")" "cost columns after the upgrade"
assert_eq 2 "$(sql "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND INDEX_NAME IN ('kyu_jobs_queue_status', 'kyu_jobs_running_key')")" "new indexes"
assert_eq "old1 waiting,old2 waiting" "$(sql "SELECT GROUP_CONCAT(id, ' ', status ORDER BY id) FROM kyu_jobs")" \
	"old rows after the upgrade"

start_kyud
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('old1', 'old2') AND status = 'succeeded'" 2 20
assert_eq 2 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('old1', 'old2') AND max_rss > 0 AND cpu_user IS NOT NULL")" \
	"old rows' runs recorded their cost"
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('lim', 1)"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES
     ('new1', 'lim', 'sleep 0.2', 'k'), ('new2', 'lim', 'sleep 0.2', 'k'), ('new3', 'other', 'true', 'k')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'new%' AND status = 'succeeded'" 3 20
stop_kyud
assert_log_lacks 'failed:'
