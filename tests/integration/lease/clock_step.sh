#!/usr/bin/env bash
# The database server's clock steps forward an hour while long jobs run
# (issue 44.2), as an NTP step after a VM resume does: every lease_until
# is an hour in the past at once. With spare slots, the next claim used to
# take every running row over and start each job a second time beside its
# first attempt (and the first was then killed as "lease lost"). Now no
# job starts twice, each finishes its one attempt, and the step is logged.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/clock.sh"

clock_db_start
lease=6
# Spare slots (2 x 16 for 12 jobs); claims every second (the tests'
# poll_interval); a heartbeat of 3 s leaves room for claims between the
# step and the next renewal, as the default (lease / 4) does at 60 s.
start_kyud kyud.workers=2 kyud.slots=16 kyud.lease=$lease kyud.heartbeat=3 kyud.fence_margin=1 \
	kyud.log_level=info job.max_attempts=5
values=
for i in $(seq 1 12); do
	values="$values${values:+,}('long$i', 'echo start \$KYU_JOB_ID \$KYU_ATTEMPT \$\$ >> $T_DIR/starts; sleep 20; echo end \$KYU_JOB_ID \$KYU_ATTEMPT \$\$ >> $T_DIR/starts')"
done
sql "INSERT INTO kyu_jobs (id, command) VALUES $values"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running' AND pid IS NOT NULL" 12 60
# Each running a while, and the worker's clock seen steady for a lease
# (a takeover is allowed again from then: the step must be what stops it).
sleep $((lease + 1))
clock_set +3600
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status NOT IN ('waiting', 'running')" 12 $((120 + 20))
stop_kyud

echo "starts: $(grep -c '^start' "$T_DIR/starts"), ends: $(grep -c '^end' "$T_DIR/starts")"
assert_eq 12 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded' AND attempts = 1")" \
	"jobs that succeeded at their first attempt"
assert_eq 12 "$(grep -c '^start' "$T_DIR/starts")" "attempts started (the starts file)"
assert_eq 12 "$(grep -c '^end' "$T_DIR/starts")" "attempts that ran to their end"
assert_eq 12 "$(grep '^start' "$T_DIR/starts" | awk '{print $2}' | sort -u | wc -l)" "jobs started"
assert_log_lacks 'lease lost to another claim'
assert_log_contains 'the database clock moved \+[0-9.]+ s in [0-9.]+ s'
