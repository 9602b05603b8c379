#!/usr/bin/env bash
# What an INSERT is refused with (kyu_jobs(7), "Errors"), from the mariadb
# client, in a strict sql_mode and with sql_mode '': a bad argv, env or
# status gets kyu's error number and SQLSTATE (31004 KYU04, 31005 KYU05,
# 31006 KYU06; a status in strict mode the server's 1265 naming the column)
# and a message naming the column, and so does a status in an UPDATE
# without a strict sql_mode; KYU01-03 have their numbers (31001-31003);
# every value kyud would refuse in argv or env is refused, and the near
# misses that are fine are not. A refused 1,000-row INSERT into a queue
# bounded at 500 says what it counted and inserts nothing. An explicit NULL
# means the column's default in every column, single-row, multi-row and
# INSERT ... SELECT, without a warning. RETURNING gives the id, a duplicate
# id and a duplicate unique_key are 1062 told apart by the key's name, and
# the retry statement of kyu_jobs(7) leaves the row as kyu retry does.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

# refused MODE SQL WANT: SQL (sql_mode MODE) fails, and the client's
# ERROR line ("ERROR NUMBER (SQLSTATE) at line 1: MESSAGE") matches the
# extended regexp WANT.
refused() {
	local out
	if out=$(sql "SET SESSION sql_mode = '$1'; $2" 2>&1); then
		fail "accepted with sql_mode '$1': $2"
	fi
	out=$(grep '^ERROR' <<<"$out") || fail "sql_mode '$1': $2: no error line"
	[[ $out =~ $3 ]] || fail "sql_mode '$1': $2: expected /$3/, got: $out"
}
strict=STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION

# ---- what the reviewers' drivers stored: PHP's 'Array', mysql2's
# '[object Object]', a number in env; a misspelt status.
for mode in "$strict" ""; do
	refused "$mode" "INSERT INTO kyu_jobs (id, argv) VALUES ('php', 'Array')" \
		"^ERROR 31004 \(KYU04\).*kyu: argv of job php is not a non-empty JSON array of strings \(not valid JSON\): Array$"
	refused "$mode" "INSERT INTO kyu_jobs (id, command, env) VALUES ('node', 'true', '[object Object]')" \
		"^ERROR 31005 \(KYU05\).*kyu: env of job node is not a JSON object of strings \(not valid JSON\): \[object Object\]$"
	refused "$mode" "INSERT INTO kyu_jobs (id, command, env) VALUES ('num', 'true', '{\"N\": 5}')" \
		"^ERROR 31005 \(KYU05\).*kyu: env of job num is not a JSON object of strings \(value of N is not a string\)"
done
refused "$strict" "INSERT INTO kyu_jobs (id, command, status) VALUES ('us', 'true', 'canceled')" \
	"^ERROR 1265 \(01000\).*Data truncated for column 'status'"
refused "" "INSERT INTO kyu_jobs (id, command, status) VALUES ('us', 'true', 'canceled')" \
	"^ERROR 31006 \(KYU06\).*kyu: status of job us is not one of waiting, running, succeeded, failed, cancelled, blocked"
refused "" "INSERT INTO kyu_jobs (id, command, status) VALUES ('ok', 'true', 'waiting'), ('us', 'true', 'canceled')" \
	"^ERROR 31006 \(KYU06\)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows after the refusals"
# The same typo in an UPDATE (kyu_jobs_status_update); a row that holds ''
# already (from before the trigger) stays updatable, and can be mended.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('u', 'true', NOW(6) + INTERVAL 1 DAY)"
refused "$strict" "UPDATE kyu_jobs SET status = 'canceled' WHERE id = 'u'" "^ERROR 1265 \(01000\).*Data truncated for column 'status'"
refused "" "UPDATE kyu_jobs SET status = 'canceled' WHERE id = 'u'" \
	"^ERROR 31006 \(KYU06\).*kyu: status is not one of waiting, running, succeeded, failed, cancelled, blocked"
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_status_update; SET SESSION sql_mode = '';
	UPDATE kyu_jobs SET status = 'canceled' WHERE id = 'u'"
root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql again"
sql "SET SESSION sql_mode = ''; UPDATE kyu_jobs SET queue = 'elsewhere' WHERE status = ''"
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE status = ''"
assert_eq "u cancelled elsewhere" "$(sql "SELECT CONCAT_WS(' ', id, status, queue) FROM kyu_jobs")" "the mended row"
sql "DELETE FROM kyu_jobs"

