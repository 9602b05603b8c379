#!/usr/bin/env bash
# Invalid argv/env JSON of every kind: not JSON, JSON of the wrong type
# (argv a string, a number, null, an object, an empty array, an array with a
# number/null/bool/nested array, an empty first element; env an array, a
# string, values that are numbers/null/objects/arrays, keys that are empty
# or contain '='), duplicate keys, \u0000 and lone surrogates, 10,000
# nested arrays, and the largest values the columns can hold (64 KiB; 1 MiB
# once the columns are widened to MEDIUMTEXT, and refused by the server in
# strict mode before that). Each bad row ends `failed` at its first attempt
# with an error naming the column and what is wrong, runs nothing (neither
# argv nor the `command` beside it), and no worker dies; the good jobs
# inserted between them all succeed, each once.
. "$KYU_SRC/tests/lib.sh"

# The kernel's limit on exec arguments is a quarter of the stack limit: fix
# it, so that "too long for exec" and "fits" below do not depend on the
# shell that runs the tests.
ulimit -s 8192

# hexlit TEXT: TEXT as an SQL expression of exactly these bytes.
hexlit() { printf "CONVERT(X'%s' USING utf8mb4)" "$(printf %s "$1" | od -An -v -tx1 | tr -d ' \n')"; }

# The INSERT checks (kyu_jobs_check, schema version 7) would refuse these
# rows; kyud must still fail the ones an UPDATE or an older schema lets in.
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_check"
m=$T_DIR/marker
good_n=0
stmts=$T_DIR/inserts.sql
: >"$stmts"
# good: one job that records that it ran (argv form, no shell in between
# for the JSON; the script appends the job's id to good.log).
# shellcheck disable=SC2016 # $KYU_JOB_ID is the job's
good() {
	good_n=$((good_n + 1))
	echo "INSERT INTO kyu_jobs (id, argv) VALUES ('good-$good_n',
	      $(hexlit '["/bin/sh", "-c", "echo \"$KYU_JOB_ID\" >> '"$T_DIR"'/good.log"]'));" >>"$stmts"
}
# bad ID ARGV-SQL ENV-SQL: a row that must fail; ARGV-SQL and ENV-SQL are
# SQL expressions (NULL, or hexlit ...). Its command would leave a marker if
# anything ran it. A good job follows every bad one.
bad() {
	echo "INSERT INTO kyu_jobs (id, argv, env, command) VALUES ('$1', $2, $3, 'touch $m-$1');" >>"$stmts"
	good
}
# Expected errors, id -> exact text.
declare -A want

