#!/usr/bin/env bash
# The database clock steps while a schedule runs every 2 s (issue 44.2).
#   +1 h: the instants it jumped over are missed, and the missed policy
#         (once, the default) gives them one job; the last minute of them is
#         not "on time" (it fired 13 jobs at once, one per instant of the
#         grace window, before); then on-time instants after the step.
#   -1 h: the next run, an hour ahead now, is computed again from the clock,
#         so the schedule goes on at once (it was silent for the hour, and
#         said nothing).
# Each step is logged.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/clock.sh"
. "$KYU_SRC/tests/lib/schedule.sh"

clock_db_start
utc() { sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', UTC_TIMESTAMP())"; }
# Before kyud: its first scan sees it (no wake-ups in the tests).
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('two', '*/2 * * * * *', 'true')"
start_kyud kyud.workers=1 kyud.slots=8 kyud.log_level=info
start=$(utc)
wait_for "SELECT COUNT(*) >= 2 FROM kyu_jobs WHERE id LIKE 'cron:two:%'" 1 60

# +1 h.
before=$(utc)
clock_set +3600
after=$(utc)
# Until two on-time instants after the step have their jobs.
wait_for "SELECT COUNT(*) >= 2 FROM kyu_jobs WHERE id LIKE 'cron:two:%'
          AND STR_TO_DATE(RIGHT(id, 20), '%Y-%m-%dT%H:%i:%sZ') > '1970-01-01' + INTERVAL $after SECOND" 1 60
jumped=$(cron_instants two "$((before + 2))" | awk -v a="$after" '$1 <= a' | wc -l)
echo "+1 h: clock from $before to $after; jobs for instants it jumped over: $jumped;" \
	"all: $(cron_instants two "$start" | tr '\n' ' ')"
[ "$jumped" -le 1 ] || fail "$jumped jobs for the instants the clock jumped over (missed = once: one)"
assert_log_contains 'the database clock moved \+[0-9.]+ s in [0-9.]+ s .*: the schedules. instants it jumped over count as missed'
assert_log_contains 'schedule two: missed instants from .*: one job for them \(missed = once\)'

# -1 h: back to the host's clock.
clock_set +0
back=$(utc)
wait_for "SELECT COUNT(*) >= 2 FROM kyu_jobs WHERE id LIKE 'cron:two:%'
          AND STR_TO_DATE(RIGHT(id, 20), '%Y-%m-%dT%H:%i:%sZ') BETWEEN
              '1970-01-01' + INTERVAL $back SECOND AND '1970-01-01' + INTERVAL $((back + 600)) SECOND" 1 60
echo "-1 h: clock back to $back; jobs since: $(cron_instants two "$((back - 1))" | awk -v a="$((back + 600))" '$1 <= a' | tr '\n' ' ')"
assert_log_contains 'the database clock moved -[0-9.]+ s in [0-9.]+ s .*: the schedules. next runs that lie ahead are computed again'
sql "UPDATE kyu_schedules SET enabled = 0"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')" 0 60
stop_kyud
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status <> 'succeeded'")" "jobs that did not succeed"