# ---- every argv and env kyud refuses (tests/integration/input/bad_json.sh's
# cases), each refused here with the number of its column.
bad_argv=('not json' '' '["/bin/true", "x"' '["/bin/true"] ["x"]' "['/bin/true']" '"/bin/true"' 42 null
	'{"0": "/bin/true"}' '{}' '[]' '[1]' '[true, "x"]' '["/bin/true", "a", 3]' '["/bin/true", null]'
	'["/bin/true", ["x"]]' '["/bin/true", {"x": "y"}]' '[["/bin/true"]]' '["", "x"]' '[""]'
	'["/bin/true", "a\u0000b"]' '["/bin/true", "\ud800"]')
bad_env=('A=1' '' '{"A": "1",}' '"A=1"' '["A=1"]' '[]' '{"A": 1}' '{"A": null}' '{"A": false}'
	'{"A": {"B": "1"}}' '{"A": ["1"]}' '{"": "1"}' '{"A=B": "1"}' '{"=A": "1"}' '{"A": "1", "A": "2"}'
	'{"A\u0000B": "1"}' '{"A": "x\u0000"}')
hexlit() { printf "CONVERT(X'%s' USING utf8mb4)" "$(printf %s "$1" | od -An -v -tx1 | tr -d ' \n')"; }
for v in "${bad_argv[@]}"; do
	refused "$strict" "INSERT INTO kyu_jobs (id, argv) VALUES ('a', $(hexlit "$v"))" "^ERROR 31004 \(KYU04\).*kyu: argv of job a "
done
refused "$strict" "INSERT INTO kyu_jobs (id, argv) VALUES ('deep', CONCAT(REPEAT('[', 10000), REPEAT(']', 10000)))" \
	"^ERROR 31004 \(KYU04\)"
refused "$strict" "INSERT INTO kyu_jobs (id, argv) VALUES ('rawnul', CONCAT('[\"/bin/touch\", \"x', CHAR(0), '\"]'))" \
	"^ERROR 31004 \(KYU04\)"
for v in "${bad_env[@]}"; do
	refused "$strict" "INSERT INTO kyu_jobs (id, command, env) VALUES ('e', 'true', $(hexlit "$v"))" \
		"^ERROR 31005 \(KYU05\).*kyu: env of job e "
done
# What the messages say of a few (the element, the name).
refused "$strict" "INSERT INTO kyu_jobs (id, argv) VALUES ('a', '[\"/bin/true\", \"a\", 3]')" "\(argv\[2\] is not a string\)"
refused "$strict" "INSERT INTO kyu_jobs (id, argv) VALUES ('a', '[\"\", \"x\"]')" "\(argv\[0\] is empty\)"
refused "$strict" "INSERT INTO kyu_jobs (id, command, env) VALUES ('e', 'true', '{\"A\": \"1\", \"B=C\": \"2\"}')" \
	"\(invalid variable name 'B=C'\)"
refused "$strict" "INSERT INTO kyu_jobs (id, command, env) VALUES ('e', 'true', '{\"A\": \"1\", \"B\": [\"2\"]}')" \
	"\(value of B is not a string\)"
refused "$strict" "INSERT INTO kyu_jobs (id, command, env) VALUES ('e', 'true', '{\"A\": \"1\", \"A\": \"2\"}')" \
	"\(a variable named twice\)"
# Near misses that are fine: an escaped backslash before u0000, '=' and
# NUL-looking text in values, an empty env, an empty argument after argv[0].
sql "INSERT INTO kyu_jobs (id, argv, env, run_at) VALUES
     ('fine1', $(hexlit '["/bin/echo", "a\\u0000b", ""]'), $(hexlit '{"X": "a=b", "Y": "\\u0000"}'), NOW(6) + INTERVAL 1 DAY),
     ('fine2', '[\"/bin/true\"]', '{}', NOW(6) + INTERVAL 1 DAY)"
assert_eq 2 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'fine%'")" "near misses accepted"

# ---- KYU01-03 with their numbers.
sql "INSERT INTO kyu_queues (name, max_waiting) VALUES ('b500', 500), ('b0', 0)"
refused "$strict" "INSERT INTO kyu_jobs (queue, command) SELECT 'b500', 'true' FROM seq_1_to_1000" \
	"^ERROR 31001 \(KYU01\).*kyu: queue b500 is full: kyu_queues.max_waiting is 500 and 500 jobs wait, counting those this transaction inserted before this row \(this statement's included\); none of the statement's rows were inserted$"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'b500'")" "rows of the refused 1,000-row INSERT"
refused "$strict" "INSERT INTO kyu_jobs (queue, command) VALUES ('b0', 'true')" \
	"^ERROR 31001 \(KYU01\).*kyu: queue b0 is full: kyu_queues.max_waiting is 0; none of the statement's rows were inserted$"
refused "$strict" "INSERT INTO kyu_jobs (id, command, after) VALUES ('down', 'true', '[\"nope\"]')" \
	"^ERROR 31002 \(KYU02\).*kyu: after of job down names job nope, which does not exist$"
