#!/usr/bin/env bash
# A worker killed with SIGKILL in the middle of a job: the supervisor
# restarts it, the job's lease expires (nobody heartbeats it any more) and
# the job runs again -- at-least-once -- but not while the lease was alive.
. "$KYU_SRC/tests/lib.sh"

lease=6
WORKER_DEATHS_OK=1 # the one we kill
start_kyud kyud.workers=1 kyud.lease=$lease job.max_attempts=3
# Each start appends a line: the host's time in seconds, the attempt number.
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('victim', 'echo \$(date +%s) \$KYU_ATTEMPT >> $T_DIR/starts; [ \$KYU_ATTEMPT -ge 2 ] || sleep 10')"
# Attempt 1 outlives the delays of a loaded machine before the kill (it ran
# 3 s, and once ended before the test got to kill its worker); attempt 2,
# after the lease, ends at once.
wait_for "SELECT status FROM kyu_jobs WHERE id = 'victim' AND pid IS NOT NULL" running 30

# The row's pid is the job's; its parent is the worker running it.
job_pid=$(sql "SELECT pid FROM kyu_jobs WHERE id = 'victim'")
assert_eq "$(uname -n)" "$(sql "SELECT host FROM kyu_jobs WHERE id = 'victim'")" "host column"
worker=$(ps -o ppid= -p "$job_pid" | tr -d ' ') || fail "job pid $job_pid from the row is not running"
pgrep -P "$KYUD_PID" | grep -x "$worker" >/dev/null ||
	fail "the parent of job pid $job_pid ($worker) is not a worker of kyud $KYUD_PID"
kill -KILL "$worker"

wait_for "SELECT status FROM kyu_jobs WHERE id = 'victim'" succeeded $((lease + 60))
assert_eq 2 "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'victim'")" "attempts"
assert_eq 2 "$(wc -l <"$T_DIR/starts")" "starts in the job's marker file"
{ read -r first attempt1; read -r second attempt2; } <"$T_DIR/starts"
assert_eq "1 2" "$attempt1 $attempt2" "KYU_ATTEMPT of the two starts"
# Claimed at ~first, the lease ran until first + lease; allow 1 s for clock
# granularity. An earlier second start means the job ran under a live lease.
[ $((second - first)) -ge $((lease - 1)) ] ||
	fail "job re-run after $((second - first)) s, before its $lease s lease expired"
assert_log_contains "kyud\[sup\]: worker [0-9]+ \(pid $worker\) killed by signal 9"
assert_log_contains 'restarting in'
stop_kyud
# The killed worker was the only one to die.
assert_eq 1 "$(grep -Ec 'kyud\[sup\]: worker [0-9]+ \(pid [0-9]+\) (killed by signal|exited with status [1-9])' "$KYUD_LOG")" \
	"worker deaths in the log"
