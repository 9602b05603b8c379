#!/usr/bin/env bash
# Who may reach kyu web (issue 25, items 4-6):
#  - the default is a Unix socket (created 0660 or as [web] socket_mode
#    says, in [web] socket_group): it serves there, a user outside the mode
#    (nobody, when the test runs as root) cannot connect, and a mode open to
#    every user is refused;
#  - loopback TCP without a password is refused unless open_to_local_users
#    = yes says that every local user may use it;
#  - behind_proxy = yes without a password is refused, on loopback too;
#    without a password, a Host other than localhost or a loopback address,
#    or a header that proxies add, is refused (403);
#  - only strong crypt schemes: $1$ (MD5) and $5$ are refused, naming the
#    prefix;
#  - wrong passwords from one client (here: one local user) are answered
#    429 with Retry-After after a few, a new right password too until the
#    wait is over (no crypt for a waiting client), then 200 again
#    (web/guess.sh: others' wrong passwords; web/crowd.sh: connections).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

hash=$(printf 'pw-s3cret\n' | "$KYU" web --hash-password) || fail "kyu web --hash-password"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('j1', 'true')"

refused() { # refused WHAT ERE [kyu web ARGS] [-- key=value...]
	local what=$1 ere=$2 rc=0
	shift 2
	local -a args=() kv=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	kv=("$@")
	write_ini "$T_DIR/web.ini" "${kv[@]}"
	# A kyu web that accepts the configuration serves until stopped:
	# timeout ends it (124), which fails the assertion below.
	timeout $((20 * KYU_TIME_SCALE)) "$KYU" -c "$T_DIR/web.ini" web "${args[@]}" 2>"$T_DIR/refused.log" || rc=$?
	assert_eq 78 "$rc" "status of kyu web with $what"
	grep -E -- "$ere" "$T_DIR/refused.log" >/dev/null || fail "$what: no message matching /$ere/: $(cat "$T_DIR/refused.log")"
}

# ---- the default listener is a Unix socket
refused "no [web] listen" "listen socket '/run/kyu-web/web\.sock': \[web\] socket_mode = '0666': refusing" \
	-- web.socket_mode=0666
# In a directory every user may enter: the socket's own mode is what
# keeps them out.
sockdir=$(mktemp -d /tmp/kyu-web-access.XXXXXX)
chmod 755 "$sockdir"
EXIT_HOOKS+=("rm -rf '$sockdir'")
sock=$sockdir/web.sock
gid=$(id -g)
start_web 0 -- "web.listen=$sock" web.open_to_local_users=no "web.socket_group=$gid"
grep "serving the dashboard on the socket $sock" "$WEB_LOG" >/dev/null || fail "not on the socket: $(cat "$WEB_LOG")"
assert_eq "srw-rw---- $gid" "$(stat -c '%A %g' "$sock")" "the socket's mode and group"
assert_eq "200 j1" "$(webq --unix "$sock" "http://localhost/api/job?id=j1" "d['job']['id']")" "a job through the socket"
assert_eq 403 "$(webq --unix "$sock" -H 'Host: evil.example' "http://localhost/api/overview")" "a Host that is a name, on the socket"
assert_eq 403 "$(webq --unix "$sock" -H 'Host: 192.0.2.1' "http://localhost/api/overview")" "a Host that is not loopback"
assert_eq 200 "$(webq --unix "$sock" -H 'Host: 127.0.0.1:7780' "http://localhost/api/overview")" "Host 127.0.0.1"
for h in 'X-Forwarded-For: 192.0.2.1' 'Forwarded: for=192.0.2.1' 'X-Real-IP: 192.0.2.1' 'Via: 1.1 proxy'; do
	assert_eq 403 "$(webq --unix "$sock" -H "$h" "http://localhost/api/overview")" "a proxied request ($h) without a password"