# ---- argv
bad a-not-json "$(hexlit 'not json')" NULL
want[a-not-json]="argv is not valid JSON: invalid token near 'not' at line 1 column 3"
bad a-empty-text "''" NULL
want[a-empty-text]="argv is not valid JSON: unexpected token near end of file at line 1 column 0"
bad a-truncated "$(hexlit '["/bin/true", "x"')" NULL
want[a-truncated]="argv is not valid JSON: ']' expected near end of file at line 1 column 17"
bad a-trailing "$(hexlit '["/bin/true"] ["x"]')" NULL
want[a-trailing]="argv is not valid JSON: end of file expected near '[' at line 1 column 15"
bad a-single-quotes "$(hexlit "['/bin/true']")" NULL
want[a-single-quotes]="argv is not valid JSON: invalid token near ''' at line 1 column 2"
bad a-string "$(hexlit '"/bin/true"')" NULL
want[a-string]="argv must be a non-empty JSON array of strings"
bad a-number "$(hexlit '42')" NULL
want[a-number]="argv must be a non-empty JSON array of strings"
bad a-null "$(hexlit 'null')" NULL
want[a-null]="argv must be a non-empty JSON array of strings"
bad a-object "$(hexlit '{"0": "/bin/true"}')" NULL
want[a-object]="argv must be a non-empty JSON array of strings"
bad a-empty-object "$(hexlit '{}')" NULL
want[a-empty-object]="argv must be a non-empty JSON array of strings"
bad a-empty-array "$(hexlit '[]')" NULL
want[a-empty-array]="argv must be a non-empty JSON array of strings"
bad a-first-number "$(hexlit '[1]')" NULL
want[a-first-number]="argv[0] is not a string"
bad a-first-bool "$(hexlit '[true, "x"]')" NULL
want[a-first-bool]="argv[0] is not a string"
bad a-number-elem "$(hexlit '["/bin/true", "a", 3]')" NULL
want[a-number-elem]="argv[2] is not a string"
bad a-null-elem "$(hexlit '["/bin/true", null]')" NULL
want[a-null-elem]="argv[1] is not a string"
bad a-nested-elem "$(hexlit '["/bin/true", ["x"]]')" NULL
want[a-nested-elem]="argv[1] is not a string"
bad a-object-elem "$(hexlit '["/bin/true", {"x": "y"}]')" NULL
want[a-object-elem]="argv[1] is not a string"
bad a-wrapped "$(hexlit '[["/bin/true"]]')" NULL
want[a-wrapped]="argv[0] is not a string"
bad a-first-empty "$(hexlit '["", "x"]')" NULL
want[a-first-empty]="argv[0] is empty"
bad a-only-empty "$(hexlit '[""]')" NULL
want[a-only-empty]="argv[0] is empty"
bad a-nul-escape "$(hexlit '["/bin/true", "a\u0000b"]')" NULL
want[a-nul-escape]="argv is not valid JSON: \\u0000 (a NUL character) cannot be passed to a program at line 1 column 24"
bad a-surrogate "$(hexlit '["/bin/true", "\ud800"]')" NULL
want[a-surrogate]="argv is not valid JSON: invalid Unicode '\\uD800' near '\"\\ud800\"' at line 1 column 22"
# 10,000 nested arrays (20 KB): the parser stops at its depth limit.
bad a-deep "CONCAT(REPEAT('[', 10000), REPEAT(']', 10000))" NULL
want[a-deep]="argv is not valid JSON: maximum parsing depth reached near '[' at line 1 column 2049"
# argv is checked before env: the argv error is the one reported.
bad both-bad "$(hexlit '[]')" "$(hexlit '[]')"
want[both-bad]="argv must be a non-empty JSON array of strings"

# ---- env (the command would run; env makes it fail first)
bad e-not-json NULL "$(hexlit 'A=1')"
want[e-not-json]="env is not valid JSON: invalid token near 'A' at line 1 column 1"
bad e-empty-text NULL "''"
want[e-empty-text]="env is not valid JSON: unexpected token near end of file at line 1 column 0"
bad e-trailing-comma NULL "$(hexlit '{"A": "1",}')"
want[e-trailing-comma]="env is not valid JSON: string or '}' expected near '}' at line 1 column 11"
bad e-string NULL "$(hexlit '"A=1"')"
want[e-string]="env must be a JSON object of strings"
bad e-array NULL "$(hexlit '["A=1"]')"
want[e-array]="env must be a JSON object of strings"
bad e-empty-array NULL "$(hexlit '[]')"
want[e-empty-array]="env must be a JSON object of strings"
bad e-number-value NULL "$(hexlit '{"A": 1}')"
want[e-number-value]="env: value of A is not a string"
bad e-null-value NULL "$(hexlit '{"A": null}')"
want[e-null-value]="env: value of A is not a string"
bad e-bool-value NULL "$(hexlit '{"A": false}')"
want[e-bool-value]="env: value of A is not a string"
bad e-object-value NULL "$(hexlit '{"A": {"B": "1"}}')"
want[e-object-value]="env: value of A is not a string"
bad e-array-value NULL "$(hexlit '{"A": ["1"]}')"
want[e-array-value]="env: value of A is not a string"
bad e-empty-key NULL "$(hexlit '{"": "1"}')"
want[e-empty-key]="env: invalid variable name ''"
bad e-eq-key NULL "$(hexlit '{"A=B": "1"}')"
want[e-eq-key]="env: invalid variable name 'A=B'"
bad e-eq-first NULL "$(hexlit '{"=A": "1"}')"
want[e-eq-first]="env: invalid variable name '=A'"
# A long bad name is cut to 64 bytes in the error.
long_key=$(printf 'K%.0s' $(seq 100))
bad e-long-key NULL "$(hexlit '{"'"$long_key"'=": "1"}')"
want[e-long-key]="env: invalid variable name '${long_key:0:64}'"
bad e-duplicate NULL "$(hexlit '{"A": "1", "A": "2"}')"
want[e-duplicate]="env is not valid JSON: duplicate object key near '\"A\"' at line 1 column 14"
bad e-nul-key NULL "$(hexlit '{"A\u0000B": "1"}')"
want[e-nul-key]="env is not valid JSON: NUL byte in object key not supported near '\"A\\u0000B\"' at line 1 column 11"
bad e-deep NULL "CONCAT(REPEAT('{\"a\":', 10000), '\"x\"', REPEAT('}', 10000))"
want[e-deep]="env is not valid JSON: maximum parsing depth reached near '{' at line 1 column 10241"

