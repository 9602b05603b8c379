#!/usr/bin/env bash
# The fan takes over expired leases of its queues while it runs (a dead
# worker's job must not wait for the backlog of thousands of queues to
# drain): 100 queues of 100 jobs each keep the fan busy; a row of one of
# them is 'running' under a lease that expired an hour ago (its worker is
# long dead). It runs again (attempt 2) while most of the backlog still
# waits.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('j', seq), CONCAT('q', LPAD(seq MOD 100, 3, '0')),
     '[\"true\"]' FROM seq_1_to_10000"
sql "INSERT INTO kyu_jobs (id, queue, argv, status, owner, attempts, lease_until, started_at)
     VALUES ('orphan', 'q042', '[\"true\"]', 'running', 12345, 1, NOW(6) - INTERVAL 1 HOUR,
             NOW(6) - INTERVAL 2 HOUR)"
start_kyud kyud.slots=8 kyud.prefetch=64 kyud.lease=5
wait_for "SELECT status FROM kyu_jobs WHERE id = 'orphan'" succeeded 120
left=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'waiting'")
echo "the orphan ran again with $left of 10,000 jobs still waiting"
[ "$left" -ge 1000 ] || fail "the orphan waited for the backlog ($left jobs left)"
assert_eq 2 "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'orphan'")" "the orphan's attempts"
grep -q "claims take one job of each in turn" "$T_DIR"/kyud*.log || fail "the fan was not begun (log)"
stop_kyud
