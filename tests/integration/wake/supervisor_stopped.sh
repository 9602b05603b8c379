#!/usr/bin/env bash
# A worker that hears nothing from its supervisor looks for jobs by itself
# (issue 24): with the supervisor stopped (SIGSTOP), no poll and no wake-up
# reaches the workers, yet a job inserted then starts within about
# 1.5 poll intervals (poll_interval 2: 3 s) and long before the supervisor
# is resumed (20 s). Before, it waited for the resume.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=2 kyud.poll_interval=2 kyud.log_level=info
wait_workers_idle 2
signal_kyud STOP
EXIT_HOOKS+=("kill -CONT $KYUD_PID 2>/dev/null")
sql "INSERT INTO kyu_jobs (id, command) VALUES ('alone', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'alone'" succeeded 15
state=$(sed 's/.*) //' "/proc/$KYUD_PID/stat" | cut -d' ' -f1)
assert_eq T "$state" "the supervisor's state while the job ran (still stopped)"
signal_kyud CONT
assert_log_contains 'looking for jobs every 3 s by itself'
wait_for_log 'the supervisor answers again' 15
stop_kyud
