#!/usr/bin/env bash
# The database restarts under a schedule that fires every second (missed =
# once, grace 60 s: an outage of a few seconds misses nothing). Two kyud
# share it. Once the server is back, the instants of the outage fire late,
# each once: the ids cover every second from the first to the last with no
# gap and none twice, every job succeeds, and both daemons stay up. A step
# whose reply was lost with the connection is found by the next scan's
# compare-and-set, never repeated.
. "$KYU_SRC/tests/lib.sh"

private_db_start
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('tick', '* * * * * *', 'true')"
start_kyud kyud.workers=2 kyud.lease=30 kyud.fence_margin=5 kyud.log_level=info
start_extra_kyud other kyud.workers=1 kyud.lease=30 kyud.fence_margin=5 kyud.log_level=info
wait_for "SELECT COUNT(*) >= 3 FROM kyu_jobs WHERE id LIKE 'cron:tick:%'" 1 30
w1=$(pgrep -P "$KYUD_PID" | sort -n | sed -n 1p)
cpu() { awk '{ print $14 + $15 }' "/proc/$w1/stat"; } # user + system clock ticks
private_db_stop
c0=$(cpu)
sleep 4
c1=$(cpu)
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died while the database was down"
echo "worker 1 used $((c1 - c0)) clock ticks in 4 s of outage"
# Waiting for the server must not spin (400 ticks would be a busy loop).
[ $((c1 - c0)) -lt 200 ] || fail "worker 1 used $((c1 - c0)) clock ticks in 4 s of outage: a busy loop"
private_db_start
down_s=$(sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', UTC_TIMESTAMP())")
# Every instant up to now is enqueued once the daemons are back.
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id = CONCAT('cron:tick:', DATE_FORMAT(UTC_TIMESTAMP() - INTERVAL 1 SECOND, '%Y-%m-%dT%H:%i:%sZ'))" 1 60
sleep 2
sql "UPDATE kyu_schedules SET enabled = 0"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')" 0 60

assert_cron_contiguous tick "tick, across the outage"
echo "instants fired: $CRON_N, from $CRON_FIRST to $CRON_LAST (server back at $down_s)"
[ "$CRON_LAST" -ge "$down_s" ] || fail "no instant after the server came back fired"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%' AND status <> 'succeeded'")" \
	"jobs of the schedule that did not succeed"
cat "$KYUD_LOG" "$T_DIR/other.log" >"$T_DIR/all.log"
! grep -m1 'schedule tick: no job for' "$T_DIR/all.log" || fail "a daemon found an instant's job already there"
grep -o 'enqueued job cron:tick:[^;]*' "$T_DIR/all.log" | sort | uniq -d >"$T_DIR/double"
assert_eq "" "$(sed -n 1,5p "$T_DIR/double")" "instants logged as enqueued twice"
stop_extra_kyuds
stop_kyud
