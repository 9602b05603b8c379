#!/usr/bin/env bash
# A job whose lease ran out is claimed again at the moment it runs out
# (issue 29), by another daemon, not at its next poll (poll_interval 3600)
# or a lease after its last look: daemon A runs m (a queue with
# max_running = 1) and p (a plain queue), B holds nothing; A is killed
# whole (SIGKILL to its supervisor and workers; the jobs are killed too).
# B must start each again within 3 s of its lease's end (lease 8 s,
# renewed every 2 s while A lived).
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_queues (name, max_running) VALUES ('one', 1);
     INSERT INTO kyu_jobs (id, queue, command) VALUES
       ('m', 'one', '[ \$KYU_ATTEMPT -gt 1 ] || exec sleep 300'), ('m2', 'one', 'true'),
       ('p', 'plain', '[ \$KYU_ATTEMPT -gt 1 ] || exec sleep 300')"
start_kyud kyud.workers=1 kyud.poll_interval=3600 kyud.lease=8 kyud.heartbeat=2 kyud.fence_margin=2
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('m', 'p') AND pid IS NOT NULL" 2 60
start_extra_kyud b kyud.workers=1 kyud.poll_interval=3600 kyud.lease=8 kyud.heartbeat=2 kyud.fence_margin=2
# Long enough for B's first claims and several of A's renewals.
sleep 5
job_pids=$(sql "SELECT GROUP_CONCAT(pid SEPARATOR ' ') FROM kyu_jobs WHERE id IN ('m', 'p')")
# shellcheck disable=SC2046
kill -KILL "$KYUD_PID" $(worker_pids) $job_pids 2>/dev/null || true
wait "$KYUD_PID" 2>/dev/null || true
# A renewal already sent when the worker died may still commit.
sleep 0.5
KYUD_PID=
ends=$(sql "SELECT GROUP_CONCAT(CONCAT(id, '=', lease_until) ORDER BY id) FROM kyu_jobs WHERE id IN ('m', 'p')")
echo "leases at the kill: $ends"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('m', 'p', 'm2') AND status = 'succeeded'" 3 60
for id in m p; do
	until_=$(echo "$ends" | tr ',' '\n' | sed -n "s/^$id=//p")
	late=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, '$until_', started_at) FROM kyu_jobs WHERE id = '$id'")
	echo "$id: attempt 2 started $((late / 1000)) ms after its lease ended"
	[ "$late" -ge 0 ] || fail "$id started again $late us before its lease ended"
	[ "$late" -le 3000000 ] || fail "$id started again $late us after its lease ended: it waited for something else"
	grep -q "job $id attempt 2 started" "$T_DIR/b.log" || fail "$id's attempt 2 did not run on B"
done
stop_extra_kyuds
