#!/usr/bin/env bash
# The SQL contract from real client libraries (the review of 2026-11-28):
# tests/clients/app.php (PHP mysqli and PDO) and tests/clients/app_pymysql.py
# (PyMySQL, which keeps no SQLSTATE) branch on the error numbers alone: a
# bad argv, env or status, a full queue, an unknown upstream, a bad
# traceparent, a duplicate id and a duplicate unique key each come out as
# what they are; RETURNING gives the id the server made; NULL for every
# field not given is the default. The good jobs they submitted run. A
# language whose interpreter or driver is missing is skipped, and the test
# too when both are. Both also submit from a session of another time zone
# ('+09:00', '-05:00': the default run_at is now, FROM_UNIXTIME the epoch,
# read back through CONVERT_TZ), and wait with CALL kyu_wait: PyMySQL with
# autocommit off (refused, 31011, until it commits) and on.
. "$KYU_SRC/tests/lib.sh"

php_ok=0
if command -v php >/dev/null 2>&1 && php -r 'exit(extension_loaded("mysqli") && extension_loaded("pdo_mysql") ? 0 : 1);'; then
	php_ok=1
else
	echo "no php with mysqli and pdo_mysql: its checks are skipped"
fi
py=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import pymysql' 2>/dev/null; then py=$p; break; fi
done
[ -n "$py" ] || echo "no python3 with pymysql: its checks are skipped"
[ "$php_ok" = 1 ] || [ -n "$py" ] || { echo "SKIP: neither php (mysqli, pdo_mysql) nor python3 (pymysql)"; exit 77; }

sql "INSERT INTO kyu_queues (name, max_waiting) VALUES ('php-full', 0), ('py-full', 0)"
export KYU_TEST_SOCKET=$KYU_DB_SOCKET KYU_TEST_DB=$T_DB KYU_TEST_OUT=$T_DIR
start_kyud

# run_app NAME CHECKS COMMAND...: every line "ok ...", CHECKS of them.
run_app() {
	local name=$1 want=$2 rc=0
	shift 2
	"$@" >"$T_DIR/$name.out" 2>&1 || rc=$?
	cat "$T_DIR/$name.out"
	assert_eq 0 "$rc" "$name's exit status"
	assert_eq "" "$(grep -v '^ok \|^checks ' "$T_DIR/$name.out")" "$name's lines other than ok"
	assert_eq "checks $want" "$(tail -n 1 "$T_DIR/$name.out")" "$name's count of checks"
	assert_eq "$want" "$(grep -c '^ok ' "$T_DIR/$name.out")" "$name's checks passed"
}
ids=()
if [ "$php_ok" = 1 ]; then
	run_app php 16 php "$KYU_SRC/tests/clients/app.php"
	ids+=("$(cat "$T_DIR/php-id")" "$(cat "$T_DIR/php-null-id")" "$(cat "$T_DIR/php-tz-id")" php-tz-epoch)
fi
if [ -n "$py" ]; then
	run_app pymysql 19 "$py" "$KYU_SRC/tests/clients/app_pymysql.py"
	ids+=("$(cat "$T_DIR/py-id")" "$(cat "$T_DIR/py-null-id")" "$(cat "$T_DIR/py-tz-id")" py-tz-epoch py-wait py-wait-on)
fi
# Their good jobs ran; nothing they were refused is in the table.
in_list=$(printf "'%s'," "${ids[@]}")
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN (${in_list%,}) AND status = 'succeeded'" "${#ids[@]}" 30
assert_eq "${#ids[@]}" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id NOT LIKE '%-hold' AND id NOT LIKE '%-later'")" "rows in kyu_jobs"
stop_kyud
assert_log_lacks 'failed:'
