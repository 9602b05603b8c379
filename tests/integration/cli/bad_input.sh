#!/usr/bin/env bash
# `kyu` never stores something other than what was asked: arguments and -e
# values that are not valid UTF-8 (the argv and env columns are JSON) and an
# empty id are refused with an error naming them, and nothing is inserted;
# quotes, backslashes and SQL in any argument are stored as plain text.
# Every bad option value, unknown option, unknown command and wrong number
# of arguments exits 64 with an error that names the value (and, for a
# choice, the accepted ones), nothing on stdout, with or without a
# reachable database; kyu list -s retrying lists the jobs waiting after a
# failed attempt; kyu list shows the error column and a killed job's signal,
# and says on stderr when more rows exist than it shows.
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

# ---- usage errors: status 64, the bad value named, nothing on stdout
expect_usage() { # WHAT TEXT ARGS...
	local what=$1 text=$2 rc=0
	shift 2
	kyu "$@" >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 64 "$rc" "$what: status (stderr: $(cat "$T_DIR/err"))"
	grep -qF -- "$text" "$T_DIR/err" || fail "$what: stderr lacks '$text': $(cat "$T_DIR/err")"
	[ ! -s "$T_DIR/out" ] || fail "$what: stdout: $(cat "$T_DIR/out")"
}
sql "DELETE FROM kyu_jobs"
expect_usage "list -s bogus" "no status 'bogus'; one of waiting, running, succeeded, failed, cancelled, blocked, retrying" list -s bogus
expect_usage "list -n 0" "-n: '0' is not a whole number from 1 to 1000000" list -n 0
expect_usage "list -n x" "-n: 'x' is not" list -n x
expect_usage "list -q ''" "-q: the queue name must not be empty" list -q ''
expect_usage "list -z" "kyu list --help" list -z
expect_usage "list extra" "unexpected argument 'extra'" list extra
expect_usage "submit -p" "-p: 'high' is not a whole number from -2147483648 to 2147483647" submit -p high -s true
expect_usage "submit -d" "-d: '-1' is not a whole number from 0" submit -d -1 -s true
expect_usage "submit -m" "-m: '0' is not a whole number from 1 to 1000000" submit -m 0 -s true
expect_usage "submit -t" "-t: '1h' is not" submit -t 1h -s true
expect_usage "submit -q ''" "-q: the queue name must not be empty" submit -q '' -s true
expect_usage "submit without a command" "give either -s" submit -q x
expect_usage "schedule add -M" "-M: bad value 'never' (skip, once or all)" schedule add -M never n '* * * * *' -s true
expect_usage "schedule add -O" "-O: bad value 'x' (allow, skip or queue)" schedule add -O x n '* * * * *' -s true
expect_usage "schedule add -g" "-g: bad value '0' (seconds, from 1" schedule add -g 0 n '* * * * *' -s true
expect_usage "schedule frobnicate" "expected add, enable, disable, run-now or remove" schedule frobnicate n
expect_usage "schema upgrade -w" "-w: bad number of seconds '0'" schema upgrade -w 0
expect_usage "limit -1" "'-1' is not a number from 0 to" limit q -1
expect_usage "stats --yaml" "stats: wrong arguments" stats --yaml
expect_usage "show without an id" "show: wrong arguments" show
expect_usage "cancel with two ids" "cancel: wrong arguments" cancel a b
expect_usage "pause without a queue" "pause: wrong arguments" pause
expect_usage "an unknown command" "unknown command: frobnicate" frobnicate
expect_usage "a global option" "" --bogus list
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows inserted by refused commands"
# Without a database (no configuration file): still a usage error.
rc=0; "$KYU" -c "$T_DIR/none.ini" list -s bogus 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "kyu list -s bogus without a configuration"
rc=0; "$KYU" -c "$T_DIR/none.ini" show 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "kyu show without an id or a configuration"

# ---- kyu list -s retrying: waiting after a failed attempt
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at) VALUES
     ('again', 'r', 'exit 1', 'waiting', 1, 'exited with status 1', NOW(6) + INTERVAL 1 HOUR),
     ('fresh', 'r', 'true', 'waiting', 0, NULL, NOW(6) + INTERVAL 1 HOUR)"
kyu list -s retrying >"$T_DIR/out" || fail "kyu list -s retrying"
assert_eq again "$(awk -F'\t' 'NR > 1 { print $1 }' "$T_DIR/out")" "kyu list -s retrying"
kyu list -s waiting -q r >"$T_DIR/out" || fail "kyu list -s waiting"
assert_eq "fresh again" "$(awk -F'\t' 'NR > 1 { print $1 }' "$T_DIR/out" | sort -r | tr '\n' ' ' | sed 's/ $//')" "kyu list -s waiting"

# ---- kyu list: the error column, a killed job's signal, more rows said
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, \`signal\`, error, finished_at) VALUES
     ('killed', 'k', 'sleep 100', 'failed', 1, 9, 'killed by signal 9', NOW(6))"
kyu list -q k >"$T_DIR/out" 2>"$T_DIR/err" || fail "kyu list -q k"
assert_eq "id	queue	status	attempts	exit_code	run_at	finished_at	error	what" "$(head -n 1 "$T_DIR/out")" "kyu list's columns"
assert_eq "killed	signal 9	killed by signal 9" "$(awk -F'\t' 'NR == 2 { print $1 "\t" $5 "\t" $8 }' "$T_DIR/out")" "a killed job's row"
[ ! -s "$T_DIR/err" ] || fail "kyu list of every row says more: $(cat "$T_DIR/err")"
kyu list -q r -n 1 >"$T_DIR/out" 2>"$T_DIR/err" || fail "kyu list -n 1"
assert_eq 2 "$(wc -l <"$T_DIR/out")" "kyu list -n 1: header and one row"
assert_eq "kyu: list: more than the 1 jobs shown (-n N shows more)" "$(cat "$T_DIR/err")" "kyu list -n 1 says there is more"
kyu list -q r -n 2 >/dev/null 2>"$T_DIR/err" || fail "kyu list -n 2"
[ ! -s "$T_DIR/err" ] || fail "kyu list -n 2 of 2 rows says more: $(cat "$T_DIR/err")"
echo ok
