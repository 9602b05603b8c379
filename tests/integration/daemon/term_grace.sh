#!/usr/bin/env bash
# TERM with a short shutdown_grace: a job that outlasts the grace is killed
# (its whole process group), put back to waiting, and kyud exits 0 promptly.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.shutdown_grace=1 job.kill_grace=1
sql "INSERT INTO kyu_jobs (id, command) VALUES ('long', 'sleep 60; touch $T_DIR/never')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long' AND pid IS NOT NULL" running 30
job_pid=$(sql "SELECT pid FROM kyu_jobs WHERE id = 'long'")
# The shell's child, the `sleep`, is in the job's process group too.
for _ in $(seq 200); do
	sleeper=$(pgrep -P "$job_pid" -x sleep) && break
	sleep 0.1
done
[ -n "$sleeper" ] || fail "no sleep process under the job's shell (pid $job_pid)"

t0=$(date +%s)
signal_kyud TERM
wait_kyud_exit 40
elapsed=$(($(date +%s) - t0))
assert_eq 0 "$KYUD_STATUS" "kyud exit status after TERM"
assert_no_sanitizer_report
assert_no_worker_death
# grace 1 s + kill_grace 1 s + bookkeeping: 2-3 s. The bound tells the
# grace's doing from waiting for the job (60 s), with room for a loaded
# machine.
[ "$elapsed" -le 20 ] || fail "kyud took $elapsed s to stop with shutdown_grace = 1"

assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'long'")" "status of the interrupted job"
for p in $job_pid $sleeper; do
	! pid_alive "$p" || fail "process $p of the interrupted job is still running"
done
[ ! -e "$T_DIR/never" ] || fail "the interrupted job ran to its end"
assert_log_contains 'kyud\[sup\]: stopped'
