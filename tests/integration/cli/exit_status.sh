#!/usr/bin/env bash
# Every command kyu lists in `kyu --help` (tests/lib/commands.sh: a command
# added there is covered here at once, and fails until this table gives it
# arguments) exits non-zero with a message on stderr when the database
# cannot be reached: 69 (EX_UNAVAILABLE) for all of them, the bulk forms of
# cancel, retry and delete included; check reports the connection as a
# problem (1); web, a server, keeps serving and answers every request with
# the database's error. Bad arguments exit 64 before the database is tried.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }
# shellcheck source=tests/lib/commands.sh
. "$KYU_SRC/tests/lib/commands.sh"

write_ini "$T_DIR/down.ini" database.socket=/nonexistent.sock
kyu() { "$KYU" -c "$T_DIR/down.ini" "$@"; }

# args_of COMMAND: the argument lists to run COMMAND with, one a line (as
# shell words), each one that gets past the usage checks to the database.
args_of() {
	case $1 in
	submit) echo "-s true"; echo "-q mail -- /bin/true" ;;
	show | run-now) echo "job-1" ;;
	logs) echo "job-1"; echo "-f job-1" ;;
	wait) echo "job-1"; echo "--timeout 5 job-1" ;;
	cancel | retry | delete) echo "job-1"; echo "-q mail --yes"; echo "--cause 0123abcd --yes" ;;
	causes) echo ""; echo "-q mail 0123abcd" ;;
	list) echo ""; echo "-s failed -n 5" ;;
	wake) echo ""; echo "mail" ;;
	daemons | stats | queues | schedules | locks | check) echo "" ;;
	drain) echo "1"; echo "somehost:123" ;;
	pause | resume | queue-reset) echo "mail" ;;
	limit | key-limit) echo "mail 2" ;;
	"schedule add") echo "nightly '0 2 * * *' -s true" ;;
	"schedule "*) echo "nightly" ;;
	lock) echo "nightly -- true" ;;
	"schema status" | "schema upgrade") echo "" ;;
	web) echo "" ;;
	*) return 1 ;;
	esac
}

mapfile -t cmds < <(kyu_commands)
[ "${#cmds[@]}" -ge 20 ] || fail "only ${#cmds[@]} commands read from kyu --help: ${cmds[*]}"
runs=0
for c in "${cmds[@]}"; do
	lists=$(args_of "$c") || fail "kyu $c: no arguments for it in this test's table (args_of)"
	[ "$c" = web ] && continue
	while IFS= read -r a; do
		rc=0
		eval "kyu $c $a" >"$T_DIR/out" 2>"$T_DIR/err" </dev/null || rc=$?
		want=69
		[ "$c" = check ] && want=1
		assert_eq "$want" "$rc" "kyu $c $a with the database down: status (stderr: $(cat "$T_DIR/err"))"
		grep -q "cannot connect" "$T_DIR/err" ||
			fail "kyu $c $a with the database down: stderr does not say so: $(cat "$T_DIR/err")"
		runs=$((runs + 1))
	done <<<"$lists"
done

# kyu web serves, and says the database is down on every data request.
# shellcheck source=tests/lib/web.sh
. "$KYU_SRC/tests/lib/web.sh"
start_web "$(free_tcp_port)" -- database.socket=/nonexistent.sock
resp=$(http_get "$WEB_URL/api/overview")
[ "$(head -n1 <<<"$resp")" != 200 ] || fail "kyu web: /api/overview answered 200 with the database down: $resp"
grep -q "cannot connect" <<<"$resp" || fail "kyu web: /api/overview does not name the database error: $resp"
stop_web

# Bad arguments: 64 whether the database answers or not.
for a in "submit -p high -s true" "list -s bogus" "cancel -s bogus --yes" "daemons extra" \
	"drain" "drain a b" "show" "schema upgrade -w 0" "wait" "wait --timeout -1 job-1" "wait a b"; do
	rc=0
	eval "kyu $a" >"$T_DIR/out" 2>"$T_DIR/err" </dev/null || rc=$?
	assert_eq 64 "$rc" "kyu $a: status (stderr: $(cat "$T_DIR/err"))"
	[ -s "$T_DIR/err" ] || fail "kyu $a: nothing on stderr"
done
echo "ran ${#cmds[@]} commands ($runs runs) against a database that cannot be reached"