refused "$strict" "INSERT INTO kyu_jobs (id, command, after) VALUES ('down', 'true', '{}')" "^ERROR 31002 \(KYU02\)"
refused "$strict" "INSERT INTO kyu_jobs (id, command, traceparent) VALUES ('tp', 'true', 'xyz')" \
	"^ERROR 31003 \(KYU03\).*kyu: traceparent of job tp is not a W3C traceparent"

# ---- NULL is the default, in every column, whatever the sql_mode.
cols="id, queue, command, status, priority, run_at, max_attempts, time_limit, attempts, tempfails,
      created_at, updated_at, after_policy, has_downstream, key_slot"
nulls="NULL, NULL, 'true', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL"
sql "DELETE FROM kyu_jobs"
for mode in "$strict" ""; do
	assert_eq "0" "$(sql "SET SESSION sql_mode = '$mode';
		INSERT INTO kyu_jobs ($cols) VALUES ($nulls);
		INSERT INTO kyu_jobs ($cols) VALUES ($nulls), ($nulls);
		INSERT INTO kyu_jobs ($cols) SELECT $nulls FROM seq_1_to_2;
		SELECT @@warning_count")" "warnings of the NULL INSERTs with sql_mode '$mode'"
done
assert_eq "10 10 default waiting 0 0 0 succeeded 0 0" \
	"$(sql "SELECT CONCAT_WS(' ', COUNT(*), COUNT(DISTINCT id), MIN(queue), MIN(status), MAX(priority), MAX(attempts),
	        MAX(tempfails), MIN(after_policy), MAX(has_downstream), MAX(key_slot)) FROM kyu_jobs")" "the NULL rows' defaults"
assert_eq 10 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id REGEXP '^[0-9a-f]{8}-' AND max_attempts IS NULL
	AND run_at BETWEEN NOW(6) - INTERVAL 1 MINUTE AND NOW(6) AND created_at = run_at AND updated_at = run_at")" \
	"NULL rows due now, with the UUID id"
# A NULL status with after is still blocked by its upstream.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('up', 'true', NOW(6) + INTERVAL 1 DAY);
     INSERT INTO kyu_jobs (id, command, status, after) VALUES ('dn', 'true', NULL, '[\"up\"]')"
assert_eq blocked "$(sql "SELECT status FROM kyu_jobs WHERE id = 'dn'")" "status of a NULL-status job with an upstream"

# ---- RETURNING; the two duplicates.
got=$(sql "INSERT INTO kyu_jobs (command, run_at) VALUES ('true', NOW(6) + INTERVAL 1 DAY) RETURNING id, seq")
read -r rid rseq <<<"$got"
assert_eq "$rid" "$(sql "SELECT id FROM kyu_jobs WHERE seq = $rseq")" "the id RETURNING gave"
sql "INSERT INTO kyu_jobs (id, command, unique_key, run_at) VALUES ('u1', 'true', 'k', NOW(6) + INTERVAL 1 DAY)"
refused "$strict" "INSERT INTO kyu_jobs (id, command) VALUES ('u1', 'true')" "^ERROR 1062 \(23000\).*for key 'kyu_jobs_id'$"
refused "$strict" "INSERT INTO kyu_jobs (id, command, unique_key) VALUES ('u2', 'true', 'k')" \
	"^ERROR 1062 \(23000\).*for key 'kyu_jobs_unique_key'$"

# ---- the retry of kyu_jobs(7) and kyu retry leave the same row.
sql "DELETE FROM kyu_jobs"
start_kyud job.max_attempts=1
sql "INSERT INTO kyu_jobs (id, command) VALUES ('r1', 'exit 3'), ('r2', 'exit 3')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'failed' AND error IS NOT NULL" 2 30
stop_kyud
write_ini "$T_DIR/kyu.ini"
"$KYU" -c "$T_DIR/kyu.ini" retry r1 >/dev/null || fail "kyu retry r1"
# The man page's statement, as it is written there.
retry_sql=$(sed -n '/^To run a failed or cancelled job again/,/^\.Ed/p' "$KYU_SRC/man/kyu_jobs.7" |
	sed -e '1,/^\.Bd/d' -e '/^\.Ed/d' -e "s/'resize-42'/'r2'/")
[[ $retry_sql == UPDATE* ]] || fail "no retry statement found in kyu_jobs(7): $retry_sql"
sql "$retry_sql"
row() { sql "SELECT CONCAT_WS(' ', status, attempts, tempfails, IFNULL(error, 'NULL'), run_at <= NOW(6)) FROM kyu_jobs WHERE id = '$1'"; }
assert_eq "waiting 0 0 NULL 1" "$(row r1)" "the row after kyu retry"
assert_eq "$(row r1)" "$(row r2)" "the row after kyu_jobs(7)'s retry against kyu retry's"
