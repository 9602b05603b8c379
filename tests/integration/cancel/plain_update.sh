#!/usr/bin/env bash
# Cancelling with a plain UPDATE: a waiting job never runs, not even after
# its run_at; a running one is terminated at the next heartbeat (lease 8 s:
# every 2 s; a lease of a few seconds could run out on a loaded machine,
# and kyud would then rightly claim the job again), not when it ends by
# itself (60 s), and its row stays
# cancelled with the attempt's results.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.lease=8 job.kill_grace=1

# ---- (a) waiting, due in 3 s; cancelled in the same session, so that a
# slow machine cannot let the 3 s pass in between.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('later', 'touch $T_DIR/later.ran', NOW(6) + INTERVAL 3 SECOND);
     UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'later' AND status = 'waiting'"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = 'later'")" "status of the cancelled waiting job"

# ---- (b) running: the job records its pid, then sleeps.
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('busy', 'echo \$\$ > $T_DIR/busy.pid; sleep 60; touch $T_DIR/busy.done')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'busy'" running 30
wait_until 60 "the job's pid file" test -s "$T_DIR/busy.pid"
shell_pid=$(cat "$T_DIR/busy.pid")
sleeper_of() { sleeper=$(pgrep -P "$shell_pid" -x sleep); }
wait_until 60 "a sleep under the job's shell $shell_pid" sleeper_of
# The database clock at the cancel, to time the reaction with.
cancelled_at=$(sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'busy' AND status = 'running';
                    SELECT NOW(6)")
# One heartbeat (2 s), TERM, the end of the attempt recorded: about 2 s on
# a quiet machine. The bound, 20 s, tells a heartbeat's doing from the job's
# own end (60 s) with room for a loaded machine.
wait_for "SELECT finished_at IS NOT NULL FROM kyu_jobs WHERE id = 'busy'" 1 30
assert_eq 1 "$(sql "SELECT finished_at <= '$cancelled_at' + INTERVAL 20 SECOND FROM kyu_jobs WHERE id = 'busy'")" \
	"attempt ended within 20 s of the cancel (cancelled at $cancelled_at, finished at $(sql "SELECT finished_at FROM kyu_jobs WHERE id = 'busy'"))"
assert_eq "cancelled	NULL	15	cancelled while running; process group terminated	NULL" \
	"$(sql "SELECT status, IFNULL(exit_code, 'NULL'), \`signal\`, error, IFNULL(lease_until, 'NULL') FROM kyu_jobs WHERE id = 'busy'")" \
	"busy: status, exit_code, signal, error, lease_until"
for p in $shell_pid $sleeper; do
	wait_until 60 "process $p of the cancelled job to end" pid_gone "$p"
done
assert_log_contains 'job busy: cancelled; terminating its process group'

# ---- (a) again, now that its run_at has passed by two poll intervals.
wait_for "SELECT NOW(6) > run_at + INTERVAL 2 SECOND FROM kyu_jobs WHERE id = 'later'" 1 30
stop_kyud
[ ! -e "$T_DIR/later.ran" ] || fail "the cancelled waiting job ran"
[ ! -e "$T_DIR/busy.done" ] || fail "the cancelled running job ran to its end"
assert_eq "cancelled	0	NULL	NULL" \
	"$(sql "SELECT status, attempts, IFNULL(started_at, 'NULL'), IFNULL(error, 'NULL') FROM kyu_jobs WHERE id = 'later'")" \
	"later: status, attempts, started_at, error"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = 'busy'")" "busy status after stop"
