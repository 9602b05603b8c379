#!/usr/bin/env bash
# Issue 25, item 2: a worker that stops reporting is killed with its jobs
# before their leases can run out, without systemd's watchdog (no
# NOTIFY_SOCKET, no WATCHDOG_USEC: kyud in the foreground); a supervisor
# that was itself stopped kills nobody for it.
#
# kyud a and kyud b, one worker each, lease 10 s, fence_margin 3 s. A job
# whose first run lasts 25 s starts under a's worker; that worker is then
# SIGSTOPped and left stopped. Nobody renews the row's lease any more, so b
# (or a's restarted worker) claims it again once it expires: by then attempt
# 1 must be gone, killed by a's supervisor, which must say in its log that
# the worker stopped reporting. tests/chaos/check.py counts as "overlap"
# every attempt that started while an earlier one's processes still lived
# (the job's flock is held by the kernel for as long as any of them does).
# Before the fix, the stopped worker's job ran on for 25 s: overlap.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

WORKER_DEATHS_OK=1 # a's stopped worker, killed by its supervisor
lease=10
common=(kyud.workers=1 kyud.slots=1 kyud.lease="$lease" kyud.fence_margin=3 job.max_attempts=5
	job.backoff_base=1 job.backoff_cap=2)
chaos_watch_start
d_start a "${common[@]}"

# First the supervisor itself stopped, for longer than the silence that
# gets a worker killed (lease - fence_margin - heartbeat = 4.5 s): on
# resume it reads the reports waiting in its sockets before it judges
# anyone silent, and kills nobody.
kill -STOP "${D_PID[a]}"
EXIT_HOOKS+=("kill -CONT ${D_PID[a]} 2>/dev/null")
sleep 7
kill -CONT "${D_PID[a]}"
sleep 2
grep 'stopped reporting' "${D_LOG[a]}" && fail "kyud a killed a worker after its supervisor was stopped for 7 s"

chaos_submit long 1 1 200 200 25000
for _ in $(seq 200); do grep -q '^S long1 ' "$CHAOS_MARKS" && break; sleep 0.1; done
read -r _ _ attempt1 _ job1 parent1 < <(grep -m1 '^S long1 ' "$CHAOS_MARKS") ||
	fail "the job did not start under kyud a in 20 s"
worker=$(d_workers a)
[[ $worker =~ ^[0-9]+$ ]] || fail "expected one worker under kyud a, found '$worker'"
assert_eq "1 $worker" "$attempt1 $parent1" "attempt and parent (worker) of the first start"
d_start b "${common[@]}"
# Let a heartbeat renew the lease first: the stop then falls in the middle
# of a lease, as it would in life.
sleep 3
kill -STOP "$worker"
EXIT_HOOKS+=("kill -CONT $worker 2>/dev/null")
say "SIGSTOPped a's worker $worker while job long1 (pid $job1, 25 s) ran"

# The row finishes once attempt 2 ran; the stopped worker stays stopped
# throughout (if it is still there at the end, the check below says so).
chaos_wait_finished 40 || true
say "row finished"
grep '^O long1 ' "$CHAOS_MARKS" && fail "attempt 2 of long1 started while attempt 1 still ran"
pid_alive "$job1" && fail "attempt 1 of long1 (pid $job1) is still alive after the row finished"
alive=$(tr '\0' ' ' <"/proc/$worker/cmdline" 2>/dev/null | grep -c -- '--worker' || true)
if [ "$alive" != 0 ]; then
	kill -CONT "$worker" 2>/dev/null || true
	fail "a's stopped worker $worker was not killed by its supervisor"
fi

# Attempt 1 never ended on its own (it would have written an E mark).
grep -q '^E long1 1 ' "$CHAOS_MARKS" && fail "attempt 1 of long1 ran to its end: it was not killed"
grep -q '^S long1 2 ' "$CHAOS_MARKS" || fail "long1 never started again"
grep -E "kyud\[sup\]: worker 1 \(pid $worker\) stopped reporting for [0-9.]+ s .*killing it and its jobs" \
	"${D_LOG[a]}" || fail "kyud a's log does not say that its worker $worker stopped reporting"
grep -E "kyud\[sup\]: worker 1 \(pid $worker\) left 1 job process\(es\) running: killed them" \
	"${D_LOG[a]}" || fail "kyud a's log does not say that it killed the stopped worker's job"
# Nobody else was taken for stopped: b's worker and a's new one idled.
assert_eq 1 "$(grep -c 'stopped reporting' "${D_LOG[a]}")" "workers of kyud a killed for silence"
assert_eq 0 "$(grep -c 'stopped reporting' "${D_LOG[b]}")" "workers of kyud b killed for silence"

d_term a 30
d_term b 30
chaos_check --worker-kills 1
