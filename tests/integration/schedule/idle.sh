#!/usr/bin/env bash
# Schedules bring back no polling: with 1,000 enabled schedules that fire
# hourly (at a minute half an hour away, so none fires during the test), an
# idle kyud sends at most 0.1 statements per second between firings. Claim
# polls are moved out of the window (poll_interval 3600), so what is counted
# is the scheduler: it sleeps until the earliest next_run and reads the
# table again every poll_interval, at most once a minute (one SELECT; here
# hourly). Worker 1 also refreshes the daemon's row of kyu_daemons, every
# 2 x lease (360 s with lease 180): at most once in the window.
. "$KYU_SRC/tests/lib.sh"

WINDOW=30
use_own_db_user
minute=$(( ($(date -u +%-M) + 30) % 60 ))
sql "INSERT INTO kyu_schedules (name, cron, command)
	SELECT CONCAT('h', seq), '$minute * * * *', 'true' FROM seq_1_to_1000"
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=2 kyud.poll_interval=3600 kyud.lease=180
wait_for "SELECT COUNT(*) FROM kyu_schedules WHERE next_run IS NOT NULL" 1000 60
wait_workers_idle 2
s0=$(db_statements)
sleep $WINDOW
s1=$(db_statements)
n=$((s1 - s0))
echo "idle with 1000 hourly schedules: $n statement(s) in $WINDOW s"
[ "$n" -le $((WINDOW / 10 + REGISTRY_STATEMENTS)) ] ||
	fail "$n statements in $WINDOW s with 1000 idle schedules (at most 0.1/s and one registry refresh)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "jobs enqueued (no instant was due)"
assert_eq 1000 "$(sql "SELECT COUNT(*) FROM kyu_schedules WHERE MINUTE(next_run) = $minute AND SECOND(next_run) = 0 AND error IS NULL")" \
	"schedules with next_run at minute $minute"
stop_kyud
