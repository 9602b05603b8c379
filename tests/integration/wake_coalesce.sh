#!/usr/bin/env bash
# A burst of 1000 wake-up datagrams costs a handful of claims, not 1000:
# hints that arrive while a claim is in flight fold into one follow-up, and
# datagrams queued together are one wake-up. Claims are counted on the
# server: kyud connects as a user of this test's own, and the server's
# per-user statistics count its UPDATE statements (with no job in the table
# the only UPDATE a worker sends is its claim).
. "$KYU_SRC/tests/lib.sh"

MAX_CLAIMS=20

# burst N PAYLOAD: send N datagrams as fast as python can; prints how
# long that took (ms).
burst() {
	python3 - "$port" "$1" "$2" <<-'PY'
		import socket, sys, time
		port, n, payload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		s.connect(("127.0.0.1", port))
		t = time.monotonic()
		for _ in range(n):
		    s.send(payload)
		print(round((time.monotonic() - t) * 1000, 1))
	PY
}

use_own_db_user
port=$(free_udp_port)
# cleanup_every: no retention DELETE among the counted statements. A long
# lease: no heartbeat UPDATE while the few jobs of the last part run.
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=4 kyud.poll_interval=60 kyud.listen="127.0.0.1:$port" \
	kyud.cleanup_every=1000000 kyud.lease=60
sleep 1 # the start-up claims are done: kyud sleeps for ~60 s

# 1. 1000 datagrams in one burst, nothing to do.
u0=$(db_updates)
took=$(burst 1000 kyu:)
sleep 1
u1=$(db_updates)
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
sleep 1
u2=$(db_updates)
claims=$((u2 - u1))
echo "1000 datagrams queued while the supervisor was stopped: $claims claim(s)"
[ "$claims" -ge 1 ] || fail "queued wake-up datagrams caused no claim at all"
[ "$claims" -le 2 ] || fail "queued wake-up datagrams caused $claims claims (expected 1, at most 2)"

# 3. A handful of due jobs and a burst: every job runs once, and the
# UPDATEs are the claims plus at most one result per job.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('j', seq), 'true' FROM seq_1_to_5"
burst 1000 kyu: >/dev/null
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded' AND attempts = 1" 5 10
sleep 0.5
u3=$(db_updates)
echo "5 jobs and 1000 datagrams: $((u3 - u2)) UPDATE statement(s)"
[ $((u3 - u2)) -le $((MAX_CLAIMS + 5)) ] ||
	fail "5 jobs and 1000 datagrams: $((u3 - u2)) UPDATEs (at most $MAX_CLAIMS claims + 5 results)"
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, MIN(created_at), MAX(started_at)) / 1000) FROM kyu_jobs")
echo "5 jobs and 1000 datagrams: all started within $ms ms of the first INSERT"
# The point is that wake-ups, not the 60 s poll, started them: the bound is
# the poll interval's lower jitter (54 s), not a latency claim, so that a
# loaded machine passes (latency is the benches' business).
[ "$ms" -lt 50000 ] || fail "the burst was not started by its wake-ups: last start $ms ms after the first INSERT (poll_interval 60 s)"
stop_kyud