# ---- the largest values a TEXT column holds (64 KiB - 1)
# Near 64 KiB: an argv whose last element is a number; a valid argv of
# 3,500 arguments (the job checks their count); an env value of 60,000 bytes.
bad a-64k-invalid "CONCAT('[\"/bin/true\"', REPEAT(', \"xxxxxxxxxxxxxxxx\"', 3000), ', 1]')" NULL
want[a-64k-invalid]="argv[3001] is not a string"
echo "INSERT INTO kyu_jobs (id, argv) VALUES ('a-64k-valid',
      CONCAT('[\"/bin/sh\", \"-c\", \"[ \$# = 3500 ] && echo \$KYU_JOB_ID >> $T_DIR/good.log\", \"sh\"',
             REPEAT(', \"xxxxxxxxxxxxxx\"', 3500), ']'));" >>"$stmts"
echo "INSERT INTO kyu_jobs (id, command, env) VALUES ('e-64k-valid',
      'echo \$KYU_JOB_ID \${#BIG} >> $T_DIR/good.log',
      CONCAT('{\"BIG\": \"', REPEAT('y', 60000), '\"}'));" >>"$stmts"

start_kyud kyud.workers=2 job.max_attempts=3
sql "$(cat "$stmts")"

# ---- 1 MiB: the TEXT columns cannot hold it. In strict mode (the
# server's default) the INSERT itself is refused, so nothing reaches kyud.
for col in argv env command; do
	if out=$(sql "INSERT INTO kyu_jobs (id, $col) VALUES ('mib-$col', REPEAT('x', 1048576))" 2>&1); then
		fail "1 MiB in $col (TEXT) was accepted in strict mode"
	fi
	case $out in
	*"ERROR 1406"*"Data too long for column '$col'"*) ;;
	*) fail "1 MiB in $col: expected ERROR 1406 Data too long, got: $out" ;;
	esac
done
# Without strict mode the server cuts the value to 65,535 bytes with a
# warning: an argv cut short is no longer JSON, and says so.
sql "SET SESSION sql_mode = '';
     INSERT INTO kyu_jobs (id, argv, command) VALUES
     ('a-mib-cut', CONCAT('[\"/bin/true\"', REPEAT(', \"x\"', 262144), ']'), 'touch $m-a-mib-cut')"
want[a-mib-cut]="argv is not valid JSON: premature end of input near '\"' at line 1 column 65535"
assert_eq 65535 "$(sql "SELECT LENGTH(argv) FROM kyu_jobs WHERE id = 'a-mib-cut'")" "length of the cut argv"

