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
start_kyud kyud.workers=2 kyud.slots=8 kyud.poll_interval=30 kyud.log_level=info
start_sampler "$T_DIR/waiting" "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:queue:%' AND status = 'waiting'"
sleep 9
sql "UPDATE kyu_schedules SET enabled = 0"
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
[ "$(jobs skip)" -ge 2 ] && [ "$(jobs skip)" -le 4 ] || fail "skip: $(jobs skip) jobs in 9 s of 2.5 s runs (expected 2-4)"
[ "$(jobs queue)" -ge 3 ] || fail "queue: $(jobs queue) jobs in 9 s of 2.5 s runs (expected at least 3)"
max_wait=$(sort -n "$T_DIR/waiting" | tail -n 1)
echo "queue: at most $max_wait job(s) waiting at once ($(wc -l <"$T_DIR/waiting") samples)"
[ "$max_wait" -le 1 ] || fail "queue: $max_wait jobs waiting at once (at most one may wait behind the running one)"
[ "$max_wait" = 1 ] || fail "queue: no job ever waited behind the running one"
# Each queued run starts when the previous ends (not at its own instant).
gap=$(sql "SELECT MAX(TIMESTAMPDIFF(MICROSECOND, a.finished_at, b.started_at)) / 1e6 FROM kyu_jobs a
	JOIN kyu_jobs b ON b.seq = (SELECT MIN(seq) FROM kyu_jobs c WHERE c.id LIKE 'cron:queue:%' AND c.seq > a.seq)
	WHERE a.id LIKE 'cron:queue:%'")
echo "queue: longest pause between one run's end and the next's start: $gap s"
awk -v g="$gap" 'BEGIN { exit !(g < 2.0) }' || fail "queue: a queued run started $gap s after the previous ended"
assert_log_contains 'schedule skip: no job for .*previous job is still waiting or running'
