#!/usr/bin/env bash
# Two kyud on one host (kyud@.service): a second kyud whose [kyud] listen
# address is taken by the first exits 78 at once, naming the address and its
# file, and leaves the first running; with an address of its own it runs
# beside the first, and both take jobs.
. "$KYU_SRC/tests/lib.sh"

second_pid=
stop_second() {
	local rc=$?
	[ -z "$second_pid" ] || kill -KILL "$second_pid" 2>/dev/null || true
	(exit "$rc")
	cleanup
}
trap stop_second EXIT

port=$(free_udp_port)
start_kyud kyud.workers=1 kyud.slots=2 kyud.prefetch=0 kyud.listen="127.0.0.1:$port"
assert_log_contains "listening for wake-ups on udp 127.0.0.1:$port"

# The same address: refused before any worker starts.
write_ini "$T_DIR/second.ini" kyud.workers=1 kyud.listen="127.0.0.1:$port"
rc=0
timeout 20 env --default-signal "$KYUD" -c "$T_DIR/second.ini" 2>"$T_DIR/second.err" >/dev/null || rc=$?
cat "$T_DIR/second.err" >>"$KYUD_LOG"
assert_eq 78 "$rc" "exit status of a second kyud on a taken listen address"
grep -F "cannot listen on udp 127.0.0.1:$port: Address already in use" "$T_DIR/second.err" >/dev/null ||
	fail "the second kyud did not say the address is in use: $(cat "$T_DIR/second.err")"
grep -F "[kyud] listen = '127.0.0.1:$port' in $T_DIR/second.ini cannot be used" "$T_DIR/second.err" >/dev/null ||
	fail "the second kyud did not name the listen key and its file: $(cat "$T_DIR/second.err")"
if grep -E 'worker [0-9]+ .*started|ready:' "$T_DIR/second.err" >/dev/null; then
	fail "the second kyud got as far as workers: $(cat "$T_DIR/second.err")"
fi
pid_alive "$KYUD_PID" || fail "the first kyud died when the second was refused"

# An address of its own: both run, and both take jobs.
port2=$(free_udp_port)
write_ini "$T_DIR/second.ini" kyud.workers=1 kyud.slots=2 kyud.prefetch=0 kyud.listen="127.0.0.1:$port2"
env --default-signal "$KYUD" -c "$T_DIR/second.ini" 2>>"$T_DIR/second.log" &
second_pid=$!
for _ in $(seq 600); do
	grep 'kyud\[sup\]: ready:' "$T_DIR/second.log" >/dev/null && break
	kill -0 "$second_pid" 2>/dev/null || break
	sleep 0.1
done
grep 'kyud\[sup\]: ready:' "$T_DIR/second.log" >/dev/null ||
	fail "second kyud with its own address not ready: $(tail -n 5 "$T_DIR/second.log")"
grep -F "listening for wake-ups on udp 127.0.0.1:$port2" "$T_DIR/second.log" >/dev/null ||
	fail "second kyud does not listen on 127.0.0.1:$port2"

# Jobs that take a moment each, so that one daemon cannot take them all.
sql "INSERT INTO kyu_jobs (id, command)
     SELECT CONCAT('j', seq), 'sleep 0.2; echo \$KYU_JOB_ID >> $T_DIR/ran' FROM seq_1_to_40"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 40 120
kill -TERM "$second_pid"
rc=0
wait "$second_pid" || rc=$?
second_pid=
assert_eq 0 "$rc" "exit status of the second kyud after TERM"
stop_kyud

assert_each_ran_once 40 "$T_DIR/ran"
a=$(grep -c 'job j[0-9]* attempt 1 started' "$KYUD_LOG" || true)
b=$(grep -c 'job j[0-9]* attempt 1 started' "$T_DIR/second.log" || true)
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "jobs ran on one daemon only (first $a, second $b)"
