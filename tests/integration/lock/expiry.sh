#!/usr/bin/env bash
# kyu lock, the lease:
# - a holder killed with SIGKILL keeps the row until its lease expires
#   (kyu locks shows it); its command dies with it; a waiting kyu lock gets
#   the lock only after the row's expiry (database clock), and runs;
# - the lease taken away while the command runs (holder changed, or the
#   row expired): kyu kills the command's process group, SIGKILL for one
#   that ignores SIGTERM, and exits 70;
# - a database that does not answer the extension in time (the row locked
#   by another session): the same, before the lease ends;
# - SIGTERM, SIGINT and SIGHUP to kyu reach the command; the lock is
#   released when it ends.
# shellcheck disable=SC2016 # the commands' \$ expand in their own shell
. "$KYU_SRC/tests/lib.sh"

[ -n "${KYU:-}" ] || { echo "no kyu CLI built" >&2; exit 77; }
write_ini "$T_DIR/kyu.ini"
KYU_CMD=("$KYU" -c "$T_DIR/kyu.ini")
D=$T_DIR/marks
mkdir -p "$D"

held() { sql "SELECT COUNT(*) FROM kyu_locks WHERE name = '$1' AND holder IS NOT NULL AND expires >= UTC_TIMESTAMP(6)"; }

# wait_exit PID TIMEOUT_S WHAT: reap a background kyu; status in RC.
wait_exit() {
	wait_gone "$1" "$2" "$3"
	RC=0
	wait "$1" || RC=$?
}