done
py=$(command -v /usr/bin/python3 || true)
if [ "$(id -u)" = 0 ] && [ -n "$py" ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
	as_nobody() { (cd / && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"); }
	as_nobody test -S "$sock" || fail "nobody cannot see the socket: the test proves nothing"
	# A job running as nobody, say: not in the socket's group.
	assert_eq "PermissionError" "$(as_nobody "$py" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
    print("connected")
except OSError as e:
    print(type(e).__name__)' "$sock" 2>&1)" "nobody connecting to the socket"
else
	echo "not root: the test of another user's access is skipped"
fi
stop_web
[ ! -e "$sock" ] || fail "the socket is left after kyu web stopped"
refused "a socket every user may connect to" "socket_mode = '0666': refusing a socket that every local user may connect to" \
	--listen "$sock" -- web.socket_mode=0666
refused "a bad socket mode" "socket_mode = '0x1': expected an octal mode" --listen "$sock" -- web.socket_mode=0x1

# ---- loopback TCP: a password, or open_to_local_users = yes
port=$(free_tcp_port)
refused "loopback without a password" "refusing to listen on 127\.0\.0\.1:$port without a password: every local user" \
	--listen "127.0.0.1:$port"
refused "[::1] without a password" "refusing to listen on \[::1\]:$port without a password" --listen "[::1]:$port"
start_web "$port"
grep "without a password (open_to_local_users = yes)" "$WEB_LOG" >/dev/null || fail "no warning: $(cat "$WEB_LOG")"
assert_eq 200 "$(webq "$WEB_URL/api/overview")" "loopback with open_to_local_users = yes"
stop_web

# ---- behind a proxy: always a password
refused "behind_proxy on loopback without a password" "behind_proxy = yes needs \[web\] user and password_hash" \
	--listen "127.0.0.1:$port" -- web.behind_proxy=yes web.open_to_local_users=yes
refused "behind_proxy on a socket without a password" "behind_proxy = yes needs \[web\] user and password_hash" \
	--listen "$sock" -- web.behind_proxy=yes

# ---- strong schemes only
refused "an MD5 crypt hash" "password_hash starts with '\\\$1\\\$': not a strong" \
	--listen "127.0.0.1:$port" -- web.user=admin 'web.password_hash=$1$saltsalt$qjXMvbEw8oaL.CzflDugX/'
refused "a SHA-256 crypt hash" "password_hash starts with '\\\$5\\\$': not a strong" \
	--listen "127.0.0.1:$port" -- web.user=admin 'web.password_hash=$5$saltsalt$5YHGdtTj3cDvFYtOzLDTgEFNGbILGPU5ZVjmC17eSg1'
case $hash in '$y$'* | '$gy$'* | '$7$'* | '$2b$'* | '$2y$'* | '$6$'*) ;; *) fail "--hash-password made a weak hash: $hash" ;; esac

# ---- failed logins: 429 after a few, without a crypt, until the wait ends
start_web "$port" -- web.user=admin "web.password_hash=$hash"
for i in 1 2 3 4; do
	assert_eq 401 "$(webq -u admin:wrong$i "$WEB_URL/api/overview")" "wrong password $i"
done
# From the fifth on, each wrong password makes the address wait, twice as
# long each time. Waiting out each wait (a wrong password during one is not
# counted: it is not checked) until the wait is long enough that no loaded
# machine gets the next request in after it.
want=$((8 * KYU_TIME_SCALE))
[ "$want" -le 60 ] || want=60
n=0 wait_s=0
while :; do
	got=$(webq --header Retry-After -u admin:wrong "$WEB_URL/api/overview")
	case $got in
	"429 "[0-9]*)
		wait_s=${got#429 }
		[ "$wait_s" -lt "$want" ] || break
		sleep "$wait_s"
		;;
	"401 -") ;;
	*) fail "a wrong password: '$got', want 401, or 429 with Retry-After" ;;
	esac
	n=$((n + 1))
	[ "$n" -lt 40 ] || fail "40 wrong passwords and no wait of $want s (the last answer: '$got')"
done
got=$(webq --header Retry-After -u admin:pw-s3cret "$WEB_URL/api/overview")
case $got in "429 "[0-9]*) ;; *) fail "the right password while waiting: '$got', want 429 with Retry-After" ;; esac
deadline=$(($(date +%s) + 90 * KYU_TIME_SCALE))
until [ "$(webq -u admin:pw-s3cret "$WEB_URL/api/overview")" = 200 ]; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "the right password is still refused after 90 s"
	sleep 1
done
# ... and the success cleared the count: one wrong password is a 401.
assert_eq 401 "$(webq -u admin:wrong6 "$WEB_URL/api/overview")" "a wrong password after a success"
assert_eq 200 "$(webq -u admin:pw-s3cret "$WEB_URL/api/overview")" "the right one after it"

stop_web
echo ok
