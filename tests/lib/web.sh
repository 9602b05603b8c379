# shellcheck shell=bash
# Helpers of the kyu web tests (tests/integration/web/*.sh, output/live.sh),
# sourced after tests/lib.sh: kyu web started and stopped, requests. Not
# sourced by tests/lib.sh itself: it skips the test (77) when kyu was not
# built.
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

WEB_PID=
WEB_LOG=$T_DIR/web.log

# webq ARGS...: one request (tests/webq.py); prints "STATUS ...".
webq() { python3 "$KYU_SRC/tests/webq.py" "$@"; }

# web_run [kyu web ARGS] [-- section.key=value ...]: write $T_DIR/web.ini
# (the test defaults and the overrides) and run kyu web in the foreground;
# its status is kyu web's. For the refusals, which end before listening.
web_run() {
	local -a args=() kv=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	kv=("$@")
	write_ini "$T_DIR/web.ini" "${kv[@]}"
	"$KYU" -c "$T_DIR/web.ini" web "${args[@]}"
}

# start_web PORT [kyu web ARGS] [-- section.key=value ...]: kyu web in the
# background on 127.0.0.1:PORT (unless an override says otherwise), until
# it serves; WEB_URL is its address. Without a password, as the tests'
# browser reaches TCP only: open_to_local_users = yes (web/access.sh tests
# the default, a Unix socket).
start_web() {
	local port=$1 deadline from
	shift
	WEB_URL=http://127.0.0.1:$port
	touch "$WEB_LOG"
	from=$(($(wc -l <"$WEB_LOG") + 1))
	local -a args=() kv=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	kv=("web.listen=127.0.0.1:$port" web.open_to_local_users=yes "$@")
	write_ini "$T_DIR/web.ini" "${kv[@]}"
	"$KYU" -c "$T_DIR/web.ini" web "${args[@]}" 2>>"$WEB_LOG" &
	WEB_PID=$!
	EXTRA_PIDS="${EXTRA_PIDS:-} $WEB_PID"
	deadline=$(($(date +%s) + 20 * KYU_TIME_SCALE))
	until tail -n +"$from" "$WEB_LOG" | grep 'serving the dashboard' >/dev/null; do
		kill -0 "$WEB_PID" 2>/dev/null || fail "kyu web exited before serving: $(cat "$WEB_LOG")"
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyu web not serving after 20 s: $(cat "$WEB_LOG")"
		sleep 0.1
	done
}

stop_web() {
	[ -n "$WEB_PID" ] || return 0
	kill -TERM "$WEB_PID" 2>/dev/null || true
	wait "$WEB_PID" 2>/dev/null || true
	WEB_PID=
	# Under KYU_SANITIZE, what ASan and UBSan found in kyu-web.
	if grep -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$WEB_LOG" >/dev/null; then
		fail "sanitizer report in kyu web's log: $(grep -E -A5 'Sanitizer|runtime error' "$WEB_LOG" | sed -n 1,30p)"
	fi
}

# webload MODE TARGET ARGS...: bounded local load on kyu web
# (tests/integration/web/load.py says what each mode prints).
webload() { timeout $((300 * KYU_TIME_SCALE)) python3 "$KYU_SRC/tests/integration/web/load.py" "$@"; }
