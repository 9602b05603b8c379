#!/usr/bin/env bash
# Without wake-ups (listen empty) kyud still finds jobs: a new job waits at
# most one poll_interval (4 s, +10% jitter), and a job with a future run_at
# starts right at its run_at even with poll_interval = 60, because kyud
# sleeps until the next due time it read at its last claim.
. "$KYU_SRC/tests/lib.sh"

# 1. poll_interval = 4: each INSERT into the idle daemon starts within one
# interval (at most 4.4 s) plus what a loaded machine needs to claim it;
# 2.5 s are allowed for that, which keeps the bound (6.9 s) below two
# intervals (at least 7.2 s): a missed poll still fails.
POLL=4 MAX_MS=6900
start_kyud kyud.workers=2 kyud.poll_interval=$POLL kyud.listen=
assert_log_lacks 'listening for wake-ups'
wait_workers_idle 2
for id in p1 p2 p3; do
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$id', 'true')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$id'" succeeded 30
	ms=$(ms_between created_at started_at "$id")
	echo "poll_interval $POLL, no wake-up: job $id started $ms ms after its INSERT"
	[ "$ms" -le "$MAX_MS" ] || fail "poll_interval $POLL: job $id started $ms ms after its INSERT (at most $MAX_MS)"
	# Insert the next one at another point of the poll cycle.
	sleep 0.$((RANDOM % 9 + 1))
done
stop_kyud

# 2. poll_interval = 60: jobs due in 5 s and 7 s, inserted before kyud
# starts. Its first claim finds nothing due and reads when the first one
# is; claiming that one reads when the second one is. Never before run_at;
# after it by far less than a poll would take (none comes within 54 s):
# 10 s is the bound; a 2-core machine at load average 40 took 0.2 s at most.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('f1', 'true', NOW(6) + INTERVAL 5 SECOND),
     ('f2', 'true', NOW(6) + INTERVAL 7 SECOND)"
start_kyud kyud.workers=2 kyud.poll_interval=60 kyud.listen=
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('f1', 'f2') AND status = 'succeeded'" 2 40
for id in f1 f2; do
	ms=$(ms_between run_at started_at "$id")
	echo "poll_interval 60: job $id started $ms ms after its run_at"
	[ "$ms" -ge 0 ] || fail "poll_interval 60: job $id started $((-ms)) ms before its run_at"
	[ "$ms" -lt 10000 ] || fail "poll_interval 60: job $id started $ms ms after its run_at (expected < 10000)"
done
stop_kyud
