#!/usr/bin/env bash
# TERM: kyud stops acquiring, lets the running job finish, and exits 0.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.shutdown_grace=30
# The running job ends when the test opens its gate (or after 90 s).
sql "INSERT INTO kyu_jobs (id, command) VALUES ('drain',
     'for i in \$(seq 900); do [ -e $T_DIR/gate ] && break; sleep 0.1; done; touch $T_DIR/done')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'drain'" running 30
# Due 3 s after its INSERT, which is right before the TERM: a stopping kyud
# must not acquire it, though it is due while the drain goes on.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('after-term', 'touch $T_DIR/after', NOW(6) + INTERVAL 3 SECOND)"
signal_kyud TERM
# Two polls (1 s) past its run_at, the job still draining; then let it end.
wait_for "SELECT NOW(6) > run_at + INTERVAL 2 SECOND FROM kyu_jobs WHERE id = 'after-term'" 1 30
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud exited before its running job ended"
touch "$T_DIR/gate"
wait_kyud_exit 30
assert_eq 0 "$KYUD_STATUS" "kyud exit status after TERM"
assert_no_sanitizer_report
assert_no_worker_death

[ -e "$T_DIR/done" ] || fail "the running job did not finish (no $T_DIR/done)"
assert_eq "succeeded	0" "$(sql "SELECT status, exit_code FROM kyu_jobs WHERE id = 'drain'")" "drained job"
assert_eq "waiting	0" "$(sql "SELECT status, attempts FROM kyu_jobs WHERE id = 'after-term'")" "job submitted after TERM"
[ ! -e "$T_DIR/after" ] || fail "a job was started after TERM"
assert_log_contains 'kyud\[sup\]: stopping'
assert_log_contains 'kyud\[sup\]: stopped'
