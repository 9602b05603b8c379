#!/usr/bin/env bash
# systemd notification and watchdog, against a fake NOTIFY_SOCKET (a
# datagram listener, tests/notify_listen.py, that records what arrives and
# from which pid), with WATCHDOG_USEC=2 s:
#   - the database unreachable at start: WATCHDOG=1 pings, STATUS= names the
#     database as unreachable with its error, no READY=1; after a reload
#     with the right settings READY=1 (no RELOADING=1 before it: systemd
#     still waits for the start);
#   - a running job shows in STATUS=; neither workers nor jobs have
#     NOTIFY_SOCKET, and only the supervisor's pid ever sends;
#   - SIGSTOP of one worker stops the pings (none for a good while after a
#     grace period), SIGCONT brings them back;
#   - HUP: RELOADING=1 with MONOTONIC_USEC=, then READY=1;
#   - a worker stopped for longer than lease - fence_margin - heartbeat is
#     killed and restarted, and the pings resume; TERM: STOPPING=1.
# Order and presence only; the waits are generous.
. "$KYU_SRC/tests/lib.sh"

NOTES=$T_DIR/notify.log
SOCK=$T_DIR/notify.sock
if [ ${#SOCK} -gt 100 ]; then # a socket path fits in 108 bytes
	sockdir=$(mktemp -d /tmp/kyu-notify.XXXXXX)
	EXIT_HOOKS+=("rm -rf '$sockdir'")
	SOCK=$sockdir/notify.sock
fi
python3 "$KYU_SRC/tests/notify_listen.py" "$SOCK" "$NOTES" 600 2>>"$T_DIR/listen.log" &
EXIT_HOOKS+=("kill $! 2>/dev/null")
for _ in $(seq 100); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || fail "the notification listener did not start (see $T_DIR/listen.log)"

# count REGEX [FROM_LINE]: assignments matching REGEX (KEY=VALUE) from line FROM_LINE on.
count() { tail -n +"${2:-1}" "$NOTES" | grep -cE "^[0-9]+ [0-9.]+ -?[0-9]+ $1" || true; }
# wait_note REGEX SECONDS [FROM_LINE]: until such an assignment arrived.
wait_note() {
	local deadline=$(($(date +%s) + $2 * KYU_TIME_SCALE))
	until [ "$(count "$1" "${3:-1}")" -gt 0 ]; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no $1 within $2 s; last: $(tail -n 3 "$NOTES" | tr '\n' '|')"
		sleep 0.1
	done
}
# wait_pings N SECONDS: N more WATCHDOG=1 than now.
wait_pings() {
	local want=$(($(count WATCHDOG=1) + $1)) deadline=$(($(date +%s) + $2 * KYU_TIME_SCALE))
	until [ "$(count WATCHDOG=1)" -ge "$want" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "fewer than $1 WATCHDOG=1 in $2 s"
		sleep 0.1
	done
}
lines() { wc -l <"$NOTES"; }
# first_line REGEX [FROM_LINE]: the line number of the first such assignment.
first_line() { tail -n +"${2:-1}" "$NOTES" | grep -nE "^[0-9]+ [0-9.]+ -?[0-9]+ $1" | sed -n 1p | cut -d: -f1; }

# ---- start with nothing listening on the configured TCP port
port=$((20000 + RANDOM % 30000))
while port_in_use "$port"; do port=$((port + 1)); done
KYUD_INI=$T_DIR/kyud.ini
# A lease of 60 s: the worker stopped below is not killed (after 60 - 10 - 15 s).
write_ini "$KYUD_INI" kyud.lease=60 database.socket= database.host=127.0.0.1 database.port="$port"
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=2000000 env --default-signal "$KYUD" -c "$KYUD_INI" 2>>"$KYUD_LOG" &
KYUD_PID=$!
sup=$KYUD_PID
wait_note 'STATUS=waiting for the database; 0 jobs running, 2 workers; database unreachable since [0-9: -]+: error 200[23] \(server not reachable\)$' 30
wait_pings 3 30
assert_eq 0 "$(count 'READY=1')" "READY=1 while the database is unreachable"
assert_log_contains 'kyud\[sup\]: 2 worker\(s\) started; waiting for the database \(error 200[23]\) before reporting ready'
assert_log_lacks 'kyud\[sup\]: ready:'

# ---- the right settings: READY=1 once a worker is connected
write_ini "$KYUD_INI" kyud.lease=60
signal_kyud HUP
wait_note 'READY=1' 30
assert_eq 0 "$(count 'RELOADING=1')" "RELOADING=1 before the first READY=1"
ready=$(first_line 'READY=1')
# One worker connected is enough; the other may still be in its backoff.
sed -n "$((ready + 1))p" "$NOTES" | grep -E ' STATUS=0 jobs running, 2 workers; database connected( \(1 of 2 workers\))?$' >/dev/null ||
	fail "READY=1 came without the STATUS= of a connected database: $(sed -n "$((ready + 1))p" "$NOTES")"
assert_log_contains 'kyud\[sup\]: ready: 2 workers, database connected$'
wait_pings 3 30

# ---- a running job shows; nobody but the supervisor has NOTIFY_SOCKET
sql "INSERT INTO kyu_jobs (id, command) VALUES ('hold',
	'env >$T_DIR/job.env; while [ ! -e $T_DIR/go ]; do sleep 0.1; done')"
wait_note 'STATUS=1 job running, 2 workers; database connected' 30
for w in $(pgrep -P "$sup"); do
	if tr '\0' '\n' <"/proc/$w/environ" | grep -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' >/dev/null; then
		fail "worker $w has systemd's notification variables"
	fi
done
grep -E '^(NOTIFY_SOCKET|WATCHDOG_USEC|WATCHDOG_PID)=' "$T_DIR/job.env" && fail "a job has systemd's notification variables"
touch "$T_DIR/go"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'hold'" succeeded 30
wait_note 'STATUS=0 jobs running, 2 workers; database connected' 30 "$(first_line 'STATUS=1 job running')"

# ---- a stopped worker stops the pings; once it runs again, they resume
victim=$(pgrep -P "$sup" | sed -n 1p)
[ -n "$victim" ] || fail "no worker process"
kill -STOP "$victim"
EXIT_HOOKS+=("kill -CONT $victim 2>/dev/null")
deadline=$(($(date +%s) + 30))
until grep -E "kyud\[sup\]: worker [0-9]+ \(pid $victim\) has not reported for" "$KYUD_LOG" >/dev/null; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "the supervisor did not notice the stopped worker in 30 s"
	sleep 0.1
done
sleep 3 # a ping already on its way, a slow listener
before=$(count WATCHDOG=1)
sleep 6 # three ping intervals
assert_eq "$before" "$(count WATCHDOG=1)" "WATCHDOG=1 pings while a worker is stopped"
kill -CONT "$victim"
wait_pings 2 30
assert_log_contains "kyud\[sup\]: worker [0-9]+ \(pid $victim\) reports again: watchdog pings resume"

# ---- reload: RELOADING=1 (with MONOTONIC_USEC=, in one datagram) then READY=1
from=$(($(lines) + 1))
# lease 8: fence_margin and heartbeat 2 (lease / 4): a silent worker is killed after 4 s.
write_ini "$KYUD_INI" kyud.lease=8
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(hup_verdict)" "reload verdict"
wait_note 'READY=1' 30 "$from"
rel=$(first_line 'RELOADING=1' "$from")
rdy=$(first_line 'READY=1' "$from")
[ -n "$rel" ] && [ "$rel" -lt "$rdy" ] || fail "no RELOADING=1 before READY=1 after HUP"
seq_rel=$(tail -n +"$from" "$NOTES" | sed -n "${rel}p" | cut -d' ' -f1)
tail -n +"$from" "$NOTES" | grep -E "^$seq_rel [0-9.]+ -?[0-9]+ MONOTONIC_USEC=[0-9]+$" >/dev/null ||
	fail "RELOADING=1 came without MONOTONIC_USEC="

# ---- a worker silent for longer than lease - fence_margin - heartbeat is killed
WORKER_DEATHS_OK=1
victim=$(pgrep -P "$sup" | sed -n 2p)
[ -n "$victim" ] || fail "no second worker process"
kill -STOP "$victim"
EXIT_HOOKS+=("kill -CONT $victim 2>/dev/null")
deadline=$(($(date +%s) + 40))
until grep -E "kyud\[sup\]: worker ([0-9]+) \(pid $victim\) killed by signal" "$KYUD_LOG" >/dev/null; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "the stopped worker $victim was not killed in 40 s"
	sleep 0.2
done
assert_log_contains "kyud\[sup\]: worker [0-9]+ \(pid $victim\) stopped reporting for [0-9.]+ s .*: killing it and its jobs"
wait_pings 2 30

# ---- TERM: STOPPING=1
from=$(($(lines) + 1))
stop_kyud
wait_note 'STOPPING=1' 10 "$from"

# Every datagram came from the supervisor.
others=$(awk -v p="$sup" '$3 != p' "$NOTES" | sed -n 1,3p)
assert_eq "" "$others" "datagrams from a process other than the supervisor"
