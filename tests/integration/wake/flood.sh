#!/usr/bin/env bash
# A flood of 100,000 wake-up datagrams, as fast as one python3 process
# sends them: a quarter valid ("kyu:q", "kyu:", "kyu:q\n", "kyu:other"),
# a quarter malformed, a quarter oversized (65,000 bytes), a quarter empty.
# kyud stays up, no worker is restarted, the malformed ones are logged in a
# bounded number of lines, and the database load it causes is bounded by
# wake_rate (its default, 10), whatever the datagram rate:
#
#   on_datagram (src/kyud/listener.c) drains up to 1024 queued datagrams per wake-up
#   of the supervisor's loop and then calls fanout_wake at most once, and only
#   when the token bucket allows (ratelimit_allow: wake_rate per second, bucket
#   of wake_rate, full at the start). Over the rate it arms the poll timer
#   at 1 / wake_rate s instead (unless it fires sooner), so those add at most
#   wake_rate per second. fanout_wake sends a
#   claim to one idle worker, or, while a claim is in flight, sets
#   hint_pending, which becomes one claim when the answer comes: every claim
#   comes from one fanout_wake call. With nothing due, a claim is 2 statements
#   (the UPDATE and the SELECT, one round trip); each worker adds a
#   retention delete (3 statements) every cleanup_every (100) claims. So
#   during a flood of F seconds (the bucket's burst counts as one more
#   second):
#     claims     <= wake_rate * (F + 1) + wake_rate * F + F / poll_interval + 1
#   and after it, one claim for a pending hint and one for the deferred poll
#   (which re-arms itself at poll_interval): 2 more, and the two rechecks
#   of each worker whose last woken claim found nothing (worker.c,
#   wake_recheck): 2 * workers more. Then
#     statements <= 2 * claims + 3 * (claims / 100 + workers)
#   plus a refresh of the daemon's row of kyu_daemons (every 20 s).
#   (The simpler wake_rate * F * 2 + 20 does not hold: a flood shorter than
#   a second gets the full bucket, up to wake_rate claims, at once.)
#
# Afterwards a job inserted and woken with one datagram still runs (with
# poll_interval = 30 nothing else would start it within the test).
# Printed for the notes: the supervisor's CPU seconds during the flood, the
# statements, the datagrams the kernel dropped for want of buffer.
. "$KYU_SRC/tests/lib.sh"

WAKE_RATE=10
WORKERS=2
POLL=30
N=100000

port=$(free_udp_port)
use_own_db_user
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=$WORKERS kyud.poll_interval=$POLL kyud.wake_rate=@default \
	kyud.listen="127.0.0.1:$port"
# Start-up claims done (however long a loaded machine takes for them);
# idle until a datagram or the 30 s poll.
wait_workers_idle $WORKERS
workers=$(worker_pids)
hz=$(getconf CLK_TCK)

# cpu_ticks PID: utime + stime of PID, in clock ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
# Datagrams the kernel dropped on kyud's socket (the last column of
# /proc/net/udp, for the socket bound to the port).
udp_drops() {
	awk -v p="$(printf ':%04X' "$port")" '$2 ~ p"$" { print $NF }' /proc/net/udp | sed -n 1,1p
}
malformed_lines() { grep -c 'malformed wake-up datagram' "$KYUD_LOG" || true; }

