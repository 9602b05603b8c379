# shellcheck shell=bash
# kyud under test: starting it (and other daemons on the same table),
# signalling, reloading and stopping it, its workers, and a configuration
# it must refuse.

# start_kyud [section.key=value ...]: write $T_DIR/kyud.ini, start kyud in
# the background (stderr appended to $KYUD_LOG), return once it is ready.
start_kyud() {
	[ -z "$KYUD_PID" ] || fail "start_kyud: kyud already running"
	KYUD_INI=$T_DIR/kyud.ini
	write_ini "$KYUD_INI" "$@"
	local from deadline
	from=$(($(wc -l <"$KYUD_LOG") + 1))
	# Background jobs of a script start with INT and QUIT ignored; env resets
	# every signal so kyud starts as it would under systemd, and what its
	# jobs see is kyud's own doing.
	# KYU_VALGRIND=1: kyud and its workers (not the jobs: their programs
	# are skipped) under memcheck, one log per process in $T_DIR.
	env --default-signal "${VALGRIND[@]}" "$KYUD" -c "$KYUD_INI" 2>>"$KYUD_LOG" &
	KYUD_PID=$!
	# A bound for a hang, not a figure: a loaded machine can take 10 s or more.
	deadline=$(($(date +%s) + 60 * KYU_TIME_SCALE))
	until tail -n +"$from" "$KYUD_LOG" | grep 'kyud\[sup\]: ready:' >/dev/null; do
		if ! kill -0 "$KYUD_PID" 2>/dev/null; then
			local rc=0
			wait "$KYUD_PID" || rc=$?
			KYUD_PID=
			fail "kyud exited with status $rc before it was ready"
		fi
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud not ready after $((60 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# wait_kyud_exit TIMEOUT_S: reap kyud; its status lands in KYUD_STATUS.
wait_kyud_exit() {
	local deadline=$(($(date +%s) + $1 * KYU_TIME_SCALE))
	while kill -0 "$KYUD_PID" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud (pid $KYUD_PID) still running after $(($1 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
	KYUD_STATUS=0
	wait "$KYUD_PID" || KYUD_STATUS=$?
	KYUD_PID=
}

# signal_kyud SIG: send SIG to the supervisor; failing if it already died
# says so, instead of a bare "no such process".
signal_kyud() {
	[ -n "$KYUD_PID" ] || fail "signal_kyud: kyud was not started"
	if ! kill -"$1" "$KYUD_PID" 2>/dev/null; then
		local rc=0
		wait "$KYUD_PID" || rc=$?
		KYUD_PID=
		fail "kyud died before it was sent $1 (exit status $rc)"
	fi
}

# stop_kyud [TIMEOUT_S]: TERM, wait for the drain, demand exit status 0.
stop_kyud() {
	signal_kyud TERM
	wait_kyud_exit "${1:-30}"
	assert_eq 0 "$KYUD_STATUS" "kyud exit status after TERM"
	assert_no_sanitizer_report
	assert_no_valgrind_report
	assert_no_worker_death
}

# worker_pids: the supervisor's children, sorted, on one line.
worker_pids() {
	pgrep -P "$KYUD_PID" | sort -n | tr '\n' ' '
}

# hup_verdict: SIGHUP kyud, wait for the supervisor's verdict on the reload
# and print it ("kyud[sup]: reloaded FILE" or "... reload failed, ...").
hup_verdict() {
	local from deadline
	from=$(($(wc -l <"$KYUD_LOG") + 1))
	signal_kyud HUP
	deadline=$(($(date +%s) + 30))
	until tail -n +"$from" "$KYUD_LOG" | grep -E 'kyud\[sup\]: (reloaded|reload failed)' >/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no reload verdict in the log 30 s after SIGHUP"
		sleep 0.1
	done
	tail -n +"$from" "$KYUD_LOG" | grep -E 'kyud\[sup\]: (reloaded|reload failed)'
}

# assert_config_refused INI LINE TEXT: kyud --check-config and a plain start
# both exit 78 (EX_CONFIG) without starting, and say INI:LINE: TEXT (INI:
# TEXT when LINE is -) on stderr.
assert_config_refused() {
	local ini=$1 line=$2 text=$3 rc mode where
	where="$ini:$line: "
	[ "$line" != - ] || where="$ini: "
	for mode in --check-config start; do
		rc=0
		if [ $mode = start ]; then
			timeout 10 "$KYUD" -c "$ini" 2>"$T_DIR/err" >/dev/null || rc=$?
		else
			timeout 10 "$KYUD" -c "$ini" --check-config 2>"$T_DIR/err" >/dev/null || rc=$?
		fi
		cat "$T_DIR/err" >>"$KYUD_LOG"
		assert_eq 78 "$rc" "exit status of kyud ($mode) with $(basename "$ini") ($(cat "$T_DIR/err"))"
		grep -qF -- "$where$text" "$T_DIR/err" ||
			fail "kyud ($mode) stderr lacks '$where$text'; it said: $(cat "$T_DIR/err")"
		! grep -q 'ready:' "$T_DIR/err" || fail "kyud ($mode) started with a bad config"
	done
}

# ---------------------------------------------------------------- more daemons
# (for the tests of several daemons on one table)

EXTRA_PIDS=

# start_extra_kyud NAME [section.key=value ...]: another kyud on the same
# database, config $T_DIR/NAME.ini, log $T_DIR/NAME.log; returns once ready.
start_extra_kyud() {
	local name=$1 pid
	shift
	write_ini "$T_DIR/$name.ini" "$@"
	env --default-signal "$KYUD" -c "$T_DIR/$name.ini" 2>>"$T_DIR/$name.log" &
	pid=$!
	EXTRA_PIDS="$EXTRA_PIDS $pid"
	local deadline=$(($(date +%s) + 60 * KYU_TIME_SCALE))
	until grep -q 'kyud\[sup\]: ready:' "$T_DIR/$name.log" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || fail "kyud $name exited before it was ready"
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud $name not ready after $((60 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# stop_extra_kyuds: TERM every extra kyud and wait; fail on a bad status.
stop_extra_kyuds() {
	local p rc
	for p in $EXTRA_PIDS; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $EXTRA_PIDS; do
		rc=0
		wait "$p" || rc=$?
		[ "$rc" = 0 ] || fail "an extra kyud (pid $p) exited with status $rc"
	done
	EXTRA_PIDS=
}
