#!/usr/bin/env bash
# Fault suite (issue 12), scenario 1b: a worker SIGKILLed while its jobs run
# longer than the lease.
#
# kyud a and kyud b, one worker each, lease 6 s. Four jobs whose first run
# lasts 15 s start under a's worker; that worker is SIGKILLed 1 s later. Its
# jobs must not run twice at once: the rows' leases expire ~6 s after their
# last heartbeat and b (or a's restarted worker) claims them again, so by
# then attempt 1 must be gone (killed by someone: the dead worker can no
# longer fence its jobs). tests/chaos/check.py counts as "overlap" every
# attempt 2 that started while attempt 1's processes were still alive (the
# job's flock was held), and as "still running" attempts alive at the end.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

WORKER_DEATHS_OK=1 # the one we kill
lease=6
common=(kyud.workers=1 kyud.slots=4 kyud.lease="$lease" kyud.fence_margin=2 job.max_attempts=5
	job.backoff_base=1 job.backoff_cap=2)
chaos_watch_start
d_start a "${common[@]}"
chaos_submit long 1 4 200 200 15000
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running' AND pid IS NOT NULL" 4 20
for _ in $(seq 300); do [ "$(grep -c '^S ' "$CHAOS_MARKS")" -ge 4 ] && break; sleep 0.1; done
worker=$(d_workers a)
[[ $worker =~ ^[0-9]+$ ]] || fail "expected one worker under kyud a, found '$worker'"
assert_eq "$worker $worker $worker $worker" "$(awk '$1 == "S" { print $6 }' "$CHAOS_MARKS" | tr '\n' ' ' | sed 's/ $//')" \
	"parent (worker) of the 4 starts"
d_start b "${common[@]}"
sleep 1
kill -KILL "$worker"
say "SIGKILLed a's worker $worker while it ran long1..long4 (15 s each)"

chaos_wait_finished 40 || true
say "rows finished; attempt-1 processes still alive: $(
	# shellcheck disable=SC2013 # one pid a line
	for p in $(awk '$1 == "S" && $3 == 1 { print $5 }' "$CHAOS_MARKS"); do
		pid_alive "$p" && printf '%s (parent %s) ' "$p" "$(ps -o ppid= -p "$p" | tr -d ' ')"
	done)"
d_term a 30
d_term b 30
chaos_check --worker-kills 1
