#!/usr/bin/env bash
# A flood of kyu_notify calls from any account does not starve a real
# wake-up: while one connection calls it millions of times, naming one
# made-up queue or distinct made-up names (to another allowed address, so
# that its datagrams do not wake this kyud themselves), an INSERT from
# another connection still wakes kyud: the job starts within WAKE_MAX_S
# although nothing else can (poll_interval an hour, wake_binlog off,
# wake_poll 0). Before the per-pair windows and per-target budgets, the
# flood spent the process's 2,000/s bucket as fast as it refilled, and the
# INSERT's wake-up was dropped. The UDF must be in the server's plugin
# directory: this test runs its own mariadbd. Skipped (77) when the plugin
# is not built.
. "$KYU_SRC/tests/lib.sh"

udf_require

# No latency target: the poll would take an hour; a loaded 2-core machine
# starts a woken job within a second or two.
WAKE_MAX_S=10

port=$(free_udp_port)
sink=$(free_udp_port) # listed, nobody listens: the floods go there
udf_db_start '' "127.0.0.1:$port" "127.0.0.1:$sink"

start_kyud kyud.workers=2 kyud.poll_interval=3600 kyud.wake_binlog=off kyud.wake_poll=0 \
	kyud.listen="127.0.0.1:$port" job.max_attempts=1
wait_workers_idle 2
wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr = '127.0.0.1:$port' AND live_until > NOW(6)" 1 30

# flood_while_insert ID FLOOD-EXPRESSION: the flood runs (seconds: 50
# million calls) in the background, the INSERT comes once it has run for a
# while, and the flood is killed once the job has started.
flood_while_insert() {
	local conn pid
	sql "SELECT SUM($2) FROM seq_1_to_50000000" >/dev/null 2>&1 &
	pid=$!
	wait_for "SELECT COUNT(*) FROM information_schema.PROCESSLIST
		WHERE INFO LIKE 'SELECT SUM(kyu_notify(%' AND TIME_MS > 500" 1 30
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'true')"
	conn=$(sql "SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SUM(kyu_notify(%'")
	[ -n "$conn" ] || fail "$1: the flood ended before the INSERT did (too short for this machine?)"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" succeeded "$WAKE_MAX_S"
	echo "$1: started $(ms_between created_at started_at "$1") ms after its INSERT, during the flood"
	root_sql <<<"KILL QUERY $conn" || true
	wait "$pid" || true
}
flood_while_insert same "kyu_notify('x', '127.0.0.1:$sink')"
flood_while_insert distinct "kyu_notify(CONCAT('x', seq), '127.0.0.1:$sink')"
stop_kyud