# ---- 1. a holder killed with SIGKILL
"${KYU_CMD[@]}" lock dead --ttl 4 -- sh -c 'echo $$ >"$1/dead.pid"; exec sleep 60' sh "$D" &
victim=$!
EXTRA_PIDS="$EXTRA_PIDS $victim"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'dead' AND holder IS NOT NULL" 1 30
wait_until 60 "the command's pid file" test -s "$D/dead.pid"
child=$(cat "$D/dead.pid")
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
# Read after the kill: no extension can come any more.
old=$(sql "SELECT CONCAT(holder, ' ', expires) FROM kyu_locks WHERE name = 'dead'")
old_holder=${old%% *}
old_expires=${old#* }
# The command does not outlive kyu (its guardian kills it).
wait_gone "$child" 30 "the command of a kyu killed with SIGKILL"
"${KYU_CMD[@]}" locks dead >"$T_DIR/locks.txt" || fail "kyu locks dead"
grep -P "^dead\t0\t$(hostname)\t$victim\t" "$T_DIR/locks.txt" >/dev/null ||
	fail "kyu locks does not show the dead holder (pid $victim): $(cat "$T_DIR/locks.txt")"
# (Its own lease is long: what is tested is when it gets the row.)
"${KYU_CMD[@]}" lock dead --ttl 60 --wait 60 -- sh -c 'sleep 2' &
waiter=$!
EXTRA_PIDS="$EXTRA_PIDS $waiter"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'dead' AND holder <> $old_holder" 1 60
late=$(sql "SELECT acquired_at >= '$old_expires', TIMESTAMPDIFF(MICROSECOND, '$old_expires', acquired_at) / 1e6
            FROM kyu_locks WHERE name = 'dead'")
assert_eq 1 "${late%%	*}" "the next holder took the row at or after its expiry ($old_expires)"
wait_exit "$waiter" 60 "the second holder of dead"
assert_eq 0 "$RC" "status of the kyu lock that waited for the dead holder's lease"
echo "dead holder's lease expired $old_expires; taken over ${late#*	} s later"
# After the release: 'free'; a row past its expiry: 'expired'.
"${KYU_CMD[@]}" locks dead | grep -P '^dead\t0\t-\t-\t-\tfree$' >/dev/null ||
	fail "kyu locks after the release: $("${KYU_CMD[@]}" locks dead)"
sql "UPDATE kyu_locks SET holder = 5, host = 'elsewhere', pid = 1, acquired_at = UTC_TIMESTAMP(6) - INTERVAL 1 MINUTE,
     expires = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE name = 'dead'"
"${KYU_CMD[@]}" locks dead | grep -P '^dead\t0\telsewhere\t1\t.*\texpired$' >/dev/null ||
	fail "kyu locks of an expired row: $("${KYU_CMD[@]}" locks dead)"

# ---- 2. the lease taken away: holder changed; a group that ignores TERM
cmd='trap "" TERM; sleep 60 & echo $! >"$1/stolen.bg"; echo $$ >"$1/stolen.pid"; wait'
"${KYU_CMD[@]}" lock stolen --ttl 3 -- sh -c "$cmd" sh "$D" 2>"$T_DIR/stolen.err" &
kyu_pid=$!
EXTRA_PIDS="$EXTRA_PIDS $kyu_pid"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'stolen' AND holder IS NOT NULL" 1 30
wait_until 60 "the command's background pid file" test -s "$D/stolen.bg"
sql "UPDATE kyu_locks SET holder = 77 WHERE name = 'stolen'"
wait_exit "$kyu_pid" 60 "kyu lock whose lease was taken"
assert_eq 70 "$RC" "kyu lock's status when its lease was taken"
grep -q 'lease was lost' "$T_DIR/stolen.err" || fail "no message: $(cat "$T_DIR/stolen.err")"
wait_gone "$(cat "$D/stolen.pid")" 30 "the command whose lease was lost"
wait_gone "$(cat "$D/stolen.bg")" 30 "the background process of the command whose lease was lost"
assert_eq 77 "$(sql "SELECT holder FROM kyu_locks WHERE name = 'stolen'")" "the new holder's row, untouched"

# ---- 3. the lease expired under the holder
"${KYU_CMD[@]}" lock expired --ttl 3 -- sleep 60 2>"$T_DIR/expired.err" &
kyu_pid=$!
EXTRA_PIDS="$EXTRA_PIDS $kyu_pid"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'expired' AND holder IS NOT NULL" 1 30
sql "UPDATE kyu_locks SET expires = UTC_TIMESTAMP(6) - INTERVAL 1 SECOND WHERE name = 'expired'"
wait_exit "$kyu_pid" 60 "kyu lock whose lease expired"
assert_eq 70 "$RC" "kyu lock's status when its lease expired"

# ---- 4. the database does not answer the extension in time
# Another session locks the row: the extension waits past kyu's statement
# deadline (ttl/4), kyu reconnects and tries again, then stops the
# command before the lease ends.
"${KYU_CMD[@]}" lock frozen --ttl 8 -- sh -c 'echo $$ >"$1/frozen.pid"; exec sleep 60' sh "$D" 2>"$T_DIR/frozen.err" &
kyu_pid=$!
EXTRA_PIDS="$EXTRA_PIDS $kyu_pid"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'frozen' AND holder IS NOT NULL" 1 30
# READ COMMITTED: the row alone, no gap locks that would hold up the
# acquisitions of other names below.
root_sql -D "$T_DB" -e "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED; BEGIN; SELECT slot FROM kyu_locks WHERE name = 'frozen' FOR UPDATE; DO SLEEP(12); COMMIT" \
	>/dev/null 2>&1 &
blocker=$!
EXTRA_PIDS="$EXTRA_PIDS $blocker"
start=$EPOCHREALTIME
wait_exit "$kyu_pid" 30 "kyu lock whose extension got no answer"
assert_eq 70 "$RC" "kyu lock's status when the database did not answer"
grep -q 'could not be extended before it expires' "$T_DIR/frozen.err" ||
	fail "no message: $(cat "$T_DIR/frozen.err")"
wait_gone "$(cat "$D/frozen.pid")" 30 "the command whose lease could not be extended"
echo "no answer: kyu lock exited 70 $(awk "BEGIN { print $EPOCHREALTIME - $start }") s after the row was locked (ttl 8)"
kill "$blocker" 2>/dev/null || true
wait "$blocker" 2>/dev/null || true

# ---- 5. signals reach the command; the lock is released
for s in TERM INT HUP; do
	rm -f "$D/sig" "$D/ready"
	# env: a background job of a script starts with INT ignored, which kyu
	# (and so its command) would keep.
	# A lease far longer than the part takes: it is about the signals.
	env --default-signal "${KYU_CMD[@]}" lock sig --ttl 60 -- \
		sh -c 'trap "echo $0 >\"$1/sig\"; kill \$!; exit 9" '"$s"'; : >"$1/ready"; sleep 60 & wait' "$s" "$D" &
	kyu_pid=$!
	EXTRA_PIDS="$EXTRA_PIDS $kyu_pid"
	wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'sig' AND holder IS NOT NULL" 1 30
	wait_until 60 "the command's trap to be set" test -e "$D/ready"
	kill -"$s" "$kyu_pid"
	wait_exit "$kyu_pid" 60 "kyu lock after SIG$s"
	assert_eq 9 "$RC" "kyu lock's status after SIG$s (the command's trap exits 9)"
	assert_eq "$s" "$(cat "$D/sig" 2>/dev/null)" "the signal the command trapped"
	assert_eq 0 "$(held sig)" "holders of sig after SIG$s"
done
