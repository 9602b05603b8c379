#!/usr/bin/env bash
# No busy waiting (issue 24): with the database frozen (SIGSTOP) for 5 s
# while jobs run, kyud's processes sleep until an event or a real
# deadline. During the freeze a heartbeat (every second) is sent and hangs
# while the next falls due; the fence kills nothing (lease 20), so the
# supervisor and its four workers together use a few ticks of CPU, not
# seconds: before the fix each worker re-armed its tick at 0 while a
# statement was in flight, and the four burned 2.3 CPU-seconds in those
# 5 s on a 2-core machine (10 ms after it).
# Bound: 0.5 s (50 ticks), one tenth of what the spin cost, far above what
# an idle loop takes even under ASan on a loaded machine.
. "$KYU_SRC/tests/lib.sh"

ticks() { # CPU ticks (utime + stime) of the supervisor and its workers
	local p t=0
	for p in "$KYUD_PID" $(pgrep -P "$KYUD_PID"); do
		t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
	done
	echo "$t"
}

# A server of its own: the shared one must not stop under other tests.
private_db_start
start_kyud kyud.workers=4 kyud.slots=2 kyud.lease=20 kyud.fence_margin=5 kyud.heartbeat=1 kyud.shutdown_grace=2
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('z', seq), 'sleep 30' FROM seq_1_to_8"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'" 8 60
db_pid=$(cat "$PRIVATE_DB_DIR/mysqld.pid")
hz=$(getconf CLK_TCK)
a=$(ticks)
kill -STOP "$db_pid"
EXIT_HOOKS+=("kill -CONT $db_pid")
sleep 5
b=$(ticks)
kill -CONT "$db_pid"
ms=$(((b - a) * 1000 / hz))
echo "kyud's CPU while the database was frozen for 5 s: $ms ms"
[ "$ms" -le 500 ] || fail "kyud used $ms ms of CPU in 5 s with the database frozen (busy waiting; at most 500)"
# And it carries on once the server answers: the jobs are still running
# under their own leases, and a TERM drains them.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'" 8 30
stop_kyud 60
