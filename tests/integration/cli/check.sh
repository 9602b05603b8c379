#!/usr/bin/env bash
# kyu check: 0 and one "ok" line for kyud's account with exactly the
# privileges README.md grants it (one of them through a role); without
# DELETE on kyu_jobs, one line naming the privilege and the table; a
# wake-up address that cannot be bound, a wrong password and a bad key each
# give their own line and a non-zero status.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

u=c_${T_DB#t_}
u=${u:0:60}
r=${u}_r
root_sql <<SQL
DROP USER IF EXISTS '$u'@'localhost';
DROP ROLE IF EXISTS $r;
CREATE USER '$u'@'localhost' IDENTIFIED BY 'kyu';
CREATE ROLE $r;
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_jobs TO '$u'@'localhost';
GRANT SELECT, UPDATE ON $T_DB.kyu_queues TO '$u'@'localhost';
GRANT SELECT, INSERT ON $T_DB.kyu_queue_starts TO '$u'@'localhost';
GRANT DELETE ON $T_DB.kyu_queue_starts TO $r;
GRANT SELECT, INSERT ON $T_DB.kyu_queue_names TO '$u'@'localhost';
GRANT SELECT, DELETE ON $T_DB.kyu_queue_names_new TO '$u'@'localhost';
GRANT $r TO '$u'@'localhost';
SET DEFAULT ROLE $r FOR '$u'@'localhost';
GRANT SELECT, UPDATE ON $T_DB.kyu_schedules TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_meta TO '$u'@'localhost';
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_daemons TO '$u'@'localhost';
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_minutes TO '$u'@'localhost';
GRANT INSERT ON $T_DB.kyu_attempts TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_after TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_after_todo TO '$u'@'localhost';
GRANT EXECUTE ON PROCEDURE $T_DB.kyu_settle TO '$u'@'localhost';
SQL
EXIT_HOOKS+=("root_sql -e \"DROP USER IF EXISTS '$u'@'localhost'; DROP ROLE IF EXISTS $r\"")

# check [KEY=VALUE...]: run kyu check on such a file; status in rc, lines in out.
check() {
	write_ini "$T_DIR/check.ini" database.user="$u" database.password=kyu "$@"
	rc=0
	out=$("$KYU" -c "$T_DIR/check.ini" check 2>&1) || rc=$?
}
port=$(free_udp_port)
check kyud.listen="127.0.0.1:$port"
assert_eq 0 "$rc" "kyu check's status on a good setup ($out)"
assert_eq "ok: $T_DIR/check.ini: connected to $T_DB as $u; privileges; schema version 11; listen 127.0.0.1:$port free" \
	"$out" "kyu check's line"

root_sql -e "REVOKE DELETE ON $T_DB.kyu_jobs FROM '$u'@'localhost'"
check
[ "$rc" != 0 ] || fail "kyu check passed without DELETE on kyu_jobs"
assert_eq 1 "$(echo "$out" | wc -l)" "lines for one problem ($out)"
echo "$out" | grep -E "^kyu: check: privilege: DELETE on kyu_jobs is not granted to $u " >/dev/null ||
	fail "no line naming DELETE on kyu_jobs: $out"
root_sql -e "GRANT DELETE ON $T_DB.kyu_jobs TO '$u'@'localhost'"
# Counting ended jobs needs INSERT and UPDATE on kyu_minutes (one upsert).
root_sql -e "REVOKE UPDATE ON $T_DB.kyu_minutes FROM '$u'@'localhost'"
check
[ "$rc" != 0 ] || fail "kyu check passed without UPDATE on kyu_minutes"
echo "$out" | grep -E "^kyu: check: privilege: UPDATE on kyu_minutes is not granted to $u " >/dev/null ||
	fail "no line naming UPDATE on kyu_minutes: $out"
root_sql -e "GRANT UPDATE ON $T_DB.kyu_minutes TO '$u'@'localhost'"

# 192.0.2.1 (TEST-NET-1) is no address of this host: binding fails, nothing is sent.
check kyud.listen=192.0.2.1:7711
[ "$rc" != 0 ] || fail "kyu check passed an address kyud cannot bind"
echo "$out" | grep -E "^kyu: check: listen: \[kyud\] listen = '192\.0\.2\.1:7711' in .* cannot be bound" >/dev/null ||
	fail "no line naming the listen address: $out"
assert_eq 1 "$(echo "$out" | wc -l)" "lines for one problem ($out)"

check database.password=wrong
[ "$rc" != 0 ] || fail "kyu check passed a wrong password"
echo "$out" | grep -E "^kyu: check: connection: .*Access denied for user '$u'" >/dev/null || fail "no connection line: $out"

check kyud.no_such_key=1
[ "$rc" != 0 ] || fail "kyu check passed an unknown key"
echo "$out" | grep -E "^kyu: check: config: .*no_such_key" >/dev/null || fail "no config line: $out"
