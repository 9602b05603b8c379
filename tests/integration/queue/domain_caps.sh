#!/usr/bin/env bash
# kyud not running as root (issue 15), as the systemd drop-in of kyud(8)
# sets it up: user kyut_a with the ambient capabilities CAP_SETUID,
# CAP_SETGID and CAP_KILL and nothing else.
#   - without them, a queue naming another user is a config error (78);
#   - with them, kyud runs one queue's jobs as kyut_b and another's as
#     itself, kills a kyut_b job at its time limit (CAP_KILL), and no job
#     holds any capability (effective, permitted, inheritable, ambient);
#   - user = root from a non-root kyud is refused.
. "$KYU_SRC/tests/lib.sh"
ensure_test_users
command -v setpriv >/dev/null || { echo "SKIP: $T_NAME: setpriv (util-linux) is missing"; exit 77; }

# kyud reaches the database over TCP (the test socket's directory is
# root's) and reads its ini as kyut_a. Its ini files and a copy of kyud
# itself (which the supervisor executes again for each worker, by the path
# of /proc/self/exe) lie in a directory of the test's own under /tmp: the
# build tree may be below a directory only root can enter (a clone in
# `mktemp -d`).
CAPS_DIR=$(mktemp -d /tmp/kyu-caps.XXXXXX)
EXIT_HOOKS+=("rm -rf '$CAPS_DIR'")
chmod 0755 "$CAPS_DIR"
cp "$KYUD" "$CAPS_DIR/kyud"
KYUD=$CAPS_DIR/kyud
tcp=(database.socket= database.host=127.0.0.1 database.port="$KYU_DB_PORT")
as_a=(setpriv --reuid=kyut_a --regid=kyut_a --init-groups)
# shellcheck disable=SC2054 # setpriv takes comma-separated lists
caps=(--inh-caps=+setuid,+setgid,+kill --ambient-caps=+setuid,+setgid,+kill --bounding-set=-all,+setuid,+setgid,+kill)

check() { # check INI [setpriv options...]: kyud --check-config as kyut_a; prints rc and stderr
	local ini=$1 rc=0
	shift
	"${as_a[@]}" "$@" "$KYUD" -c "$ini" --check-config >/dev/null 2>"$T_DIR/err" || rc=$?
	echo "$rc $(cat "$T_DIR/err")"
}

write_ini "$CAPS_DIR/plain.ini" "${tcp[@]}" queue.*.user= queue.own.limit_cpu=100
# Private to the user kyud runs as: a password every user may read is refused.
chown kyut_a "$CAPS_DIR/plain.ini" && chmod 0600 "$CAPS_DIR/plain.ini"
assert_eq "0 " "$(check "$CAPS_DIR/plain.ini")" "a non-root kyud, no user named: accepted"
write_ini "$CAPS_DIR/other.ini" "${tcp[@]}" queue.*.user= queue.b.user=kyut_b
# Private to the user kyud runs as: a password every user may read is refused.
chown kyut_a "$CAPS_DIR/other.ini" && chmod 0600 "$CAPS_DIR/other.ini"
got=$(check "$CAPS_DIR/other.ini")
[[ $got == "78 kyud: $CAPS_DIR/other.ini:"*"[queue.b] user = 'kyut_b': kyud runs as uid $(id -u kyut_a) without CAP_SETUID"* ]] ||
	fail "user = kyut_b without capabilities: expected a refusal, got: $got"
assert_eq "0 " "$(check "$CAPS_DIR/other.ini" "${caps[@]}")" "user = kyut_b with CAP_SETUID, CAP_SETGID: accepted"
write_ini "$CAPS_DIR/root.ini" "${tcp[@]}" queue.*.user= queue.r.user=root
# Private to the user kyud runs as: a password every user may read is refused.
chown kyut_a "$CAPS_DIR/root.ini" && chmod 0600 "$CAPS_DIR/root.ini"
got=$(check "$CAPS_DIR/root.ini" "${caps[@]}")
[[ $got == "78 "*"[queue.r] user = 'root': kyud does not run as root"* ]] ||
	fail "user = root from a non-root kyud: expected a refusal, got: $got"
echo "config: another user needs CAP_SETUID/CAP_SETGID; root is refused"

# The real thing.
write_ini "$CAPS_DIR/caps.ini" "${tcp[@]}" kyud.workers=1 queue.*.user= queue.b.user=kyut_b queue.b.time_limit=1
# Private to the user kyud runs as: a password every user may read is refused.
chown kyut_a "$CAPS_DIR/caps.ini" && chmod 0600 "$CAPS_DIR/caps.ini"
env --default-signal "${as_a[@]}" "${caps[@]}" "$KYUD" -c "$CAPS_DIR/caps.ini" 2>>"$KYUD_LOG" &
KYUD_PID=$!
deadline=$(($(date +%s) + 20 * KYU_TIME_SCALE))
until grep 'kyud\[sup\]: ready:' "$KYUD_LOG" >/dev/null; do
	kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud as kyut_a exited before it was ready"
	[ "$(date +%s)" -lt "$deadline" ] || fail "kyud as kyut_a not ready after 20 s"
	sleep 0.1
done
report='id -un; grep ^Cap /proc/self/status | tr "\t\n" "  "'
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES
     ('as-b', 'b', JSON_ARRAY('/bin/sh', '-c', '$report')),
     ('as-self', 'own', JSON_ARRAY('/bin/sh', '-c', '$report')),
     ('b-slow', 'b', '[\"/bin/sleep\", \"60\"]')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('as-b', 'as-self') AND status = 'succeeded'" 2 30
out() { root_sql -N -B -r -D "$T_DB" -e "SELECT output FROM kyu_jobs WHERE id = '$1'"; }
zero="CapInh: 0000000000000000 CapPrm: 0000000000000000 CapEff: 0000000000000000"
for id in as-b as-self; do
	o=$(out $id)
	[[ $o == *"$zero"*"CapAmb: 0000000000000000"* ]] || fail "$id: the job holds capabilities: $o"
done
assert_eq kyut_b "$(out as-b | sed -n 1p)" "as-b: user"
assert_eq kyut_a "$(out as-self | sed -n 1p)" "as-self: user (kyud's own)"
wait_for "SELECT CONCAT(status, ' ', LEFT(error, 17)) FROM kyu_jobs WHERE id = 'b-slow'" "waiting timed out after 1" 40
# Its own process, by the pid kyud logged: other tests running at the same
# time may run sleeps as kyut_b too.
slow_pid=$(sed -n 's/^kyud\[worker 1\]: job b-slow attempt 1 started (pid \([0-9]*\))$/\1/p' "$KYUD_LOG")
[ -n "$slow_pid" ] || fail "no start line for b-slow in $KYUD_LOG"
if pid_alive "$slow_pid" && [ "$(stat -c %U "/proc/$slow_pid" 2>/dev/null)" = kyut_b ]; then
	fail "b-slow's sleep (pid $slow_pid, user kyut_b) outlived its time limit"
fi
kill -TERM "$KYUD_PID"
wait "$KYUD_PID" || fail "kyud as kyut_a exited with status $?"
KYUD_PID=
echo "a non-root kyud with CAP_SETUID/SETGID/KILL ran jobs as kyut_b and itself, none holding a capability, and killed one at its time limit"
