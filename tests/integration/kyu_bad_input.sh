#!/usr/bin/env bash
# `kyu` never stores something other than what was asked: arguments and -e
# values that are not valid UTF-8 (the argv and env columns are JSON) and an
# empty id are refused with an error naming them, and nothing is inserted;
# quotes, backslashes and SQL in any argument are stored as plain text.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }

expect_refused() { # WHAT TEXT ARGS...
	local what=$1 text=$2 rc=0
	shift 2
	kyu "$@" >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	[ "$rc" != 0 ] || fail "$what: accepted (stdout: $(cat "$T_DIR/out"))"
	grep -qF -- "$text" "$T_DIR/err" || fail "$what: stderr lacks '$text': $(cat "$T_DIR/err")"
}
expect_refused "latin-1 argument" "argument 4 is not valid UTF-8" \
	submit -i x1 -- sh -c 'rm -rf "$1"/*' _ $'/srv/caf\xe9'
expect_refused "latin-1 -e value" "-e 'NAME=caf" submit -i x2 -e $'NAME=caf\xe9' -- true
expect_refused "empty id" "-i: the id must not be empty" submit -i '' -- true
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows inserted by refused submits"

# Hostile text goes in as text.
evil="'; DROP TABLE kyu_jobs; -- \\ \" \`"
kyu submit -i "$evil" -q "q'\\" -C "/tmp/'x" -e "V=$evil" -s "echo '$evil'" >"$T_DIR/out" ||
	fail "submit of hostile text failed"
assert_eq "$evil" "$(cat "$T_DIR/out")" "id printed back"
row=$(sql "SELECT queue = 'q''\\\\', cwd = '/tmp/''x', JSON_VALUE(env, '\$.V') = id, command = CONCAT('echo ''', id, '''')
           FROM kyu_jobs WHERE id = '$(printf %s "$evil" | sed "s/'/''/g; s/\\\\/\\\\\\\\/g")'")
assert_eq "1	1	1	1" "$row" "queue, cwd, env and command stored as given"
kyu show "$evil" >/dev/null || fail "kyu show of the hostile id failed"
kyu cancel "$evil" >/dev/null || fail "kyu cancel of the hostile id failed"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE queue = 'q''\\\\'")" "status after cancel"
