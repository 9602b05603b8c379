#!/usr/bin/env bash
# Retention: at start-up kyud deletes finished rows (succeeded, failed,
# cancelled) last updated longer ago than `retention`, and nothing else.
. "$KYU_SRC/tests/lib.sh"

old="NOW(6) - INTERVAL 1 HOUR"
future="NOW(6) + INTERVAL 1 DAY"
sql "INSERT INTO kyu_jobs (id, command, status, exit_code, finished_at, updated_at) VALUES
     ('old-succeeded', 'true', 'succeeded', 0,    $old, $old),
     ('old-failed',    'false', 'failed',   1,    $old, $old),
     ('old-cancelled', 'true', 'cancelled', NULL, $old, $old),
     ('fresh-succeeded', 'true', 'succeeded', 0, NOW(6) - INTERVAL 20 SECOND, NOW(6) - INTERVAL 20 SECOND),
     ('fresh-failed',    'false', 'failed', 1,    NOW(6), NOW(6))"
# Old, but not finished: a waiting job due tomorrow and a running one whose
# lease (held by some other daemon) runs until tomorrow.
sql "INSERT INTO kyu_jobs (id, command, status, run_at, created_at, updated_at) VALUES
     ('old-waiting', 'true', 'waiting', $future, $old, $old)"
sql "INSERT INTO kyu_jobs (id, command, status, attempts, owner, lease_until, created_at, updated_at) VALUES
     ('old-running', 'true', 'running', 1, 424242, $future, $old, $old)"
assert_eq 7 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows inserted"

start_kyud kyud.retention=60
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'old-%' AND status IN ('succeeded', 'failed', 'cancelled')" 0 30
stop_kyud
assert_eq "fresh-failed fresh-succeeded old-running old-waiting" \
	"$(sql "SELECT id FROM kyu_jobs ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" "rows left"
assert_eq "waiting running" "$(sql "SELECT status FROM kyu_jobs WHERE id IN ('old-waiting', 'old-running') ORDER BY id DESC" | tr '\n' ' ' | sed 's/ $//')" \
	"status of the unfinished rows"
