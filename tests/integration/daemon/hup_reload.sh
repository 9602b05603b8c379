#!/usr/bin/env bash
# SIGHUP reloads the configuration file: a valid change takes effect in the
# supervisor (worker count) and in the workers (a [job] key); an invalid
# file is refused with FILE:LINE in the log, and the old configuration stays
# in force with the daemon and its workers running on.
. "$KYU_SRC/tests/lib.sh"

workers() { pgrep -c -P "$KYUD_PID" || true; }
wait_workers() { # wait_workers N: the supervisor has exactly N children
	local deadline=$(($(date +%s) + 30))
	until [ "$(workers)" = "$1" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud has $(workers) worker processes, expected $1"
		sleep 0.1
	done
}
# run_exit7 ID: a job exiting 7; prints "status attempts error" once it has
# failed or is waiting for a retry.
run_exit7() {
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'exit 7')"
	wait_for "SELECT finished_at IS NOT NULL FROM kyu_jobs WHERE id = '$1'" 1 30
	sql "SELECT CONCAT_WS(' / ', status, attempts, error) FROM kyu_jobs WHERE id = '$1'"
}

# Backoff of a minute: a job that will be retried stays waiting.
start_kyud kyud.workers=2 job.backoff_base=60 job.backoff_cap=60
wait_workers 2
assert_eq "waiting / 1 / exit code 7" "$(run_exit7 before)" "exit 7 before the reload"

# ---- valid: one more worker, and exit code 7 made permanent.
write_ini "$KYUD_INI" kyud.workers=3 job.backoff_base=60 job.backoff_cap=60 job.permanent_exit_codes=7
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(hup_verdict)" "reload verdict"
wait_workers 3
assert_log_contains 'kyud\[sup\]: worker 3 started'
assert_eq "failed / 1 / exit code 7 (permanent: not retried)" "$(run_exit7 after)" "exit 7 after the reload"
old_workers=$(pgrep -P "$KYUD_PID" | sort | tr '\n' ' ')

# ---- invalid: an unknown key and fewer workers; nothing of it applies.
write_ini "$KYUD_INI" kyud.workers=1 kyud.no_such_key=1 job.backoff_base=60 job.backoff_cap=60
line=$(grep -n '^no_such_key = 1$' "$KYUD_INI" | cut -d: -f1)
verdict=$(hup_verdict)
assert_eq "kyud[sup]: reload failed, keeping old config: $KYUD_INI:$line: [kyud] no_such_key = '1': unknown key" \
	"$verdict" "reload verdict for the invalid file"
sleep 1 # what a wrongly applied reload would need to stop or restart workers
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died after the invalid reload"
assert_eq "$old_workers" "$(pgrep -P "$KYUD_PID" | sort | tr '\n' ' ')" "worker processes after the invalid reload"
# The workers kept the previous [job] settings: 7 is still permanent.
assert_eq "failed / 1 / exit code 7 (permanent: not retried)" "$(run_exit7 after-invalid)" "exit 7 after the invalid reload"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('still-runs', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'still-runs'" succeeded 30

# ---- valid again, shrinking: the extra worker drains and exits cleanly.
write_ini "$KYUD_INI" kyud.workers=2
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(hup_verdict)" "reload verdict after fixing the file"
wait_workers 2
assert_log_contains 'kyud\[sup\]: worker 3 \(pid [0-9]+\) exited$'
stop_kyud
