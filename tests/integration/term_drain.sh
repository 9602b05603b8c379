#!/usr/bin/env bash
# TERM: kyud stops acquiring, lets the running job finish, and exits 0.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.shutdown_grace=30
sql "INSERT INTO kyu_jobs (id, command) VALUES ('drain', 'sleep 3; touch $T_DIR/done')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'drain'" running 10
# Due 1 s after TERM, while the drain still has ~2 s (two polls) to go: a
# stopping kyud must not acquire it.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('after-term', 'touch $T_DIR/after', NOW(6) + INTERVAL 1 SECOND)"
signal_kyud TERM
wait_kyud_exit 20
assert_eq 0 "$KYUD_STATUS" "kyud exit status after TERM"
assert_no_sanitizer_report
assert_no_worker_death

[ -e "$T_DIR/done" ] || fail "the running job did not finish (no $T_DIR/done)"
assert_eq "succeeded	0" "$(sql "SELECT status, exit_code FROM kyu_jobs WHERE id = 'drain'")" "drained job"
assert_eq "waiting	0" "$(sql "SELECT status, attempts FROM kyu_jobs WHERE id = 'after-term'")" "job submitted after TERM"
[ ! -e "$T_DIR/after" ] || fail "a job was started after TERM"
assert_log_contains 'kyud\[sup\]: stopping'
assert_log_contains 'kyud\[sup\]: stopped'