n_bad=${#want[@]}
echo "${SECONDS}s: $n_bad bad rows and $good_n good ones inserted"
# 1 + good rows + the two 64 KiB valid ones.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" $((n_bad + good_n + 2)) 60

# ---- 1 MiB once the columns are widened (an installation may do that):
# kyud takes the rows (1 MiB each in the claim's reply) and fails those
# exec refuses, naming the program; a 1 MiB argv of small arguments runs.
root_sql -D "$T_DB" -e "ALTER TABLE kyu_jobs MODIFY argv MEDIUMTEXT NULL, MODIFY env MEDIUMTEXT NULL, MODIFY command MEDIUMTEXT NULL"
sql "INSERT INTO kyu_jobs (id, argv, command) VALUES
       ('m-argv-one', CONCAT('[\"/bin/true\", \"', REPEAT('x', 1048576), '\"]'), 'touch $m-m-argv-one');
     INSERT INTO kyu_jobs (id, env, command) VALUES
       ('m-env-one', CONCAT('{\"BIG\": \"', REPEAT('y', 1048576), '\"}'), 'touch $m-m-env-one');
     INSERT INTO kyu_jobs (id, argv) VALUES
       ('m-argv-many', CONCAT('[\"/bin/sh\", \"-c\", \"[ \$# = 16000 ] && echo \$KYU_JOB_ID >> $T_DIR/good.log\", \"sh\"',
                             REPEAT(', \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"', 16000), ']'));
     INSERT INTO kyu_jobs (id, argv, command) VALUES
       ('m-argv-invalid', CONCAT('[\"/bin/true\"', REPEAT(', \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"', 16000), ', {}]'), 'touch $m-m-argv-invalid');
     INSERT INTO kyu_jobs (id, env, command) VALUES
       ('m-env-invalid', CONCAT('{', REPEAT('\"KEY\": \"v\", ', 1), REPEAT(' ', 1048576), '\"KEY\": \"w\"}'), 'touch $m-m-env-invalid')"
good
sql "$(tail -n 2 "$stmts")"
want[m-argv-one]="cannot execute /bin/true: Argument list too long"
want[m-env-one]="cannot execute /bin/sh: Argument list too long"
want[m-argv-invalid]="argv[16001] is not a string"
want[m-env-invalid]="env is not valid JSON: duplicate object key near '\"KEY\"' at line 1 column 1048594"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" $((${#want[@]} + good_n + 3)) 60

echo "${SECONDS}s: all ended"
# ---- outcomes
bad_rows=0
for id in "${!want[@]}"; do
	got=$(root_sql -N -B -r -D "$T_DB" -e "SELECT CONCAT_WS(' | ', status, attempts, IFNULL(exit_code, 'NULL'), IFNULL(error, 'NULL'))
	           FROM kyu_jobs WHERE id = '$id'")
	if [ "$got" != "failed | 1 | NULL | ${want[$id]}" ]; then
		echo "job $id: expected [failed | 1 | NULL | ${want[$id]}]" >&2
		echo "    got [$got]" >&2
		bad_rows=$((bad_rows + 1))
	fi
done
[ "$bad_rows" = 0 ] || fail "$bad_rows of ${#want[@]} bad rows did not end as expected (above)"
# The log names each one.
for id in "${!want[@]}"; do
	grep -qF "job $id failed: ${want[$id]}" "$KYUD_LOG" || fail "no log line 'job $id failed: ${want[$id]}'"
done

leftover=$(find "$T_DIR" -maxdepth 1 -name 'marker*' -printf '%f ')
[ -z "$leftover" ] || fail "bad rows ran their command: $leftover"

# Every good job, the 64 KiB and 1 MiB valid ones included, ran once.
assert_eq "" "$(sql "SELECT IFNULL(GROUP_CONCAT(CONCAT(id, ':', status, '/', attempts, ' ', IFNULL(error, ''))), '')
                     FROM kyu_jobs WHERE (id LIKE 'good-%' OR id LIKE '%-valid' OR id = 'm-argv-many')
                      AND (status <> 'succeeded' OR attempts <> 1)")" "good jobs not succeeded at once"
expected_runs=$((good_n + 3))
assert_eq "$expected_runs" "$(sort -u "$T_DIR/good.log" | wc -l)" "distinct good jobs that ran"
assert_eq "" "$(cut -d' ' -f1 "$T_DIR/good.log" | sort | uniq -d | tr '\n' ' ')" "good jobs that ran twice"
grep -qx 'e-64k-valid 60000' "$T_DIR/good.log" || fail "e-64k-valid did not see its 60,000-byte BIG"
grep -qx 'a-64k-valid' "$T_DIR/good.log" || fail "a-64k-valid did not see its 3,500 arguments"
grep -qx 'm-argv-many' "$T_DIR/good.log" || fail "m-argv-many did not see its 16,000 arguments"

echo "bad rows: ${#want[@]}, good jobs: $expected_runs"
stop_kyud
