#!/usr/bin/env bash
# A claim reads the rows it takes, not the queue's history (issue 24): with
# 5,000 finished rows kept in queue 'mail' (within retention) and 300 due,
# no claim statement examines more than a few hundred rows. Before the
# index hint, MariaDB 10.11 read a named queue's index by queue alone from
# its finished rows (due NULL sorts first) on, and every claim examined all
# 5,000. Counted by the server itself: its slow log with long_query_time 0
# records Rows_examined for each statement (a server of the test's own, so
# that no other test's statements are logged or slowed).
# The directory (each served queue's first due time, read with the claims)
# is held to the same, with 3,000 more due rows in a second queue: its
# GROUP BY queue was costed from the statistics a table handle had when
# the server opened it, here while empty, and read the whole index or
# every due row in each claim. Then once more with a [kyud] queues list,
# where the directory names its queues as constants (the old statement
# examined 3,299 rows per read there).
. "$KYU_SRC/tests/lib.sh"

private_db_start
slow=$T_DIR/slow.log
# Table handles the server opens now, with the table empty, keep the
# statistics of that moment: eight of them, held open at once, are what
# kyud's connections get from the server's table cache afterwards.
for _ in 1 2 3 4 5 6 7 8; do
	sql "SELECT (SELECT COUNT(*) FROM kyu_jobs), SLEEP(1)" >/dev/null &
done
wait
sql "INSERT INTO kyu_jobs (id, queue, argv, status, attempts, finished_at)
     SELECT CONCAT('old', seq), 'mail', '[\"true\"]', 'succeeded', 1, NOW(6) FROM seq_1_to_5000"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('new', seq), 'mail', '[\"true\"]' FROM seq_1_to_300"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('more', seq), 'bulk', '[\"true\"]' FROM seq_1_to_3000"
root_sql -e "SET GLOBAL slow_query_log_file = '$slow'; SET GLOBAL long_query_time = 0;
             SET GLOBAL slow_query_log = 1"
start_kyud kyud.workers=2
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 8300 60
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

# The directory: its SELECT and the compound statement that finds the
# queues' first due times, whichever of them the log shows.
awk '/^# Query_time:/ { for (i = 1; i <= NF; i++) if ($i == "Rows_examined:") n = $(i + 1) }
     /^SELECT d\.queue, / || /^BEGIN NOT ATOMIC DECLARE q, p / { print n }' "$slow" >"$T_DIR/dir_examined"
reads=$(wc -l <"$T_DIR/dir_examined")
dmax=$(sort -n "$T_DIR/dir_examined" | tail -n 1)
echo "directory statements logged: $reads; most rows examined by one: ${dmax:-none}"
[ "$reads" -ge 1 ] || fail "no directory read in the server's slow log ($slow)"
[ "$dmax" -lt 100 ] || fail "a directory read examined $dmax rows (two queues, 8,300 rows; at most 100)"

# The same with a [kyud] queues list, where the directory names its queues
# as constants in one SELECT (no compound statement): 3,300 due rows again.
slow2=$T_DIR/slow2.log
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('again-m', seq), 'mail', '[\"true\"]' FROM seq_1_to_300"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('again-b', seq), 'bulk', '[\"true\"]' FROM seq_1_to_3000"
root_sql -e "SET GLOBAL slow_query_log_file = '$slow2'; SET GLOBAL long_query_time = 0;
             SET GLOBAL slow_query_log = 1"
start_kyud kyud.workers=2 kyud.queues=mail,bulk
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 11600 60
stop_kyud
root_sql -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10"
awk '/^# Query_time:/ { for (i = 1; i <= NF; i++) if ($i == "Rows_examined:") n = $(i + 1) }
     /^SELECT d\.queue, / { print n }' "$slow2" >"$T_DIR/dir_examined2"
reads=$(wc -l <"$T_DIR/dir_examined2")
dmax=$(sort -n "$T_DIR/dir_examined2" | tail -n 1)
echo "with a queues list: directory reads logged: $reads; most rows examined by one: ${dmax:-none}"
[ "$reads" -ge 1 ] || fail "no directory read with a queues list in the server's slow log ($slow2)"
[ "$dmax" -lt 100 ] || fail "a directory read with a queues list examined $dmax rows (at most 100)"
