#!/usr/bin/env bash
# A job that fails twice, then succeeds: it is retried with exponential
# backoff (base 3 s, cap 5 s, jitter factor 0.5-1) and ends succeeded after
# 3 attempts. Between attempts the row is waiting, shows the last error and
# has run_at in the future (database clock).
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 job.backoff_base=3 job.backoff_cap=5 job.max_attempts=3
sql "INSERT INTO kyu_jobs (id, command) VALUES ('flaky', '
  echo \$KYU_ATTEMPT >> $T_DIR/starts
  [ \$KYU_ATTEMPT -ge 3 ] && exit 0
  echo \"boom \$KYU_ATTEMPT\"; exit 4')"

# The waits are 1.5-3 s and 2.5-5 s long (long enough for a client on a
# loaded machine to catch them): snapshot the row as fast as the client
# goes, one statement per snapshot so that its values belong together:
# status attempts run_at-in-future backoff-us exit_code output | error
snapshots=$T_DIR/snapshots
deadline=$(($(date +%s) + 60))
while :; do
	snap=$(sql "SELECT CONCAT_WS(' ', status, attempts, run_at > NOW(6),
	                    IFNULL(TIMESTAMPDIFF(MICROSECOND, finished_at, run_at), '-'),
	                    IFNULL(exit_code, '-'), IFNULL(TRIM(TRAILING '\n' FROM CAST(output AS CHAR)), '-'), '|', IFNULL(error, '-'))
	            FROM kyu_jobs WHERE id = 'flaky'")
	echo "$snap" >>"$snapshots"
	case $snap in succeeded*) break ;; esac
	[ "$(date +%s)" -lt "$deadline" ] || fail "flaky job not succeeded after 60 s; last: $snap"
done

# check_wait ATTEMPT MIN_US MAX_US: some snapshot caught the wait after
# ATTEMPT failed, with the error, exit code and output of that attempt and
# run_at in the future; and the backoff (run_at - finished_at, both set by the
# same statement) lies within base * 2^(ATTEMPT-1), capped, times 0.5-1.
check_wait() {
	local a=$1 lo=$2 hi=$3 line us
	line=$(grep -m1 -E "^waiting $a 1 [0-9]+ 4 boom $a [|] exit code 4: boom $a$" "$snapshots") ||
		fail "no snapshot of the row waiting after attempt $a with run_at in the future and error 'exit code 4: boom $a'; seen: $(grep "^waiting $a " "$snapshots" | sort -u | tr '\n' ';')"
	us=$(echo "$line" | cut -d' ' -f4)
	{ [ "$us" -ge "$lo" ] && [ "$us" -le "$hi" ]; } ||
		fail "backoff after attempt $a: ${us} us, expected $lo..$hi"
}
check_wait 1 1500000 3000000
check_wait 2 2500000 5000000

assert_eq "succeeded	3	0	NULL	NULL" \
	"$(sql "SELECT status, attempts, exit_code, IFNULL(error, 'NULL'), IFNULL(output, 'NULL') FROM kyu_jobs WHERE id = 'flaky'")" \
	"final status, attempts, exit_code, error, output"
assert_eq "1 2 3" "$(tr '\n' ' ' <"$T_DIR/starts" | sed 's/ $//')" "KYU_ATTEMPT of the starts"
assert_log_contains 'job flaky will retry: exit code 4'
stop_kyud
