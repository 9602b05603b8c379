#!/usr/bin/env bash
# A burst of 1000 wake-up datagrams costs a handful of claims, not 1000:
# hints that arrive while a claim is in flight fold into one follow-up, and
# datagrams queued together are one wake-up. Claims are counted on the
# server: kyud connects as a user of this test's own, and the server's
# per-user statistics count its UPDATE statements (with no job in the table
# the only UPDATEs a worker sends are its claims, and worker 1's refresh of
# the daemon's row of kyu_daemons every 2 x lease: REGISTRY_UPDATES each). A
# woken claim that finds nothing is made again 0.3 s and 2.3 s later
# (worker.c, wake_recheck): two claims more per burst.
. "$KYU_SRC/tests/lib.sh"

# How many claims a burst costs depends on how the sender's and the
# supervisor's time slices interleave: 1-9 usually, 24 seen once on a
# 2-core machine with two CPU hogs. Without the folding each datagram the
# rate limit lets through (wake_rate: 10 a second, 10 at once, by default)
# could cost one, and a burst of 200 datagrams more: 80 still
# tells the two apart.
MAX_CLAIMS=80
# Jobs woken by a datagram start within WAKE_MAX_MS of it. A poll could not
# start them that soon (poll_interval 60: none comes within 54 s of the
# last claim), so any start within the bound is the wake-up's doing. It is
# no latency target: a 2-core machine at load average 40 took 1.1 s at most.
WAKE_MAX_MS=10000

# burst N PAYLOAD: send N datagrams as fast as python can; prints how
# long that took (ms) and the time of the first send (epoch seconds, the
# host clock, which is the database's: same machine). Python's own start,
# which takes seconds on a loaded machine, is before the first send.
burst() {
	python3 - "$port" "$1" "$2" <<-'PY'
		import socket, sys, time
		port, n, payload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.connect(("127.0.0.1", port))
		first = time.time()
		t = time.monotonic()
		for _ in range(n):
		    s.send(payload)
		print(round((time.monotonic() - t) * 1000, 1), "%.6f" % first)
	PY
}

use_own_db_user
port=$(free_udp_port)
# cleanup_every: no retention DELETE among the counted statements. A long
# lease: no heartbeat UPDATE while the few jobs of the last part run.
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=4 kyud.poll_interval=60 kyud.listen="127.0.0.1:$port" \
	kyud.cleanup_every=1000000 kyud.lease=60
wait_workers_idle 4 # the start-up claims are done: kyud sleeps for ~60 s

# updates_after BASE: wait (30 s at most) until the UPDATE count is above
# BASE, then 3 s more for any further claim of the same burst (the
# rechecks); prints it.
updates_after() {
	local u deadline=$(($(date +%s) + 30))
	until u=$(db_updates) && [ "$u" -gt "$1" ]; do
		[ "$(date +%s)" -lt "$deadline" ] && sleep 0.1 && continue
		echo "$u"
		return
	done
	sleep 3
	db_updates
}

# 1. 1000 datagrams in one burst, nothing to do.
u0=$(db_updates)
read -r took _ < <(burst 1000 kyu:)
u1=$(updates_after "$u0")
claims=$((u1 - u0))
echo "1000 datagrams in a burst of $took ms: $claims claim(s)"
[ "$claims" -ge 1 ] || fail "1000 wake-up datagrams caused no claim at all"
[ "$claims" -le "$MAX_CLAIMS" ] || fail "1000 wake-up datagrams sent in $took ms caused $claims claims (at most $MAX_CLAIMS)"

# 2. Datagrams that are all queued when the supervisor looks: one claim
# (two at most, if its receive loop takes them in two rounds). The
# supervisor is stopped while they arrive; what the socket buffer cannot
# hold the kernel drops.
signal_kyud STOP
burst 1000 kyu:default >/dev/null
signal_kyud CONT
u2=$(updates_after "$u1")
claims=$((u2 - u1))
echo "1000 datagrams queued while the supervisor was stopped: $claims claim(s)"
[ "$claims" -ge 1 ] || fail "queued wake-up datagrams caused no claim at all"
# 1 (2 if the receive loop takes them in two rounds), its 2 rechecks, and
# a registry refresh that may fall in the window.
[ "$claims" -le $((4 + REGISTRY_UPDATES)) ] ||
	fail "queued wake-up datagrams caused $claims claims (expected 3, at most $((4 + REGISTRY_UPDATES)))"

# 3. A handful of due jobs and a burst: every job runs once, and the
# UPDATEs are the claims plus at most one result per job.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('j', seq), 'true' FROM seq_1_to_5"
read -r _ first < <(burst 1000 kyu:)
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded' AND attempts = 1" 5 30
sleep 0.5
u3=$(db_updates)
echo "5 jobs and 1000 datagrams: $((u3 - u2)) UPDATE statement(s)"
[ $((u3 - u2)) -le $((MAX_CLAIMS + 5)) ] ||
	fail "5 jobs and 1000 datagrams: $((u3 - u2)) UPDATEs (at most $MAX_CLAIMS claims + 5 results)"
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, FROM_UNIXTIME($first), MAX(started_at)) / 1000) FROM kyu_jobs")
echo "5 jobs and 1000 datagrams: all started within $ms ms of the first datagram"
[ "$ms" -lt "$WAKE_MAX_MS" ] ||
	fail "the burst did not start the jobs promptly: last start $ms ms after the first datagram (at most $WAKE_MAX_MS)"
stop_kyud
