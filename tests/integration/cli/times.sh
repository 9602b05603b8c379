#!/usr/bin/env bash
# kyu's tables print every time one way -- as the server prints a DATETIME,
# then the session's zone (show, list, stats, daemons; schedules and locks,
# whose columns hold UTC, converted to that zone first) -- and kyu queues'
# failed_1h means what the dashboard's "failed 1 h" means: jobs that failed
# for good in the last hour, from kyu_minutes, or from kyu_jobs' rows on a
# schema without it; not the failed rows held from before.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
zone=$(sql "SELECT IF(@@session.time_zone = 'SYSTEM', @@system_time_zone, @@session.time_zone)")
[ -n "$zone" ] || fail "no zone"

sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, exit_code, finished_at, updated_at, run_at) VALUES
     ('old-fail', 'q', 'false', 'failed', 1, 1, '2026-01-01 10:00:00', '2026-01-01 10:00:00', '2026-01-01 09:00:00'),
     ('new-fail', 'q', 'false', 'failed', 1, 1, NOW(6), NOW(6), NOW(6))"
sql "INSERT INTO kyu_daemons (id, host, pid, queues, version, started, last_seen, live_until) VALUES
     ('h:1:a', 'h', 1, '', 'test', '2026-01-01 10:00:00', '2026-01-01 10:00:01', NOW(6) + INTERVAL 1 HOUR)"
time_re="^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)? $zone\$"

check_time() { # WHAT VALUE
	[[ $2 =~ $time_re ]] || fail "$1: '$2' is not a time with the zone $zone"
}
check_time "show's run_at" "$(kyu show old-fail | sed -n 's/^ *run_at: //p')"
check_time "show's finished_at" "$(kyu show old-fail | sed -n 's/^ *finished_at: //p')"
assert_eq "NULL" "$(kyu show old-fail | sed -n 's/^ *started_at: //p')" "a NULL time stays NULL"
check_time "list's run_at" "$(kyu list -s failed -n 1 2>/dev/null | awk -F'\t' 'NR == 2 {print $6}')"
check_time "list's finished_at" "$(kyu list -s failed -n 1 2>/dev/null | awk -F'\t' 'NR == 2 {print $7}')"
check_time "stats' oldest_run_at" "$(kyu stats | awk -F'\t' '$2 == "failed" {print $4}')"
# daemons_col NAME: the column NAME of kyu daemons' first row.
daemons_col() { kyu daemons | awk -F'\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) n = i } NR == 2 { print $n }'; }
check_time "daemons' started" "$(daemons_col started)"
check_time "daemons' last_seen" "$(daemons_col last_seen)"
assert_eq "2026-01-01 10:00:00.000000 $zone" "$(daemons_col started)" "the server's DATETIME, then the zone"
sql "UPDATE kyu_daemons SET drain = '2026-01-01 11:00:00', drain_by = 'op@h'"
assert_eq "since 2026-01-01 11:00:00.000000 $zone by op@h" "$(daemons_col draining)" "the drain's time, then the zone"

# kyu_schedules and kyu_locks hold UTC: shown in the session's zone too.
sql "INSERT INTO kyu_schedules (name, cron, command, enabled, next_run) VALUES ('times', '0 0 * * *', 'true', 0, '2026-01-02 03:04:05')"
sql "INSERT INTO kyu_locks (name, slot, holder, host, pid, acquired_at, expires) VALUES
     ('times', 0, 1, 'h', 1, '2026-01-01 10:00:00.250000', '2026-01-01 10:00:30')"
in_zone() { sql "SELECT CONCAT(CONVERT_TZ('$1', '+00:00', @@session.time_zone), ' ', '$zone')"; }
check_time "schedules' next_run" "$(kyu schedules | awk -F'\t' '$1 == "times" {print $6}')"
assert_eq "$(in_zone '2026-01-02 03:04:05')" "$(kyu schedules | awk -F'\t' '$1 == "times" {print $6}')" "schedules' next_run"
assert_eq "-" "$(kyu schedules | awk -F'\t' '$1 == "times" {print $7}')" "schedules' last_run, never run"
check_time "locks' acquired_at" "$(kyu locks times | awk -F'\t' 'NR == 2 {print $5}')"
assert_eq "$(in_zone '2026-01-01 10:00:00.250000')" "$(kyu locks | awk -F'\t' '$1 == "times" {print $5}')" "locks' acquired_at"
assert_eq "expired" "$(kyu locks times | awk -F'\t' 'NR == 2 {print $6}')" "locks' lease_left"
kyu schedule add times2 '0 0 * * *' -n -s true >"$T_DIR/add.out" || fail "kyu schedule add"
check_time "schedule add's first run" "$(sed -n 's/^schedule times2: added (disabled); first run //p' "$T_DIR/add.out")"

# failed_1h: without kyu_minutes, the rows that became failed in the hour.
sql "RENAME TABLE kyu_minutes TO kyu_minutes_away"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_minutes_away TO kyu_minutes' 2>/dev/null || true")
assert_eq "queue waiting due running failed_1h" "$(kyu queues | sed -n 1p | cut -f1-5 | tr '\t' ' ')" "kyu queues' header"
assert_eq "q 1" "$(kyu queues | awk -F'\t' '$1 == "q" {print $1, $5}')" "failed_1h from kyu_jobs"
# With kyu_minutes, kyud's counts (as the overview reads them).
sql "RENAME TABLE kyu_minutes_away TO kyu_minutes"
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'q', 'd', 1, 4, 3, 9),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 2 HOUR, 'q', 'd', 1, 0, 50, 0)"
assert_eq "q 3" "$(kyu queues | awk -F'\t' '$1 == "q" {print $1, $5}')" "failed_1h from kyu_minutes"
echo ok
