#!/usr/bin/env bash
# A claim reads the rows it takes, not the queue's history (issue 24): with
# 5,000 finished rows kept in queue 'mail' (within retention) and 300 due,
# no claim statement examines more than a few hundred rows. Before the
# index hint, MariaDB 10.11 read a named queue's index by queue alone from
# its finished rows (due NULL sorts first) on, and every claim examined all
# 5,000. Counted by the server itself: its slow log with long_query_time 0
# records Rows_examined for each statement (a server of the test's own, so
# that no other test's statements are logged or slowed).
. "$KYU_SRC/tests/lib.sh"

private_db_start
slow=$T_DIR/slow.log
sql "INSERT INTO kyu_jobs (id, queue, argv, status, attempts, finished_at)
     SELECT CONCAT('old', seq), 'mail', '[\"true\"]', 'succeeded', 1, NOW(6) FROM seq_1_to_5000"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('new', seq), 'mail', '[\"true\"]' FROM seq_1_to_300"
root_sql -e "SET GLOBAL slow_query_log_file = '$slow'; SET GLOBAL long_query_time = 0;
             SET GLOBAL slow_query_log = 1"
start_kyud kyud.workers=2
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'new%' AND status = 'succeeded'" 300 30
stop_kyud
root_sql -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10"

# Each logged claim: its Rows_examined (the header lines come before the
# statement they describe).
awk '/^# Query_time:/ { for (i = 1; i <= NF; i++) if ($i == "Rows_examined:") n = $(i + 1) }
     /^UPDATE IGNORE .*kyu_jobs/ && /SET owner = / { print n }' "$slow" >"$T_DIR/examined"
claims=$(wc -l <"$T_DIR/examined")
max=$(sort -n "$T_DIR/examined" | tail -n 1)
echo "claims logged: $claims; most rows examined by one: ${max:-none}"
[ "$claims" -ge 1 ] || fail "no claim statement in the server's slow log ($slow)"
[ "$max" -lt 1000 ] || fail "a claim examined $max rows (5,000 finished rows kept in the queue; at most 1000)"
