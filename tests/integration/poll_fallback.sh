#!/usr/bin/env bash
# Without wake-ups (listen empty) kyud still finds jobs: a new job waits at
# most one poll_interval (2 s, +10% jitter), and a job with a future run_at
# starts right at its run_at even with poll_interval = 60, because kyud
# sleeps until the next due time it read at its last claim.
. "$KYU_SRC/tests/lib.sh"

# 1. poll_interval = 2: each INSERT into the idle daemon starts within 2.5 s.
start_kyud kyud.workers=2 kyud.poll_interval=2 kyud.listen=
assert_log_lacks 'listening for wake-ups'
sleep 1
for id in p1 p2 p3; do
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$id', 'true')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$id'" succeeded 10
	ms=$(ms_between created_at started_at "$id")
	echo "poll_interval 2, no wake-up: job $id started $ms ms after its INSERT"
	[ "$ms" -le 2500 ] || fail "poll_interval 2: job $id started $ms ms after its INSERT (at most 2500)"
	# Insert the next one at another point of the poll cycle.
	sleep 0.$((RANDOM % 9 + 1))
done
stop_kyud

# 2. poll_interval = 60: jobs due in 3 s and 5 s, inserted before kyud
# starts. Its first claim finds nothing due and reads when the first one
# is; claiming that one reads when the second one is.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('f1', 'true', NOW(6) + INTERVAL 3 SECOND),
     ('f2', 'true', NOW(6) + INTERVAL 5 SECOND)"
start_kyud kyud.workers=2 kyud.poll_interval=60 kyud.listen=
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('f1', 'f2') AND status = 'succeeded'" 2 15
for id in f1 f2; do
	ms=$(ms_between run_at started_at "$id")
	echo "poll_interval 60: job $id started $ms ms after its run_at"
	[ "$ms" -ge 0 ] || fail "poll_interval 60: job $id started $((-ms)) ms before its run_at"
	[ "$ms" -lt 500 ] || fail "poll_interval 60: job $id started $ms ms after its run_at (expected < 500)"
done
stop_kyud
