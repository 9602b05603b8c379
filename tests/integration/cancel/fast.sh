#!/usr/bin/env bash
# Fast cancel: a running job whose row is cancelled stops within a round
# trip, not at the next heartbeat (15 s here, lease 30 s):
# - a plain UPDATE, through the trigger of sql/notify.sql (the cancel hint,
#   "kyu:" 0x18, to the daemons of the job's queue);
# - kyu cancel, which sends the hint itself: works without the triggers
#   (the second half runs after sql/unnotify.sql).
# Bounds of 5 s for a loaded machine: the point is "not 15 s". The UDF
# must be in the server's plugin directory: this test runs its own
# mariadbd. Skipped (77) when the plugin is not built.
. "$KYU_SRC/tests/lib.sh"

udf_require
port=$(free_udp_port)
udf_db_start '' "127.0.0.1:$port"

start_kyud kyud.workers=2 kyud.lease=30 kyud.heartbeat=15 job.kill_grace=1 \
	kyud.listen="127.0.0.1:$port"
wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr IS NOT NULL" 1 30

# run_sleeper ID: a running job whose shell wrote its pid; prints the pid.
run_sleeper() {
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'echo \$\$ > $T_DIR/$1.pid; exec sleep 60')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" running 60
	wait_until 60 "the pid file of $1" test -s "$T_DIR/$1.pid"
	# Past the first heartbeat (it carries the pid): the next is 15 s away.
	wait_for "SELECT pid IS NOT NULL FROM kyu_jobs WHERE id = '$1'" 1 60
	cat "$T_DIR/$1.pid"
}

# gone_within ID PID: the process ends within 5 s of now, the row stays
# cancelled with the attempt's end recorded.
gone_within() {
	local t0=$SECONDS
	while ! pid_gone "$2"; do
		[ $((SECONDS - t0)) -lt 5 ] || fail "$1: process $2 still there 5 s after the cancel"
		sleep 0.1
	done
	echo "$1: process gone after $((SECONDS - t0)) s"
	wait_for "SELECT CONCAT(status, ' ', finished_at IS NOT NULL) FROM kyu_jobs WHERE id = '$1'" \
		"cancelled 1" 30
}

# ---- a plain UPDATE, the triggers installed
pid=$(run_sleeper plain)
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'plain' AND status = 'running'"
gone_within plain "$pid"
assert_log_contains 'job plain: cancelled; terminating its process group'

# ---- kyu cancel, without the triggers
root_sql -D "$T_DB" <"$KYU_SRC/sql/unnotify.sql" || fail "sql/unnotify.sql failed"
pid=$(run_sleeper cli)
"$KYU" -c "$KYUD_INI" cancel cli | grep -x 'cancelled cli' >/dev/null || fail "kyu cancel cli"
gone_within cli "$pid"

stop_kyud
assert_log_lacks 'failed:'
