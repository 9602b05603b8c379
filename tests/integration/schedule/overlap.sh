#!/usr/bin/env bash
# The overlap policies, with a schedule every second whose job takes 2.5 s:
#   allow: runs overlap;
#   skip:  no two runs overlap, and an instant that finds the previous job
#          waiting or running enqueues nothing;
#   queue: no two runs overlap, at most one job waits behind the running
#          one at any instant (sampled), and it starts as soon as that one ends.
. "$KYU_SRC/tests/lib.sh"

for p in allow skip queue; do
	sql "INSERT INTO kyu_schedules (name, cron, command, overlap) VALUES ('$p', '* * * * * *', 'sleep 2.5', '$p')"
done
t_on=$(sql "SELECT UNIX_TIMESTAMP(NOW(6))")
start_kyud kyud.workers=2 kyud.slots=8 kyud.poll_interval=30 kyud.log_level=info
start_sampler "$T_DIR/waiting" "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:queue:%' AND status = 'waiting'"
# Until each policy has shown what it does (9 s or so on a quiet machine;
# a loaded one takes what it takes): skip 2 runs, queue 3, allow a pair of
# overlapping runs. The window's real length bounds skip's runs below.
wait_for "SELECT (SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:skip:%') >= 2
            AND (SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:queue:%') >= 3
            AND (SELECT COUNT(*) FROM kyu_jobs a JOIN kyu_jobs b ON a.seq < b.seq
                 WHERE a.id LIKE 'cron:allow:%' AND b.id LIKE 'cron:allow:%'
                 AND a.started_at < b.finished_at AND b.started_at < a.finished_at) >= 1" 1 90
t_off=$(sql "UPDATE kyu_schedules SET enabled = 0; SELECT UNIX_TIMESTAMP(NOW(6))")
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')" 0 60
stop_samplers
stop_kyud

# overlaps NAME: pairs of NAME's runs whose [started_at, finished_at] overlap.
overlaps() {
	sql "SELECT COUNT(*) FROM kyu_jobs a JOIN kyu_jobs b ON a.seq < b.seq
		WHERE a.id LIKE 'cron:$1:%' AND b.id LIKE 'cron:$1:%'
		AND a.started_at < b.finished_at AND b.started_at < a.finished_at"
}
jobs() { sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:$1:%'"; }
for p in allow skip queue; do echo "$p: $(jobs $p) jobs, $(overlaps $p) overlapping pair(s)"; done
[ "$(overlaps allow)" -ge 1 ] || fail "allow: no two runs overlapped"
assert_eq 0 "$(overlaps skip)" "skip: overlapping runs"
assert_eq 0 "$(overlaps queue)" "queue: overlapping runs"
# Runs of 2.5 s that never overlap: at most one per 2.5 s of the window
# the schedules were enabled, one more for the phase, one for the run of
# the instant that found the previous one just ended.
window=$(awk -v a="$t_on" -v b="$t_off" 'BEGIN { printf "%.1f", b - a }')
max_skip=$(awk -v w="$window" 'BEGIN { printf "%d", w / 2.5 + 2 }')
echo "enabled for $window s: skip at most $max_skip runs"
[ "$(jobs skip)" -ge 2 ] && [ "$(jobs skip)" -le "$max_skip" ] ||
	fail "skip: $(jobs skip) jobs in $window s of 2.5 s runs (expected 2-$max_skip)"
[ "$(jobs queue)" -ge 3 ] || fail "queue: $(jobs queue) jobs (expected at least 3)"
max_wait=$(sort -n "$T_DIR/waiting" | tail -n 1)
echo "queue: at most $max_wait job(s) waiting at once ($(wc -l <"$T_DIR/waiting") samples)"
[ "$max_wait" -le 1 ] || fail "queue: $max_wait jobs waiting at once (at most one may wait behind the running one)"
[ "$max_wait" = 1 ] || fail "queue: no job ever waited behind the running one"
# Each queued run starts when the previous ends (not at its own instant).
gap=$(sql "SELECT MAX(TIMESTAMPDIFF(MICROSECOND, a.finished_at, b.started_at)) / 1e6 FROM kyu_jobs a
	JOIN kyu_jobs b ON b.seq = (SELECT MIN(seq) FROM kyu_jobs c WHERE c.id LIKE 'cron:queue:%' AND c.seq > a.seq)
	WHERE a.id LIKE 'cron:queue:%'")
echo "queue: longest pause between one run's end and the next's start: $gap s"
# With poll_interval = 30, a run found by a poll would start up to 30 s
# late: 10 s leaves a loaded machine its slack and still tells the two apart.
awk -v g="$gap" 'BEGIN { exit !(g < 10.0) }' || fail "queue: a queued run started $gap s after the previous ended"
assert_log_contains 'schedule skip: no job for .*previous job is still waiting or running'
