#!/usr/bin/env bash
# Three kyud share one kyu_schedules row firing every second; one of them
# is SIGKILLed (supervisor and workers) and restarted while it runs. Over
# the whole stretch every instant enqueues exactly one job:
#   - the ids cron:tick:<instant> cover every second from the first to the
#     last, without a gap (a gap would be an instant nobody fired);
#   - each instant is logged "enqueued" by exactly one daemon, and no daemon
#     found the job already there (which would mean two daemons got past the
#     compare-and-set and only the primary key stopped the second);
#   - every job ran and succeeded; next_run and last_run end consistent.
. "$KYU_SRC/tests/lib.sh"

common=(kyud.workers=2 kyud.slots=4 kyud.poll_interval=30 kyud.lease=4 kyud.fence_margin=1
	kyud.log_level=info)
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('tick', '* * * * * *', 'true')"
for n in a b c; do start_extra_kyud "$n" "${common[@]}"; done
pids_of() { # the supervisor of kyud NAME and its workers
	local sup
	sup=$(pgrep -f -- "-c $T_DIR/$1.ini" | while read -r p; do
		[ "$(ps -o ppid= -p "$p" | tr -d ' ')" = "$$" ] && echo "$p"; done | sed -n 1p)
	[ -n "$sup" ] && echo "$sup $(pgrep -P "$sup" | tr '\n' ' ')"
}
sleep 5
victim=$(pids_of b)
[ -n "$victim" ] || fail "cannot find kyud b's processes"
# shellcheck disable=SC2086
kill -KILL $victim
sup=${victim%% *}
EXTRA_PIDS=${EXTRA_PIDS/ $sup/}
wait "$sup" 2>/dev/null || true
echo "kyud b killed: $victim"
sleep 4
start_extra_kyud b2 "${common[@]}"
echo "kyud b restarted as b2"
sleep 5
sql "UPDATE kyu_schedules SET enabled = 0 WHERE name = 'tick'"
sleep 1
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%' AND status IN ('waiting', 'running')" 0 30
stop_extra_kyuds

assert_cron_contiguous tick
n=$CRON_N
echo "instants fired: $n, from $CRON_FIRST to $CRON_LAST"
[ "$n" -ge 10 ] || fail "only $n instants fired in about 15 s"
cat "$T_DIR"/[abc].log "$T_DIR"/b2.log >"$T_DIR/all.log"
enq=$(grep -c 'schedule tick: enqueued job' "$T_DIR/all.log" || true)
echo "enqueued lines in the logs: $enq"
# b was killed: a job it enqueued in the instant of the kill may have gone
# unlogged, never the reverse.
[ "$enq" -le "$n" ] || fail "$enq 'enqueued' log lines for $n jobs: an instant was enqueued twice"
[ "$enq" -ge $((n - 1)) ] || fail "$enq 'enqueued' log lines for $n jobs"
grep -o 'enqueued job cron:tick:[^;]*' "$T_DIR/all.log" | sort | uniq -d >"$T_DIR/double"
assert_eq "" "$(sed -n 1,5p "$T_DIR/double")" "instants logged as enqueued by two daemons"
! grep -m1 'schedule tick: no job for' "$T_DIR/all.log" || fail "a daemon found the job of an instant already there" 
for n2 in a b c b2; do
	d=$(grep -c 'schedule tick: enqueued job' "$T_DIR/$n2.log" || true)
	echo "  kyud $n2 enqueued $d"
done
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%' AND status <> 'succeeded'")" \
	"jobs of the schedule that did not succeed"
assert_eq 1 "$(sql "SELECT last_run = STR_TO_DATE(SUBSTRING(last_job, 11), '%Y-%m-%dT%H:%i:%sZ')
	AND next_run > last_run FROM kyu_schedules WHERE name = 'tick'")" "last_run, last_job and next_run agree"
