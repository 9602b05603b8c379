#!/usr/bin/env bash
# kyu reads /etc/kyu/client.ini by default (issue 15): an account that may
# only INSERT and SELECT on kyu_jobs submits, lists and shows jobs through
# it, and is refused (exit 1, the server's reason) when it cancels; kyud's
# own file is not needed. Without client.ini, kyu falls back to
# /etc/kyu/kyu.ini. Needs root (it writes /etc/kyu/client.ini, and removes
# it after); skipped where a real client.ini exists.
. "$KYU_SRC/tests/lib.sh"

[ -n "${KYU:-}" ] || { echo "SKIP: $T_NAME: the kyu tool was not built"; exit 77; }
[ "$(id -u)" = 0 ] || { echo "SKIP: $T_NAME: needs root to write /etc/kyu/client.ini"; exit 77; }
[ ! -e /etc/kyu/client.ini ] || { echo "SKIP: $T_NAME: /etc/kyu/client.ini exists already"; exit 77; }

made_dir=0
[ -d /etc/kyu ] || { mkdir -p /etc/kyu && made_dir=1; }
EXIT_HOOKS+=("rm -f /etc/kyu/client.ini")
[ "$made_dir" = 0 ] || EXIT_HOOKS+=("rmdir /etc/kyu 2>/dev/null")
EXIT_HOOKS+=("root_sql -e \"DROP USER IF EXISTS 'kyut_client'@'localhost'\"")

root_sql <<SQL
DROP USER IF EXISTS 'kyut_client'@'localhost';
CREATE USER 'kyut_client'@'localhost' IDENTIFIED BY 'client-pw';
GRANT SELECT, INSERT ON $T_DB.kyu_jobs TO 'kyut_client'@'localhost';
SQL
printf '%s\n' "[database]" "socket = $KYU_DB_SOCKET" "user = kyut_client" "password = client-pw" \
	"database = $T_DB" "[kyud]" "listen =" >/etc/kyu/client.ini
# Its password is shared with a group (conf/client.ini): readable by
# owner and group; every user's read bit would make kyu refuse it.
chmod 0640 /etc/kyu/client.ini

unset KYU_CONFIG
rc=0
"$KYU" submit -i c1 -s 'true' >"$T_DIR/out" 2>&1 || rc=$?
assert_eq 0 "$rc" "kyu submit through client.ini ($(cat "$T_DIR/out"))"
assert_eq "waiting" "$(sql "SELECT status FROM kyu_jobs WHERE id = 'c1'")" "c1: submitted"
"$KYU" list >"$T_DIR/out" 2>&1 || fail "kyu list through client.ini: $(cat "$T_DIR/out")"
grep -q c1 "$T_DIR/out" || fail "kyu list does not show c1: $(cat "$T_DIR/out")"
"$KYU" show c1 >"$T_DIR/out" 2>&1 || fail "kyu show through client.ini: $(cat "$T_DIR/out")"
rc=0
"$KYU" cancel c1 >"$T_DIR/out" 2>&1 || rc=$?
assert_eq 1 "$rc" "kyu cancel without UPDATE"
grep -q "UPDATE command denied to user 'kyut_client'" "$T_DIR/out" ||
	fail "kyu cancel without UPDATE: the server's reason is missing: $(cat "$T_DIR/out")"
assert_eq "waiting" "$(sql "SELECT status FROM kyu_jobs WHERE id = 'c1'")" "c1: still waiting"
echo "client.ini: submit, list and show work; cancel is refused by the server"

rm /etc/kyu/client.ini
rc=0
"$KYU" list >"$T_DIR/out" 2>&1 || rc=$?
if [ -e /etc/kyu/kyu.ini ]; then
	echo "/etc/kyu/kyu.ini exists here: the fallback read it (status $rc)"
else
	assert_eq 78 "$rc" "kyu list without any configuration file"
	grep -qF "kyu: /etc/kyu/kyu.ini: cannot open" "$T_DIR/out" ||
		fail "without client.ini, kyu did not fall back to /etc/kyu/kyu.ini: $(cat "$T_DIR/out")"
	echo "without client.ini, kyu reads /etc/kyu/kyu.ini"
fi
