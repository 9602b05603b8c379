#!/usr/bin/env bash
# A command that exits 3 ends as failed with exit_code 3 once its attempts
# are used up (max_attempts = 1), and kyud logs the failure at info level.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 job.max_attempts=1
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('bad', 'echo started >> $T_DIR/bad.started; exit 3'),
     ('good', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('failed', 'succeeded')" 2 30
stop_kyud

assert_eq "failed	3	1" "$(sql "SELECT status, exit_code, attempts FROM kyu_jobs WHERE id = 'bad'")" \
	"bad job status, exit_code, attempts"
assert_eq 1 "$(sql "SELECT finished_at IS NOT NULL FROM kyu_jobs WHERE id = 'bad'")" "bad job has a finish time"
assert_eq 1 "$(wc -l <"$T_DIR/bad.started")" "starts of the bad job"
assert_eq "succeeded	0" "$(sql "SELECT status, exit_code FROM kyu_jobs WHERE id = 'good'")" "good job"
assert_log_contains 'kyud\[worker [0-9]+\]: job bad .*failed'
