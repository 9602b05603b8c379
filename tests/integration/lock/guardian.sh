#!/usr/bin/env bash
# kyu lock takes its whole command with it (issue 25, item 14): one
# holder's work at a time means every process the command started, not
# only its first.
# - kyu killed with SIGKILL: the command, a background grandchild and a
#   grandchild in a session of its own (setsid, out of the process group)
#   are all gone soon after, and the next kyu lock gets the lock and runs;
# - the command ends while a background child still runs: that child is
#   gone by the time kyu has exited (the lock is released after it), and
#   kyu exits with the command's status.
# shellcheck disable=SC2016 # the commands' \$ expand in their own shell
. "$KYU_SRC/tests/lib.sh"

[ -n "${KYU:-}" ] || { echo "no kyu CLI built" >&2; exit 77; }
write_ini "$T_DIR/kyu.ini"
KYU_CMD=("$KYU" -c "$T_DIR/kyu.ini")
D=$T_DIR/marks
mkdir -p "$D"

# On a failure: end what is left, and only what this test started (its
# pids may be another's by then; these sleep for 3171 s).
kill_left() {
	local p
	for p in "$@"; do
		if grep -qa 3171 "/proc/$p/cmdline" 2>/dev/null; then kill -KILL "$p" 2>/dev/null || true; fi
	done
}
wait_file() { # FILE
	local _
	for _ in $(seq 300); do [ -s "$1" ] && return; sleep 0.1; done
	fail "$1 was not written"
}

# ---- 1. kyu killed with SIGKILL
cmd='sleep 3171 & echo $! >"$1/bg.pid"
setsid sh -c "echo \$\$ >\"$1/escaped.pid\"; exec sleep 3171" &
echo $$ >"$1/main.pid"; exec sleep 3171'
"${KYU_CMD[@]}" lock L --ttl 4 -- sh -c "$cmd" sh "$D" &
victim=$!
EXTRA_PIDS="$EXTRA_PIDS $victim"
wait_file "$D/main.pid"
wait_file "$D/bg.pid"
wait_file "$D/escaped.pid"
main=$(cat "$D/main.pid") bg=$(cat "$D/bg.pid") escaped=$(cat "$D/escaped.pid")
EXIT_HOOKS+=("kill_left $main $bg $escaped")
pid_alive "$bg" || fail "the background grandchild did not start"
# The escaped one really is outside the command's process group.
[ "$(ps -o pgid= -p "$escaped" | tr -d ' ')" != "$main" ] || fail "setsid did not leave the group"
kill -KILL "$victim"
wait "$victim" 2>/dev/null || true
wait_gone "$main" 30 "the command"
wait_gone "$bg" 30 "the command's background child"
wait_gone "$escaped" 30 "the command's child in a session of its own"
# The next holder gets the lock (after the dead one's lease) and runs.
rc=0
"${KYU_CMD[@]}" lock L --ttl 4 --wait 60 -- sh -c 'echo ran >"$1/next"' sh "$D" 2>"$T_DIR/next.err" || rc=$?
assert_eq 0 "$rc" "status of the next kyu lock L ($(cat "$T_DIR/next.err"))"
assert_eq ran "$(cat "$D/next" 2>/dev/null)" "the next holder's command"

# ---- 2. the command leaves a child behind and exits 3
rc=0
"${KYU_CMD[@]}" lock L -- sh -c 'sleep 3171 & echo $! >"$1/left.pid"; exit 3' sh "$D" || rc=$?
assert_eq 3 "$rc" "status of kyu lock (the command's)"
left=$(cat "$D/left.pid")
EXIT_HOOKS+=("kill_left $left")
# No wait: kyu exits only after the guardian has reaped it.
if pid_alive "$left"; then fail "the child the command left (pid $left) outlived kyu lock"; fi
"${KYU_CMD[@]}" locks L | grep -P '^L\t0\t-\t-\t-\tfree$' >/dev/null ||
	fail "kyu locks after the release: $("${KYU_CMD[@]}" locks L)"
