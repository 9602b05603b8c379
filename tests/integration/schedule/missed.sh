#!/usr/bin/env bash
# Missed instants: every daemon was down while a schedule (every second,
# grace 2 s) passed several instants. Rows whose next_run lies 10 s (150 s
# for the bounded case) in the past stand for that; then one kyud starts.
#   skip: none of the missed instants gets a job; the on-time ones do;
#   once: exactly one job for the missed period, at its first instant;
#   all:  a job for every missed instant, in order, then the on-time ones;
#   all, 150 missed: only the last 100 (about) of them, without a gap after.
. "$KYU_SRC/tests/lib.sh"

inst() { cron_instants "$1"; }

t0=$(sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', UTC_TIMESTAMP()) - 10")
t150=$((t0 + 10 - 150))
for p in skip once all; do
	sql "INSERT INTO kyu_schedules (name, cron, command, missed, grace, next_run)
		VALUES ('$p', '* * * * * *', 'true', '$p', 2, '1970-01-01' + INTERVAL $t0 SECOND)"
done
sql "INSERT INTO kyu_schedules (name, cron, command, missed, grace, next_run)
	VALUES ('bound', '* * * * * *', 'true', 'all', 2, '1970-01-01' + INTERVAL $t150 SECOND)"
start_kyud kyud.workers=2 kyud.slots=8 kyud.poll_interval=30 kyud.log_level=info
# Until each has the on-time instants its checks below need (a loaded
# machine may take longer than the few seconds they take on a quiet one).
wait_for "SELECT SUM(name = 'skip' AND n >= 2) + SUM(name = 'once' AND n >= 3) + SUM(name = 'all' AND n >= 14)
          FROM (SELECT SUBSTRING_INDEX(SUBSTRING_INDEX(id, ':', 2), ':', -1) AS name, COUNT(*) AS n
                FROM kyu_jobs WHERE id LIKE 'cron:%' GROUP BY name) c" 3 60
sql "UPDATE kyu_schedules SET enabled = 0"
start=$(grep -m1 'schedule skip: ' "$KYUD_LOG" >/dev/null && echo ok)
assert_eq ok "$start" "the skip schedule was handled"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')" 0 60
stop_kyud

for p in skip once all bound; do
	echo "$p: $(inst "$p" | wc -l) jobs, instants $(inst "$p" | sed -n 1p) .. $(inst "$p" | tail -n 1) (t0 $t0, bound t0 $t150)"
done
# skip: nothing in the missed period [t0, t0 + 5] (kyud started at t0 + 10
# at the earliest; with grace 2 the on-time instants begin after t0 + 7).
assert_eq 0 "$(inst skip | awk -v a="$t0" '$1 <= a + 5' | wc -l)" "skip: jobs for missed instants"
[ "$(inst skip | wc -l)" -ge 2 ] || fail "skip: no on-time instant fired after the missed ones"
assert_log_contains 'schedule skip: [0-9]+ missed instant\(s\) from .* skipped \(missed = skip\)'
assert_cron_contiguous skip
# once: one job stands for the missed period, named by its first instant.
assert_eq "$t0" "$(inst once | sed -n 1p)" "once: the first job's instant"
assert_eq 1 "$(inst once | awk -v a="$t0" '$1 <= a + 5' | wc -l)" "once: jobs for the missed period"
[ "$(inst once | wc -l)" -ge 3 ] || fail "once: no on-time instant fired after the missed period"
# all: every missed instant and every one after.
assert_eq "$t0" "$(inst all | sed -n 1p)" "all: the first job's instant"
assert_cron_contiguous all
[ "$(inst all | wc -l)" -ge 14 ] || fail "all: $(inst all | wc -l) jobs, expected the 10 missed and the on-time ones"
# all with 150 missed: the oldest ~50 skipped, the last 100 run, no gap after.
b_first=$(inst bound | sed -n 1p)
[ "$b_first" -ge $((t150 + 40)) ] || fail "bound: the first job is for t0 + $((b_first - t150)) s: more than 100 missed instants ran"
[ "$b_first" -le $((t150 + 60)) ] || fail "bound: the first job is for t0 + $((b_first - t150)) s: fewer than ~100 missed instants ran"
assert_cron_contiguous bound
assert_log_contains 'schedule bound: [0-9]+ missed instant\(s\) from .* skipped \(missed = all, more than 100\)'
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status <> 'succeeded'")" "jobs that did not succeed"
