#!/usr/bin/env bash
# How exit codes use up attempts:
# - any other code is retried until max_attempts, then the job fails;
# - a code in [job] permanent_exit_codes fails at once;
# - 75 (EX_TEMPFAIL) goes back to waiting with backoff and is counted in
#   `tempfails`, not against max_attempts: it repeats without limit.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 job.backoff_base=1 job.backoff_cap=1 job.permanent_exit_codes=42 job.max_attempts=3
# Each job appends KYU_ATTEMPT to its own file at every start.
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES
     ('exhaust',   'echo \$KYU_ATTEMPT >> $T_DIR/exhaust; exit 3', 2),
     ('permanent', 'echo \$KYU_ATTEMPT >> $T_DIR/permanent; exit 42', 5),
     ('tempfail',  'echo \$KYU_ATTEMPT >> $T_DIR/tempfail; exit 75', 1),
     ('temp-then-ok', 'echo \$KYU_ATTEMPT >> $T_DIR/temp-then-ok; [ \$KYU_ATTEMPT -ge 3 ] || exit 75', 1),
     ('temp-then-fail', 'echo \$KYU_ATTEMPT >> $T_DIR/temp-then-fail; [ \$KYU_ATTEMPT -ge 2 ] || exit 75; exit 3', 2)"

starts() { tr '\n' ' ' <"$T_DIR/$1" | sed 's/ $//'; }
row() { sql "SELECT CONCAT_WS(' / ', status, attempts, tempfails, IFNULL(exit_code, 'NULL'), IFNULL(error, 'NULL')) FROM kyu_jobs WHERE id = '$1'"; }

wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('exhaust', 'permanent', 'temp-then-ok', 'temp-then-fail')
          AND status IN ('succeeded', 'failed')" 4 40

assert_eq "failed / 2 / 0 / 3 / exit code 3 (attempt 2 of 2)" "$(row exhaust)" "exhaust: status / attempts / tempfails / exit_code / error"
assert_eq "1 2" "$(starts exhaust)" "starts of exhaust"

assert_eq "failed / 1 / 0 / 42 / exit code 42 (permanent: not retried)" "$(row permanent)" \
	"permanent: status / attempts / tempfails / exit_code / error"
assert_eq "1" "$(starts permanent)" "starts of permanent (max_attempts 5)"

# max_attempts 1, yet three attempts: the two 75s did not count.
assert_eq "succeeded / 3 / 2 / 0 / NULL" "$(row temp-then-ok)" "temp-then-ok: status / attempts / tempfails / exit_code / error"
assert_eq "1 2 3" "$(starts temp-then-ok)" "starts of temp-then-ok"
# max_attempts 2: one 75, then two real failures use up both attempts.
assert_eq "failed / 3 / 1 / 3" "$(row temp-then-fail | cut -d/ -f1-4 | sed 's/ $//')" \
	"temp-then-fail: status / attempts / tempfails / exit_code"
assert_eq "1 2 3" "$(starts temp-then-fail)" "starts of temp-then-fail"
case $(row temp-then-fail) in *" / exit code 3"*) ;; *) fail "temp-then-fail error: $(row temp-then-fail)" ;; esac

# The job that always exits 75 (max_attempts 1) keeps coming back: waiting
# for its retry with run_at ahead, the 75 recorded, each one in tempfails...
wait_for "SELECT status = 'waiting' AND attempts >= 1 AND tempfails = attempts AND exit_code = 75
                 AND error = 'temporary failure (exit 75): retrying later' AND run_at > NOW(6)
          FROM kyu_jobs WHERE id = 'tempfail'" 1 30
# ... and past max_attempts.
wait_for "SELECT attempts >= 3 AND tempfails >= 2 AND status IN ('waiting', 'running') FROM kyu_jobs WHERE id = 'tempfail'" 1 30
[ "$(wc -l <"$T_DIR/tempfail")" -ge 3 ] || fail "tempfail started $(wc -l <"$T_DIR/tempfail") time(s), expected 3 or more"
assert_log_contains 'job tempfail will retry: temporary failure \(exit 75\)'
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'tempfail'"
stop_kyud
