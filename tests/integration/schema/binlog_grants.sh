#!/usr/bin/env bash
# On a server that writes a binary log, a user without SUPER cannot create
# triggers or procedures unless log_bin_trust_function_creators is on.
# sql/schema.sql then stops before changing anything, with kyu's own error
# (31010, KYU10) naming the fix, instead of the server's 1419 halfway
# through; kyu schema upgrade names the fix too. With the variable on,
# both work as the plain user.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

private_db_start --log-bin=binlog --binlog-format=ROW --server-id=1
kyu_sql() { mariadb --no-defaults -ukyu -pkyu --socket="$KYU_DB_SOCKET" -D "$T_DB" "$@"; }
tables() { sql "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()"; }
# private_db_start loaded the schema as root: start from an empty database.
root_sql -e "DROP DATABASE $T_DB; CREATE DATABASE $T_DB; GRANT ALL ON $T_DB.* TO 'kyu'@'localhost'"

kyu_sql <"$KYU_SRC/sql/schema.sql" 2>"$T_DIR/load.err" && fail "sql/schema.sql loaded as a user without SUPER"
cat "$T_DIR/load.err"
grep -q 'ERROR 31010 (KYU10).*log_bin_trust_function_creators' "$T_DIR/load.err" ||
	fail "the refusal is not kyu's, naming the fix: $(cat "$T_DIR/load.err")"
assert_eq 0 "$(tables)" "tables made before the refusal"

write_ini "$T_DIR/kyu.ini"
"$KYU" -c "$T_DIR/kyu.ini" schema upgrade >"$T_DIR/up.out" 2>"$T_DIR/up.err" && fail "kyu schema upgrade succeeded"
cat "$T_DIR/up.err"
grep -q 'log_bin_trust_function_creators' "$T_DIR/up.err" || fail "kyu schema upgrade does not name the fix"

root_sql -e "SET GLOBAL log_bin_trust_function_creators = 1"
"$KYU" -c "$T_DIR/kyu.ini" schema upgrade >"$T_DIR/up.out" 2>&1 || fail "kyu schema upgrade: $(cat "$T_DIR/up.out")"
kyu_sql <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql as the plain user with the variable on"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('ok', 'true')"
start_kyud
wait_for "SELECT status FROM kyu_jobs WHERE id = 'ok'" succeeded 30
stop_kyud
