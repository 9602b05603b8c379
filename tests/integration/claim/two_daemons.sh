#!/usr/bin/env bash
# Two kyud daemons (3 workers each) on one table: 2,000 jobs, each run exactly
# once, both daemons take part, and no claim deadlock is fatal.
. "$KYU_SRC/tests/lib.sh"

second_pid=
stop_second() {
	local rc=$?
	[ -z "$second_pid" ] || kill -KILL "$second_pid" 2>/dev/null || true
	(exit "$rc")
	cleanup
}
trap stop_second EXIT

start_kyud kyud.workers=3
write_ini "$T_DIR/second.ini" kyud.workers=3
env --default-signal "$KYUD" -c "$T_DIR/second.ini" 2>>"$T_DIR/second.log" &
second_pid=$!
for _ in $(seq 600); do
	grep -q 'kyud\[sup\]: ready:' "$T_DIR/second.log" && break
	sleep 0.1
done
grep -q 'kyud\[sup\]: ready:' "$T_DIR/second.log" || fail "second kyud not ready"

# Inserted in 20 statements so that both daemons see a stream, not one batch.
for i in $(seq 0 19); do
	sql "INSERT INTO kyu_jobs (id, command)
	     SELECT CONCAT('d', seq), 'echo \$KYU_JOB_ID >> $T_DIR/ran'
	     FROM seq_$((i * 100 + 1))_to_$((i * 100 + 100))"
done
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2000 30

kill -TERM "$second_pid"
wait "$second_pid" || fail "second kyud exited with status $?"
second_pid=
stop_kyud

assert_each_ran_once 2000 "$T_DIR/ran"
a=$(grep -c 'job d[0-9]* attempt 1 started' "$KYUD_LOG" || true)
b=$(grep -c 'job d[0-9]* attempt 1 started' "$T_DIR/second.log" || true)
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "jobs ran on one daemon only (first $a, second $b)"
assert_eq 2000 "$((a + b))" "attempts started by both daemons together"
# A deadlock is retried (a debug line, and counted in the exit summary),
# never logged as a failure or a dropped result.
if grep -i 'deadlock\|dropping' "$KYUD_LOG" "$T_DIR/second.log" |
	grep -v -e 'exiting:' -e ': last ' -e 'deadlock, trying again' | grep . >/dev/null; then
	fail "a deadlock was not absorbed: $(grep -hi 'deadlock\|dropping' "$KYUD_LOG" "$T_DIR/second.log" |
		grep -v -e 'exiting:' -e ': last ' -e 'deadlock, trying again' | sed -n 1,3p)"
fi
grep -h 'exiting:' "$KYUD_LOG" "$T_DIR/second.log"
