#!/usr/bin/env bash
# Self-fencing: a worker that cannot reach the database kills its running
# job at lease - fence_margin after the last renewal, before the lease
# expires and another claim could start the job a second time. Once the
# database is back, the job runs again (attempt 2), never at the same time
# as attempt 1.
. "$KYU_SRC/tests/lib.sh"

# The margin is what a loaded machine has for kyud's timer, the kill and
# this test's watcher to see the job gone before the lease ends: 6 s.
lease=12 margin=6 hb=3
private_db_start
# Every lease the server committed for attempt 1 (the claim's and each
# heartbeat's), kept across the restart: the last one is exactly the lease
# the server held when it went down, however many heartbeats slipped in
# while it was being stopped.
sql "CREATE TABLE leases (lease_until DATETIME(6) NOT NULL)"
sql "CREATE TRIGGER leases_seen AFTER UPDATE ON kyu_jobs FOR EACH ROW
       INSERT INTO leases SELECT NEW.lease_until FROM DUAL
       WHERE NEW.id = 'fenced' AND NEW.status = 'running' AND NEW.attempts = 1 AND NEW.lease_until IS NOT NULL"
# Heartbeat every lease/4 = 3 s. A backoff of 5-10 s makes the recorded
# fence visible as `waiting` before attempt 2, however slowly this test
# polls.
start_kyud kyud.workers=1 kyud.lease=$lease kyud.fence_margin=$margin job.backoff_base=10 job.backoff_cap=10
# Each start appends "attempt host-time"; attempt 1 then becomes a sleep
# (exec: one process, its pid in the file), attempt 2 succeeds.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('fenced', '
  echo \$KYU_ATTEMPT \$(date +%s.%N) >> $T_DIR/starts
  [ \$KYU_ATTEMPT -ge 2 ] && exit 0
  echo \$\$ > $T_DIR/job.pid; exec sleep 60')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'fenced'" running 30
wait_until 60 "the job's pid file" test -s "$T_DIR/job.pid"
job_pid=$(cat "$T_DIR/job.pid")
sleep 1 # let a heartbeat or so pass, so that the lease is not the claim's

# The lease as last read: a lower bound of what the server holds when it
# goes down (a heartbeat slipping in between could only extend it). Only
# a bound for a hang here; the verdict uses the server's last lease.
read_lease=$(sql "SELECT UNIX_TIMESTAMP(lease_until) FROM kyu_jobs WHERE id = 'fenced'")
# Watch the job from now on: stopping the server takes a while itself.
(
	while pid_alive "$job_pid"; do sleep 0.05; done
	date +%s.%N >"$T_DIR/killed_at"
) &
private_db_stop
until [ -s "$T_DIR/killed_at" ]; do
	awk -v now="$(date +%s.%N)" -v l="$read_lease" 'BEGIN { exit !(now < l + 60) }' ||
		fail "job (pid $job_pid) still running 60 s after its lease (as read before the stop: $read_lease) expired"
	sleep 0.1
done
killed_at=$(cat "$T_DIR/killed_at")
private_db_start
lease_until=$(sql "SELECT UNIX_TIMESTAMP(MAX(lease_until)) FROM leases")
echo "lease read before the stop: $read_lease; the server's last: $lease_until; job killed at $killed_at"
# Killed before the lease expired, but not before lease - margin (- up to
# one heartbeat): kyud waits as long as it safely can.
awk -v k="$killed_at" -v l="$lease_until" -v m=$margin -v hb=$hb 'BEGIN { exit !(k < l && k > l - m - hb) }' ||
	fail "job killed at $killed_at, lease until $lease_until: expected within [lease - $margin s - $hb s, lease)"
assert_log_contains "job fenced: lease not renewed for [0-9.]+ s \(lease $lease s, fence_margin $margin s\); killing it"
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died while the database was down"

# The fenced attempt is recorded once the worker is back: a retry, ended by
# a signal (kyud sends TERM and KILL at once: either may be the one).
wait_for "SELECT CONCAT_WS(' / ', status, attempts, \`signal\` IN (9, 15), error) FROM kyu_jobs WHERE id = 'fenced'" \
	"waiting / 1 / 1 / killed by kyud: its lease could not be renewed (database unreachable)" 60
wait_for "SELECT status FROM kyu_jobs WHERE id = 'fenced'" succeeded 60
assert_eq "2	0" "$(sql "SELECT attempts, exit_code FROM kyu_jobs WHERE id = 'fenced'")" "attempts, exit_code"
assert_eq 2 "$(wc -l <"$T_DIR/starts")" "starts of the job"
read -r a2 started2 < <(sed -n 2p "$T_DIR/starts")
assert_eq 2 "$a2" "KYU_ATTEMPT of the second start"
awk -v s="$started2" -v k="$killed_at" 'BEGIN { exit !(s > k) }' ||
	fail "attempt 2 started at $started2, before attempt 1 was killed at $killed_at"
stop_kyud
