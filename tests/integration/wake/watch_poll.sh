#!/usr/bin/env bash
# Without a binary log (the shared server runs with --skip-log-bin) and
# without kyu's help, the watcher's short poll starts plain SQL work: a
# plain INSERT, an SQL retry, a resumed queue, a transaction that commits
# seconds after its INSERT. poll_interval is an hour, so nothing but the
# watcher can find these jobs. Idle, it costs one statement per wake_poll.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/watch.sh"

use_own_db_user
# shellcheck disable=SC2086
mport=$(free_tcp_port)
start_kyud $T_USER_KV kyud.wake_binlog=@default kyud.wake_poll=@default kyud.poll_interval=3600 \
	job.max_attempts=1 kyud.metrics="127.0.0.1:$mport"
wait_for_log 'wake-ups: not from the binary log: .*log_bin is OFF' 30
# Two workers idle, and the watcher, whose connection is never idle for a
# second (it asks every second); the metrics process's connection, once it
# has read the table's figures, idle too.
workers_and_watcher_idle() {
	local deadline=$(($(date +%s) + 30 * KYU_TIME_SCALE)) got
	while :; do
		got=$(root_sql -N -B -e "SELECT COUNT(*), COALESCE(SUM(COMMAND = 'Sleep' AND TIME_MS >= 1000), 0)
			FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND ID <> CONNECTION_ID()")
		case $got in "3	2" | "3	3" | "4	3" | "4	4") return 0 ;; esac
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "expected 3 connections, 2 of them idle (4 and 3 with the metrics process's); got $got"
		sleep 0.2
	done
}
workers_and_watcher_idle

# The mode in /metrics (the poll's connection may take a moment).
mode_is_poll() { http_get "http://127.0.0.1:$mport/metrics" | grep -q '^kyu_watcher_mode{mode="poll"} 1$'; }
wait_until 30 "kyu_watcher_mode poll" mode_is_poll

# Plain INSERTs, one at a time.
for i in 1 2 3 4; do
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('plain$i', 'true')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'plain$i'" succeeded 30
done

# An SQL retry, a resume, a late COMMIT (tests/lib/watch.sh).
watch_sql_cases

# Idle: the watcher's one statement a second (wake_poll = 1), the daemon's
# registry refreshes, nothing per worker.
workers_and_watcher_idle
count_statements 6
max=$((IDLE_MS / 900 + 2 + REGISTRY_STATEMENTS * $(max_registry "$IDLE_MS")))
echo "idle with the watcher polling: $IDLE_N statement(s) in $IDLE_MS ms (at most $max)"
[ "$IDLE_N" -ge 3 ] || fail "the watcher sent $IDLE_N statements in $IDLE_MS ms: it does not poll"
[ "$IDLE_N" -le "$max" ] || fail "an idle daemon sent $IDLE_N statements in $IDLE_MS ms (at most $max)"
# Said once, not at every check.
assert_eq 1 "$(grep -c 'wake-ups: not from the binary log' "$KYUD_LOG")" "lines saying why the log is not read"
stop_kyud
