#!/usr/bin/env bash
# kyu wait [--timeout S] ID (issue 45): waits through CALL kyu_wait, prints
# the job's final status and exits as it ended: 0 succeeded, 2 failed (the
# error's first line on stderr), 3 cancelled; 75 with the status it has
# when --timeout passes first (0: read once); 1 for an id no job has and
# for a row deleted while waited for. A wait without --timeout outlasts
# one CALL (20 s each): the cancelled job is cancelled after 21 s. As an
# account of docs/install.md's submitters it needs EXECUTE on kyu_wait.
. "$KYU_SRC/tests/lib.sh"
[ -x "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }
start_kyud

# wait_rc WANT NAME ARGS...: run kyu wait ARGS, its status WANT; stdout in
# $T_DIR/NAME.out, stderr in $T_DIR/NAME.err.
wait_rc() {
	local want=$1 name=$2 rc=0
	shift 2
	kyu wait "$@" >"$T_DIR/$name.out" 2>"$T_DIR/$name.err" || rc=$?
	assert_eq "$want" "$rc" "kyu wait $* ($name): status (stderr: $(cat "$T_DIR/$name.err"))"
}

# Cancelled, waited for without --timeout from the start: in the
# background while the others run.
kyu submit -i w-cancel -- sleep 300 >/dev/null || fail "submit w-cancel"
started=$(date +%s)
rc_cancel=0
kyu wait w-cancel >"$T_DIR/cancel.out" 2>"$T_DIR/cancel.err" &
waiter=$!

kyu submit -i w-ok -s 'sleep 1; echo done' >/dev/null || fail "submit w-ok"
wait_rc 0 ok w-ok
assert_eq succeeded "$(cat "$T_DIR/ok.out")" "kyu wait of a job that succeeds: stdout"
assert_eq succeeded "$(sql "SELECT status FROM kyu_jobs WHERE id = 'w-ok'")" "w-ok's row once kyu wait returned"
assert_eq "" "$(cat "$T_DIR/ok.err")" "kyu wait of a job that succeeds: stderr"

kyu submit -i w-fail -m 1 -s 'echo "disk full on /srv" >&2; exit 3' >/dev/null || fail "submit w-fail"
wait_rc 2 fail --timeout 120 w-fail
assert_eq failed "$(cat "$T_DIR/fail.out")" "kyu wait of a job that fails: stdout"
grep -q "^kyu: wait: job w-fail failed: " "$T_DIR/fail.err" ||
	fail "kyu wait of a job that fails: stderr does not say so: $(cat "$T_DIR/fail.err")"

# A job due tomorrow has not ended when --timeout passes: its status, 75,
# and not before the time given.
kyu submit -i w-later -d 86400 -s true >/dev/null || fail "submit w-later"
t0=$(date +%s%N)
wait_rc 75 later --timeout 1.5 w-later
waited_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$waited_ms" -ge 1500 ] || fail "kyu wait --timeout 1.5 returned after $waited_ms ms"
assert_eq waiting "$(cat "$T_DIR/later.out")" "kyu wait --timeout of a job not ended: stdout"
grep -q "job w-later has not ended within 1.5 s (waiting)" "$T_DIR/later.err" ||
	fail "kyu wait --timeout: stderr: $(cat "$T_DIR/later.err")"
wait_rc 75 later0 --timeout 0 w-later
assert_eq waiting "$(cat "$T_DIR/later0.out")" "kyu wait --timeout 0: stdout"
# An ended job with --timeout 0: read once, its status.
wait_rc 0 ok0 --timeout 0 w-ok

# An account of docs/install.md's submitters: with EXECUTE on kyu_wait it
# waits; without, the server's refusal (1).
client=w_${T_DB#t_}
client=${client:0:80}
root_sql <<-SQL
	DROP USER IF EXISTS '$client'@'localhost';
	CREATE USER '$client'@'localhost' IDENTIFIED BY 'kyu';
	GRANT SELECT, INSERT, UPDATE ON $T_DB.kyu_jobs TO '$client'@'localhost';
	GRANT SELECT ON $T_DB.kyu_daemons TO '$client'@'localhost';
SQL
write_ini "$T_DIR/client.ini" database.user="$client" database.password=kyu
rc=0
"$KYU" -c "$T_DIR/client.ini" wait w-ok >"$T_DIR/noexec.out" 2>"$T_DIR/noexec.err" || rc=$?
assert_eq 1 "$rc" "kyu wait without EXECUTE on kyu_wait (stderr: $(cat "$T_DIR/noexec.err"))"
grep -q "^kyu: wait: .*kyu_wait" "$T_DIR/noexec.err" || fail "kyu wait without EXECUTE: stderr: $(cat "$T_DIR/noexec.err")"
root_sql -e "GRANT EXECUTE ON PROCEDURE $T_DB.kyu_wait TO '$client'@'localhost'"
rc=0
"$KYU" -c "$T_DIR/client.ini" wait w-ok >"$T_DIR/client.out" 2>"$T_DIR/client.err" || rc=$?
assert_eq 0 "$rc" "kyu wait as a submitter's account (stderr: $(cat "$T_DIR/client.err"))"
assert_eq succeeded "$(cat "$T_DIR/client.out")" "kyu wait as a submitter's account: stdout"
root_sql -e "DROP USER '$client'@'localhost'"

# No such job.
wait_rc 1 unknown w-nope
assert_eq "" "$(cat "$T_DIR/unknown.out")" "kyu wait of an unknown id: stdout"
grep -q "no job with id 'w-nope'" "$T_DIR/unknown.err" || fail "kyu wait of an unknown id: stderr: $(cat "$T_DIR/unknown.err")"

# The background waiter has made more than one CALL when its job is
# cancelled.
wait_for "SELECT status FROM kyu_jobs WHERE id = 'w-cancel'" running 60
left=$((started + 21 - $(date +%s)))
[ "$left" -le 0 ] || sleep "$left"
kill -0 "$waiter" 2>/dev/null || fail "kyu wait w-cancel returned before the job was cancelled: $(cat "$T_DIR/cancel.out" "$T_DIR/cancel.err")"
kyu cancel w-cancel >/dev/null || fail "kyu cancel w-cancel"
wait "$waiter" || rc_cancel=$?
assert_eq 3 "$rc_cancel" "kyu wait of a job cancelled while it runs (stderr: $(cat "$T_DIR/cancel.err"))"
assert_eq cancelled "$(cat "$T_DIR/cancel.out")" "kyu wait of a cancelled job: stdout"

# A row deleted while waited for: once the waiter sleeps in the procedure
# (the processlist shows the statement it is at), the only one now.
rc=0
kyu wait --timeout 60 w-later >"$T_DIR/gone.out" 2>"$T_DIR/gone.err" &
gone=$!
wait_for "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND INFO LIKE 'DO SLEEP(%'" 1 30
sql "DELETE FROM kyu_jobs WHERE id = 'w-later'"
wait "$gone" || rc=$?
assert_eq 1 "$rc" "kyu wait of a row deleted meanwhile (stderr: $(cat "$T_DIR/gone.err"))"
grep -q "the row is gone (deleted) of job 'w-later'" "$T_DIR/gone.err" || fail "kyu wait of a deleted row: stderr: $(cat "$T_DIR/gone.err")"
stop_kyud
echo "kyu wait: succeeded, failed, cancelled after 21 s or more, timeouts, unknown and deleted ids"
