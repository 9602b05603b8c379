#!/usr/bin/env bash
# Many viewers, and clients that never finish a request (issue 44, item 3).
#  - Connections that send nothing, or half a request line, do not keep
#    the owner out: 300 of them over loopback TCP (where every local user
#    is 127.0.0.1) and over the Unix socket, and the owner's request is
#    still answered (within 10 s, loose); the server closes each such
#    connection within seconds (a tight limit on a request's headers),
#    all of them well within 30 s.
#  - 100 viewers at once, 20 requests each on a new connection, over TCP
#    with a password and over the socket: not one refused, reset or left
#    unanswered. The medians and 99th percentiles of the light pages are
#    printed, not asserted (a loaded 2-core machine).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

hash=$(printf 'pw-s3cret\n' | "$KYU" web --hash-password) || fail "kyu web --hash-password"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('j1', 'true')"
LIGHT=/api/session,/app.js,/api/overview,/api/running

# ---- loopback TCP with a password
port=$(free_tcp_port)
start_web "$port" -- web.user=admin "web.password_hash=$hash"
got=$(webload silent "$WEB_URL" 300 $((30 * KYU_TIME_SCALE)) admin:pw-s3cret)
read -r status secs <<<"$(sed -n 1p <<<"$got")"
assert_eq 200 "$status" "the owner's request beside 300 silent connections (TCP)"
awk -v s="$secs" -v m=$((10 * KYU_TIME_SCALE)) 'BEGIN { exit !(s < m) }' ||
	fail "the owner waited ${secs} s beside 300 silent connections"
assert_eq 300 "$(sed -n 2p <<<"$got")" "silent connections the server closed within 30 s (TCP)"
assert_eq 200 "$(webload ask "$WEB_URL" admin:pw-s3cret)" "the owner after the silent connections"

got=$(webload viewers "$WEB_URL" 100 20 "$LIGHT" admin:pw-s3cret)
echo "100 viewers x 20 requests, TCP with a password:"
echo "$got"
assert_eq "ok=2000 refused=0 reset=0 timeout=0 other=0" "$(sed -n 1p <<<"$got")" "100 viewers over TCP"
stop_web

# ---- the Unix socket, no password (its mode says who may connect)
sockdir=$(mktemp -d /tmp/kyu-web-crowd.XXXXXX)
EXIT_HOOKS+=("rm -rf '$sockdir'")
sock=$sockdir/web.sock
start_web 0 -- "web.listen=$sock" web.open_to_local_users=no
got=$(webload silent "$sock" 300 $((30 * KYU_TIME_SCALE)))
read -r status secs <<<"$(sed -n 1p <<<"$got")"
assert_eq 200 "$status" "a request beside 300 silent connections (socket)"
awk -v s="$secs" -v m=$((10 * KYU_TIME_SCALE)) 'BEGIN { exit !(s < m) }' ||
	fail "a request waited ${secs} s beside 300 silent connections (socket)"
assert_eq 300 "$(sed -n 2p <<<"$got")" "silent connections the server closed within 30 s (socket)"

got=$(webload viewers "$sock" 100 20 "$LIGHT")
echo "100 viewers x 20 requests, the Unix socket:"
echo "$got"
assert_eq "ok=2000 refused=0 reset=0 timeout=0 other=0" "$(sed -n 1p <<<"$got")" "100 viewers over the socket"
stop_web
echo ok
