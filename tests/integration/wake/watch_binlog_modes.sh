#!/usr/bin/env bash
# The watcher on the other binary log formats and without the privilege:
# in MIXED and STATEMENT format a statement that names kyu_jobs wakes the
# daemon; without REPLICATION SLAVE, wake_binlog = auto says why once and
# checks for changes instead, and wake_binlog = on refuses to run (exit
# status 78, the privilege named).
. "$KYU_SRC/tests/lib.sh"

private_db_start --log-bin=binlog --binlog-format=MIXED --server-id=1

# No privilege: on refuses.
write_ini "$T_DIR/on.ini" kyud.wake_binlog=on kyud.wake_poll=0
rc=0
timeout 60 "$KYUD" -c "$T_DIR/on.ini" 2>"$T_DIR/on.log" || rc=$?
cat "$T_DIR/on.log"
assert_eq 78 "$rc" "kyud's exit status with wake_binlog = on and no REPLICATION SLAVE"
grep -q 'wake_binlog = on in .*REPLICATION SLAVE' "$T_DIR/on.log" || fail "the refusal does not name the privilege"

# No privilege: auto falls back to the short poll, and says so once.
start_kyud kyud.wake_binlog=auto kyud.wake_poll=1 kyud.poll_interval=3600
wait_for_log 'wake-ups: not from the binary log: .*REPLICATION SLAVE' 30
sql "INSERT INTO kyu_jobs (id, command) VALUES ('polled', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'polled'" succeeded 30
sleep 2
assert_eq 1 "$(grep -c 'wake-ups: not from the binary log' "$KYUD_LOG")" "lines saying why the log is not read"
stop_kyud

root_sql -e "GRANT REPLICATION SLAVE ON *.* TO 'kyu'@'localhost'"
start_kyud kyud.wake_binlog=on kyud.wake_poll=0 kyud.poll_interval=3600
wait_for_log 'wake-ups: following the binary log' 30

# MIXED: an INSERT with an explicit id and only safe defaults is logged as
# a statement.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('mixed', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'mixed'" succeeded 30

# STATEMENT, for the sessions that begin after the change.
root_sql -e "SET GLOBAL binlog_format = 'STATEMENT'"
root_sql -D "$T_DB" -e "INSERT INTO kyu_jobs (id, command) VALUES ('stmt', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'stmt'" succeeded 30
# An SQL retry in statement format (an UPDATE: at most once a second).
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('sretry', 'false', 1)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'sretry'" failed 30
sql "UPDATE kyu_jobs SET status = 'waiting', command = 'true', run_at = NOW(6), attempts = 0, tempfails = 0,
	error = NULL WHERE id = 'sretry' AND status IN ('failed', 'cancelled')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'sretry'" succeeded 30
stop_kyud
