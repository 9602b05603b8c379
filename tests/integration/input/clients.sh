#!/usr/bin/env bash
# The SQL contract from real client libraries (the review of 2026-11-28):
# tests/clients/app.php (PHP mysqli and PDO), app_pymysql.py (PyMySQL,
# which keeps no SQLSTATE), app_node.js (Node.js with Debian's node-mysql)
# and app_go.go (Go with Debian's go-sql-driver/mysql, which keeps no
# SQLSTATE either) branch on the error numbers alone: a bad argv, env or
# status, a full queue, an unknown upstream, a bad traceparent, a
# duplicate id and a duplicate unique key each come out as what they are;
# RETURNING gives the id the server made; NULL for every field not given is
# the default. The good jobs they submitted run. A language whose
# interpreter, compiler or driver is missing is skipped, and the test too
# when all are. They also submit from a session of another time zone
# ('+09:00', '-05:00': the default run_at is now, FROM_UNIXTIME the epoch,
# read back through CONVERT_TZ; Node's Date bound on a connection whose
# timezone option is the session's, and off by the zones' difference on
# one left at the process's, which runs in New York here), and wait with
# CALL kyu_wait: refused in an open transaction (31011, PyMySQL's
# autocommit off, Node's and Go's explicit one) until it commits.
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
# Debian's node finds its packages in /usr/share/nodejs; another build of
# node (NodeSource's) only through NODE_PATH.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
node_ok=0
if command -v node >/dev/null 2>&1 && node -e 'require("mysql")' 2>/dev/null; then
	node_ok=1
else
	echo "no node with mysql (Debian node-mysql): its checks are skipped"
fi
# Go in GOPATH mode, from Debian's source tree of the driver: no module
# proxy, no network.
gocode=/usr/share/gocode
go_ok=0
if command -v go >/dev/null 2>&1 && [ -f "$gocode/src/github.com/go-sql-driver/mysql/driver.go" ]; then
	go_ok=1
else
	echo "no go with $gocode's go-sql-driver/mysql (Debian golang-github-go-sql-driver-mysql-dev): its checks are skipped"
fi
[ "$php_ok" = 1 ] || [ -n "$py" ] || [ "$node_ok" = 1 ] || [ "$go_ok" = 1 ] ||
	{ echo "SKIP: none of php (mysqli, pdo_mysql), python3 (pymysql), node (mysql), go (go-sql-driver/mysql)"; exit 77; }
if [ "$go_ok" = 1 ]; then
	(cd "$KYU_SRC/tests/clients" && GOPATH=$gocode GO111MODULE=off GOFLAGS='' GOPROXY=off \
		GOCACHE=$T_DIR/gocache go build -o "$T_DIR/app_go" app_go.go) ||
		fail "tests/clients/app_go.go does not build"
fi

sql "INSERT INTO kyu_queues (name, max_waiting) VALUES ('php-full', 0), ('py-full', 0), ('node-full', 0), ('go-full', 0)"
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
if [ "$node_ok" = 1 ]; then
	TZ=America/New_York run_app node 22 node "$KYU_SRC/tests/clients/app_node.js"
	ids+=("$(cat "$T_DIR/node-id")" "$(cat "$T_DIR/node-null-id")" "$(cat "$T_DIR/node-tz-id")" node-tz-epoch node-tz-date node-wait)
fi
if [ "$go_ok" = 1 ]; then
	run_app go 18 "$T_DIR/app_go"
	ids+=("$(cat "$T_DIR/go-id")" "$(cat "$T_DIR/go-null-id")" "$(cat "$T_DIR/go-tz-id")" go-tz-epoch go-wait)
fi
# Their good jobs ran; nothing they were refused is in the table.
in_list=$(printf "'%s'," "${ids[@]}")
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN (${in_list%,}) AND status = 'succeeded'" "${#ids[@]}" 30
assert_eq "${#ids[@]}" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id NOT LIKE '%-hold' AND id NOT LIKE '%-later'")" "rows in kyu_jobs"
stop_kyud
assert_log_lacks 'failed:'