# A job due now would make every claim start something; with the table
# empty each claim costs the same 2 statements.
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows before the flood"
lines0=$(malformed_lines)
drops0=$(udp_drops)
c0=$(cpu_ticks "$KYUD_PID")
t0=$(now_ms)
s0=$(db_statements)
python3 - "$port" "$N" >"$T_DIR/flood.out" <<-'PY'
	import socket, sys, time
	port, n = int(sys.argv[1]), int(sys.argv[2])
	s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
	valid = [b"kyu:q", b"kyu:", b"kyu:q\n", b"kyu:other"]
	big = b"kyu:" + b"x" * 64996
	sent = errors = 0
	t = time.monotonic()
	for i in range(n):
	    k = i % 4
	    if k == 0:
	        d = valid[(i // 4) % 4]
	    elif k == 1:
	        d = b"\xde\xad" * (i % 40) + b"kyu"
	    elif k == 2:
	        d = big
	    else:
	        d = b""
	    try:
	        s.sendto(d, ("127.0.0.1", port))
	        sent += 1
	    except OSError:
	        errors += 1
	print(sent, errors, "%.3f" % (time.monotonic() - t))
PY
read -r sent send_errors flood_s <"$T_DIR/flood.out"
c1=$(cpu_ticks "$KYUD_PID")
t1=$(now_ms)
s1=$(db_statements)
# What the flood left queued (a pending hint, the 0.1 s poll) settles.
sleep 1
s2=$(db_statements)
t2=$(now_ms)
c2=$(cpu_ticks "$KYUD_PID")
drops=$(($(udp_drops) - drops0))

kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died during the flood"
assert_eq "$workers" "$(worker_pids)" "worker pids (none restarted)"

window_ms=$((t2 - t0))
# F: the whole window, from before the first reading to after the last one
# (python's start-up included), rounded up to whole seconds. On a loaded
# machine the supervisor still drains queued datagrams after the sender
# is done, and claims at wake_rate meanwhile: the bucket bounds claims
# over real time, so the bound is taken over the window's real length.
f=$(((window_ms + 999) / 1000))
max_claims=$((WAKE_RATE * (f + 1) + WAKE_RATE * f + f / POLL + 1 + 2 + 2 * WORKERS))
max_statements=$((2 * max_claims + 3 * (max_claims / 100 + WORKERS) + REGISTRY_STATEMENTS))
n_flood=$((s1 - s0))
n_all=$((s2 - s0))
cpu_flood=$(awk -v a="$c0" -v b="$c1" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
cpu_all=$(awk -v a="$c0" -v b="$c2" -v hz="$hz" 'BEGIN { printf "%.2f", (b - a) / hz }')
echo "flood: $sent datagrams sent in $flood_s s by python3 ($send_errors send errors), $drops dropped by the kernel (socket buffer full)"
echo "supervisor CPU: ${cpu_flood} s during the flood, ${cpu_all} s up to 1 s after it (CLK_TCK $hz)"
echo "statements of kyud's user: $n_flood during the flood (sent in ${flood_s} s; $((t1 - t0)) ms between the readings), $n_all up to 1 s after it (bound $max_statements for wake_rate $WAKE_RATE)"
echo "malformed-datagram log lines: $(($(malformed_lines) - lines0))"
[ "$sent" -gt 0 ] || fail "the sender sent nothing"
[ "$n_all" -le "$max_statements" ] ||
	fail "$n_all statements for a flood of $((t1 - t0)) ms (window $window_ms ms): more than the $max_statements that wake_rate $WAKE_RATE allows"
# Some valid datagrams got through: the flood did cause claims.
[ "$n_all" -ge 2 ] || fail "no claim at all during a flood with 25,000 valid wake-ups"
# One line at the first malformed datagram, then one a minute at most.
max_lines=$((2 + window_ms / 60000))
[ $(($(malformed_lines) - lines0)) -le $max_lines ] ||
	fail "$(($(malformed_lines) - lines0)) log lines about malformed datagrams (at most $max_lines)"
assert_log_contains 'ignored [0-9]+ malformed wake-up datagram'

# Still listening: a new job and one datagram, and it runs (the next poll
# is up to 30 s away).
sleep 0.5
sql "INSERT INTO kyu_jobs (id, command) VALUES ('after-flood', 'echo \$KYU_JOB_ID > $T_DIR/after')"
printf 'kyu:' >"/dev/udp/127.0.0.1/$port"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'after-flood'" succeeded 30
assert_eq after-flood "$(cat "$T_DIR/after")" "what the job after the flood wrote"
assert_eq "$workers" "$(worker_pids)" "worker pids at the end (none restarted)"
stop_kyud
