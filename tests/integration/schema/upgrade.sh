#!/usr/bin/env bash
# A table of the first release's shape, holding jobs, upgraded in place by
# `kyu schema upgrade` (twice: the second changes nothing), then by today's
# sql/schema.sql (which changes nothing more): the old rows run, and the new
# features work on the upgraded table.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

# The test database was loaded with today's schema: start from the old one.
sql "DROP TABLE kyu_jobs, kyu_queues, kyu_queue_starts, kyu_schedules, kyu_locks, kyu_meta, kyu_daemons, kyu_minutes,
     kyu_after, kyu_after_todo, kyu_attempts, kyu_queue_names, kyu_queue_names_new; DROP PROCEDURE kyu_settle"
root_sql -D "$T_DB" <"$KYU_SRC/tests/fixtures/schema-release-1.sql" || fail "loading the old schema"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('old1', 'true'), ('old2', 'exit 0')"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('concurrency_key', 'cpu_user', 'cpu_sys', 'max_rss')")" \
	"concurrency_key and the cost columns before the upgrade"

write_ini "$T_DIR/kyu.ini"
"$KYU" -c "$T_DIR/kyu.ini" schema upgrade >"$T_DIR/upgrade" || fail "kyu schema upgrade: $(cat "$T_DIR/upgrade")"
assert_eq "schema is now at version 11" "$(tail -n 1 "$T_DIR/upgrade")" "the upgrade's last line"
assert_eq "schema is at version 11: nothing to do" "$("$KYU" -c "$T_DIR/kyu.ini" schema upgrade)" "a second upgrade"
root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql on the upgraded table"
assert_eq "schema_compat 1,schema_version 11" "$(sql "SELECT GROUP_CONCAT(name, ' ', value ORDER BY name) FROM kyu_meta")" "kyu_meta"
assert_eq 2 "$(sql "SELECT COUNT(*) FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('concurrency_key', 'running_key')")" "new columns"
assert_eq "cpu_sys double,cpu_user double,max_rss bigint(20) unsigned" \
	"$(sql "SELECT GROUP_CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE ORDER BY COLUMN_NAME) FROM information_schema.COLUMNS
	        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME IN ('cpu_user', 'cpu_sys', 'max_rss')
	        AND IS_NULLABLE = 'YES'")" "cost columns after the upgrade"
assert_eq 3 "$(sql "SELECT COUNT(DISTINCT INDEX_NAME) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME = 'kyu_jobs' AND INDEX_NAME IN ('kyu_jobs_queue_status', 'kyu_jobs_running_key',
	'kyu_jobs_status_queue_due')")" "new indexes"
assert_eq 7 "$(sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()
	AND TABLE_NAME IN ('kyu_queues', 'kyu_queue_starts', 'kyu_schedules', 'kyu_locks', 'kyu_meta', 'kyu_daemons',
	'kyu_minutes')")" "new tables"
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
assert_eq 5 "$(sql "SELECT SUM(succeeded) FROM kyu_minutes")" "jobs counted in kyu_minutes"
assert_log_lacks 'failed:'
