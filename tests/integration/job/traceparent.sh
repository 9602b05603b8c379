#!/usr/bin/env bash
# Trace context (kyu_jobs(7), "Trace context"): a job's traceparent reaches
# it as TRACEPARENT (over one its env names); a value that is not a W3C
# traceparent is refused at INSERT (SQLSTATE KYU03, naming it; kyu submit
# --traceparent says so); a row updated to a bad value after its INSERT
# fails unstarted when kyud claims it, with an error naming the column
# and the value; kyu show prints it.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }
tp=00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01

# Refused at INSERT: SQL and kyu submit.
for bad in 00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01 \
	ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01 \
	00-00000000000000000000000000000000-00f067aa0ba902b7-01 \
	00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01 \
	00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7 'x'; do
	err=$(sql "INSERT INTO kyu_jobs (id, command, traceparent) VALUES ('bad', 'true', '$bad')" 2>&1) &&
		fail "INSERT with traceparent '$bad' accepted"
	[[ $err == *"(KYU03)"*"is not a W3C traceparent"*"$bad"* ]] || fail "INSERT of '$bad': $err"
done
rc=0
kyu submit -i bad --traceparent 00-XYZ -- true 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "exit status of a bad --traceparent"
grep -qF "kyu: submit: not submitted: traceparent of job bad is not a W3C traceparent" "$T_DIR/err" ||
	fail "submit's message: $(cat "$T_DIR/err")"
grep -qF ": 00-XYZ" "$T_DIR/err" || fail "submit's message lacks the value: $(cat "$T_DIR/err")"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows of refused INSERTs"

start_kyud kyud.workers=1 job.max_attempts=1
kyu submit -i traced --traceparent "$tp" -e TRACEPARENT=from-env -- sh -c 'echo "tp=$TRACEPARENT"' >/dev/null
kyu submit -i untraced -e TRACEPARENT=from-env -- sh -c 'echo "tp=$TRACEPARENT"' >/dev/null
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2 60
assert_eq "tp=$tp" "$(sql "SELECT TRIM(TRAILING 0x0a FROM output) FROM kyu_jobs WHERE id = 'traced'")" "TRACEPARENT of the traced job"
assert_eq "tp=from-env" "$(sql "SELECT TRIM(TRAILING 0x0a FROM output) FROM kyu_jobs WHERE id = 'untraced'")" "TRACEPARENT of a job without one"
kyu show traced | grep -q "^ *traceparent: $tp\$" || fail "kyu show lacks the traceparent: $(kyu show traced)"
kyu show untraced | grep -q "^ *traceparent" && fail "kyu show prints an unset traceparent"

# Made bad by an UPDATE after the INSERT's check: failed when claimed.
kyu submit -i later -d 3600 --traceparent "$tp" -- touch "$T_DIR/ran" >/dev/null
sql "UPDATE kyu_jobs SET traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01', run_at = NOW(6) WHERE id = 'later'"
kyu wake >/dev/null 2>&1 || true
wait_for "SELECT status FROM kyu_jobs WHERE id = 'later'" failed 60
assert_eq "traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00F067AA0BA902B7-01': not a W3C traceparent (VV-TRACEID32-PARENTID16-FLAGS, lowercase hex, not all zeros): refused" \
	"$(sql "SELECT error FROM kyu_jobs WHERE id = 'later'")" "error of the row made bad"
[ -e "$T_DIR/ran" ] && fail "the job with a bad traceparent ran"
stop_kyud
