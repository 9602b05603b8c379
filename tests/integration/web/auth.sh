#!/usr/bin/env bash
# kyu web's access rules: basic authentication against a crypt(3) hash
# made by kyu web --hash-password (401 without or with wrong credentials,
# 200 with them, again from the cache of the last match); no Host check
# once a password guards the pages; the refusals before listening (a
# non-loopback address without a password, or with one but without TLS or
# behind_proxy, half-set pairs, a bad hash, a taken port: status 78 and a
# message naming the problem); --read-only and [web] read_only refuse
# every action (403) and change nothing; HTTPS with tls_cert and tls_key
# (where openssl can make a certificate).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

hash=$(printf 'pw-s3cret\n' | "$KYU" web --hash-password) || fail "kyu web --hash-password"
case $hash in '$'?*'$'*) ;; *) fail "not a crypt(3) hash: '$hash'" ;; esac
sql "INSERT INTO kyu_jobs (id, command) VALUES ('j1', 'true'), ('j2', 'true')"

# ---- authentication
port=$(free_tcp_port)
start_web "$port" -- web.user=admin "web.password_hash=$hash"
u=$WEB_URL
assert_eq '401 Basic realm="kyu"' "$(webq --header WWW-Authenticate "$u/api/overview")" "no credentials"
assert_eq 401 "$(webq -u admin:wrong "$u/api/overview")" "a wrong password"
assert_eq 401 "$(webq -u root:pw-s3cret "$u/api/overview")" "a wrong user"
assert_eq 401 "$(webq -u admin:wrong "$u/")" "the page with a wrong password"
assert_eq 200 "$(webq -u admin:pw-s3cret "$u/api/overview")" "the right credentials"
assert_eq 200 "$(webq -u admin:pw-s3cret "$u/api/overview")" "the right credentials again"
assert_eq 401 "$(webq -u admin:pw-s3cret2 "$u/api/overview")" "a longer password after a match"
assert_eq 200 "$(webq -u admin:pw-s3cret -H 'Host: kyu.example.com' "$u/api/overview")" "any Host with a password"
assert_eq 403 "$(webq -X POST -u admin:pw-s3cret "$u/api/job/cancel?id=j1")" "a POST with credentials, without the token"
assert_eq "200 cancelled" "$(webq -X POST --csrf -u admin:pw-s3cret "$u/api/job/cancel?id=j1" "d['done']")" "a POST with both"
grep -E "cancel job 'j1' \(from 127\.0\.0\.1 as admin\)" "$WEB_LOG" >/dev/null || fail "the cancel is not logged with the user"
stop_web

# ---- refusals before listening: status 78, a message naming the problem
refused() { # refused WHAT ERE [kyu web ARGS] [-- key=value...]
	local what=$1 ere=$2 rc=0
	shift 2
	web_run "$@" 2>"$T_DIR/refused.log" || rc=$?
	assert_eq 78 "$rc" "status of kyu web with $what"
	grep -E -- "$ere" "$T_DIR/refused.log" >/dev/null || fail "$what: no message matching /$ere/: $(cat "$T_DIR/refused.log")"
}
port=$(free_tcp_port)
refused "0.0.0.0 and no password" "refusing to listen on 0\.0\.0\.0:$port, which is not a loopback address, without a password" \
	--listen "0.0.0.0:$port"
refused "[::] and no password" "refusing to listen on \[::\]:$port" -- "web.listen=[::]:$port"
refused "a password but no TLS" "refusing to listen on 0\.0\.0\.0:$port without TLS" \
	--listen "0.0.0.0:$port" -- web.user=admin "web.password_hash=$hash"
refused "a user without a hash" "user and password_hash go together" -- web.user=admin
refused "a hash that is not one" "password_hash starts with 'se': not a strong crypt\(3\) scheme" -- web.user=admin web.password_hash=secret
refused "a certificate without a key" "tls_cert and tls_key go together" -- web.tls_cert=/nonexistent
refused "a name for an address" "listen address 'localhost:$port'" --listen "localhost:$port"
port2=$(free_tcp_port)
start_web "$port2"
refused "a taken port" "listen address '127\.0\.0\.1:$port2': Address already in use" --listen "127.0.0.1:$port2" -- web.open_to_local_users=yes
stop_web
# Allowed: a password behind a proxy that terminates TLS.
start_web "$port" --listen "0.0.0.0:$port" -- web.user=admin "web.password_hash=$hash" web.behind_proxy=yes
assert_eq 200 "$(webq -u admin:pw-s3cret "$WEB_URL/api/overview")" "0.0.0.0 with a password, behind a proxy"
assert_eq 401 "$(webq "$WEB_URL/api/overview")" "0.0.0.0 without credentials"
stop_web

# ---- read-only: no action, whatever the token
for how in --read-only -- web.read_only=yes; do
	port=$(free_tcp_port)
	if [ "$how" = -- ]; then start_web "$port" -- web.read_only=yes; else start_web "$port" --read-only; fi
	assert_eq "200 true" "$(webq "$WEB_URL/api/session" "d['read_only']")" "session's read_only ($how)"
	for a in job/cancel?id=j2 job/delete?id=j1 job/retry?id=j1 queue/pause?queue=default; do
		assert_eq 403 "$(webq -X POST --csrf "$WEB_URL/api/$a")" "POST /api/$a when read-only ($how)"
	done
	assert_eq 200 "$(webq "$WEB_URL/api/job?id=j2")" "a job's page when read-only ($how)"
	stop_web
done
assert_eq "cancelled waiting" "$(sql "SELECT status FROM kyu_jobs ORDER BY id" | tr '\n' ' ' | sed 's/ $//')" \
	"j1 (cancelled before) and j2 after the read-only POSTs"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues")" "queues after the read-only pause"

# ---- HTTPS
if command -v openssl >/dev/null; then
	openssl req -x509 -newkey rsa:2048 -nodes -keyout "$T_DIR/key.pem" -out "$T_DIR/cert.pem" -days 2 \
		-subj /CN=localhost >/dev/null 2>&1 || fail "openssl could not make a certificate"
	port=$(free_tcp_port)
	start_web "$port" --listen "0.0.0.0:$port" -- web.user=admin "web.password_hash=$hash" \
		"web.tls_cert=$T_DIR/cert.pem" "web.tls_key=$T_DIR/key.pem"
	grep "serving the dashboard on https://0.0.0.0:$port/" "$WEB_LOG" >/dev/null || fail "no https in: $(cat "$WEB_LOG")"
	assert_eq "200 max-age=31536000 [\"j1\", \"cancelled\"]" \
		"$(webq --insecure --header Strict-Transport-Security -u admin:pw-s3cret "https://127.0.0.1:$port/api/job?id=j1" "[d['job']['id'], d['job']['status']]")" "a job over HTTPS"
	assert_eq 000 "$(webq "http://127.0.0.1:$port/api/overview")" "plain HTTP to the HTTPS port"
	stop_web
else
	echo "no openssl: HTTPS not tested"
fi
echo ok
