#!/usr/bin/env bash
# With a binary log in row format and REPLICATION SLAVE, the watcher
# follows the log: plain INSERTs, an SQL retry, a resumed queue and a late
# COMMIT start with no poll at all (poll_interval an hour, wake_poll 0);
# kyud's own claims and results wake nothing; a 10,000-row INSERT is a
# handful of hints, not one per row; the stream survives a rotation, a
# PURGE and a restart of the server. A private server: the shared one
# writes no binary log.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/watch.sh"

private_db_start --log-bin=binlog --binlog-format=ROW --server-id=1
root_sql -e "GRANT REPLICATION SLAVE ON *.* TO 'kyu'@'localhost'"
mport=$(free_tcp_port)
start_kyud kyud.wake_binlog=on kyud.wake_poll=0 kyud.poll_interval=3600 job.max_attempts=1 \
	kyud.workers=2 kyud.slots=16 kyud.metrics="127.0.0.1:$mport"
wait_for_log 'wake-ups: following the binary log of .* \(as replica [0-9]+\)' 30

hints() { grep -c 'kyud\[watcher\]: hint:' "$KYUD_LOG" || true; }

for i in 1 2 3 4; do
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('plain$i', 'true')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'plain$i'" succeeded 30
done

# The watcher's figures in /metrics.
http_get "http://127.0.0.1:$mport/metrics" >"$T_DIR/metrics.txt"
grep -q '^kyu_watcher_mode{mode="binlog"} 1$' "$T_DIR/metrics.txt" || fail "kyu_watcher_mode is not binlog"
hints_m=$(awk '$1 == "kyu_watcher_hints_total" { print $2 }' "$T_DIR/metrics.txt")
[ "${hints_m:-0}" -ge 5 ] || fail "kyu_watcher_hints_total is ${hints_m:-missing} after 4 jobs (at least 5)"
grep -q '^kyu_watcher_binlog_lag_seconds ' "$T_DIR/metrics.txt" || fail "no kyu_watcher_binlog_lag_seconds"

# kyud's own writes (claim, results) woke nothing: settle, then count.
sleep 2
h0=$(hints)
sql "INSERT INTO kyu_jobs (id, command) VALUES ('one', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'one'" succeeded 30
sleep 2
assert_eq 1 $(($(hints) - h0)) "hints for one job inserted, claimed and recorded"

# An SQL retry, a resume, a late COMMIT (tests/lib/watch.sh).
watch_sql_cases

late=$(ms_between created_at started_at late)
echo "late COMMIT: started $late ms after its INSERT"
[ "$late" -ge 2900 ] || fail "the late transaction's job started $late ms after its INSERT, before its COMMIT"

# A burst: 10,000 rows in one INSERT.
sleep 2
h0=$(hints)
root_sql -D "$T_DB" -e "INSERT INTO kyu_jobs (id, command)
	SELECT CONCAT('burst', seq), 'true' FROM seq_1_to_10000"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'burst%' AND status = 'succeeded'" 10000 600
burst=$(($(hints) - h0))
echo "10,000 rows in one INSERT: $burst hint(s)"
[ "$burst" -le 50 ] || fail "10,000 rows in one INSERT gave $burst hints (at most 50)"

# Rotation and purge while the stream is open.
root_sql -e "FLUSH BINARY LOGS"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('rotated', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'rotated'" succeeded 30
root_sql -e "FLUSH BINARY LOGS"
current=$(root_sql -N -B -e "SHOW MASTER STATUS" | cut -f1)
root_sql -e "PURGE BINARY LOGS TO '$current'"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('purged', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'purged'" succeeded 30

# The server restarted: the watcher follows it again.
private_db_stop
private_db_start --log-bin=binlog --binlog-format=ROW --server-id=1
wait_for_log_count 'wake-ups: following the binary log' 2 60
sql "INSERT INTO kyu_jobs (id, command) VALUES ('restarted', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'restarted'" succeeded 60
stop_kyud
