#!/usr/bin/env bash
# A worker that has lost a job's lease to another claim must not write to
# the row any more. Every update matches on the claim token (owner), so:
# (1) results of attempts that end after the row was taken over are
#     rejected and logged, the row is left exactly as the new owner has it;
# (2) a heartbeat that finds the row taken over kills the attempt, and
#     writes nothing either.
# The "other claim" is simulated in SQL, as another worker's claim would
# leave the row: new owner, new lease, one more attempt, other host.
. "$KYU_SRC/tests/lib.sh"

steal() { # steal ID...: take the running rows over; prints how many
	local ids
	ids=$(printf "'%s'," "$@")
	sql "UPDATE kyu_jobs SET owner = 12345, lease_until = NOW(6) + INTERVAL 1 HOUR, attempts = attempts + 1,
	            host = 'other-host', started_at = NOW(6)
	     WHERE id IN (${ids%,}) AND status = 'running' AND finished_at IS NULL;
	     SELECT ROW_COUNT()"
}
# Every column a late write could touch, and updated_at, which any change moves.
snapshot() {
	sql "SELECT CONCAT_WS('|', id, status, owner, lease_until, attempts, tempfails, run_at, host,
	                      IFNULL(pid, '-'), IFNULL(exit_code, '-'), IFNULL(\`signal\`, '-'), IFNULL(error, '-'),
	                      IFNULL(HEX(output), '-'), started_at, IFNULL(finished_at, '-'), IFNULL(duration, '-'),
	                      updated_at)
	     FROM kyu_jobs WHERE id IN ('plain', 'failing', 'stolen') ORDER BY id"
}
wait_log() { # wait_log ERE TIMEOUT_S
	local deadline=$(($(date +%s) + $2))
	until grep -Eq -- "$1" "$KYUD_LOG"; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no log line matching /$1/ after $2 s"
		sleep 0.1
	done
}

# ---- (1) the results arrive after the takeover. No heartbeat in between
# (the first one is due 100 s after the claim, far beyond what a loaded
# machine takes for the steps below), so the attempts run to their end and
# kyud tries to record them: a plain success and a failure with output
# (two different statements). They end when the test opens their gate,
# after the takeover, however slowly the test gets there.
start_kyud kyud.workers=1 kyud.lease=120 kyud.heartbeat=100
# (At most 60 s of sleeps, well before the heartbeat.)
gate="for i in \$(seq 600); do [ -e $T_DIR/gate ] && break; sleep 0.1; done"
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('plain', '$gate'),
     ('failing', '$gate; echo output; exit 3')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'" 2 30
assert_eq 2 "$(steal plain failing)" "rows taken over while their attempts ran"
before=$(snapshot)
touch "$T_DIR/gate"
wait_log 'late write; 2 so far' 60
# Give a wrongly accepted write time to land before looking.
sleep 0.5
assert_eq "$before" "$(snapshot)" "rows after kyud's late results"
assert_log_contains 'kyud\[worker 1\]: [0-9] result\(s\) rejected: the job.s lease had passed to another claim'
stop_kyud
assert_log_contains 'exiting: .* 2 late write\(s\) rejected'

# ---- (2) the takeover is seen by a heartbeat (lease 8 s: every 2 s; a
# shorter lease could run out on a loaded machine before the takeover, and
# kyud would then rightly claim the row again itself):
# the attempt is killed, nothing is written.
start_kyud kyud.workers=1 kyud.lease=8 job.kill_grace=1
sql "INSERT INTO kyu_jobs (id, command) VALUES ('stolen', 'echo \$\$ > $T_DIR/stolen.pid; sleep 30; touch $T_DIR/stolen.done')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'stolen'" running 30
wait_until 60 "the job's pid file" test -s "$T_DIR/stolen.pid"
job_pid=$(cat "$T_DIR/stolen.pid")
# The shell starts its sleep just after writing its pid.
sleeper_of() { sleeper=$(pgrep -P "$job_pid" -x sleep); }
wait_until 60 "a sleep under the job's shell $job_pid" sleeper_of
assert_eq 1 "$(steal stolen)" "row taken over while its attempt ran"
before=$(snapshot)
wait_log 'job stolen: lease lost to another claim; killing attempt 1' 30
wait_log 'job stolen: attempt 1 abandoned: its lease was lost' 30
for p in $job_pid $sleeper; do
	wait_until 60 "process $p of the attempt that lost its lease to end" pid_gone "$p"
done
sleep 2.5 # another heartbeat: it must not touch the row either
assert_eq "$before" "$(snapshot)" "rows after the attempt that lost its lease was killed"
stop_kyud
[ ! -e "$T_DIR/stolen.done" ] || fail "the attempt that lost its lease ran to its end"
