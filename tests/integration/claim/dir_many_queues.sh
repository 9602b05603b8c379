#!/usr/bin/env bash
# The claim's queue directory past the walk's 32 queue names (issue 24):
# with 40 queues due at once the compound statement stops walking and reads
# the rest with GROUP BY, and the directory it returns still names all 40
# (the server's slow log: Rows_sent of the directory's statement). Every
# job runs once, and no claim round trip fails.
. "$KYU_SRC/tests/lib.sh"

private_db_start
slow=$T_DIR/slow.log
sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('j', q.seq, '-', s.seq), CONCAT('q', LPAD(q.seq, 2, '0')),
            'echo \$KYU_JOB_ID >> $T_DIR/ran'
     FROM seq_1_to_40 AS q, seq_1_to_5 AS s"
root_sql -e "SET GLOBAL slow_query_log_file = '$slow'; SET GLOBAL long_query_time = 0;
             SET GLOBAL slow_query_log = 1"
start_kyud kyud.workers=1 kyud.slots=4
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 200 60
stop_kyud
root_sql -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10"
assert_each_ran_once 200 "$T_DIR/ran"

awk '/^# Query_time:/ { for (i = 1; i <= NF; i++) if ($i == "Rows_sent:") n = $(i + 1) }
     /^BEGIN NOT ATOMIC DECLARE q, p / { print n }' "$slow" >"$T_DIR/dir_sent"
reads=$(wc -l <"$T_DIR/dir_sent")
most=$(sort -n "$T_DIR/dir_sent" | tail -n 1)
echo "directory reads logged: $reads; most queues in one: ${most:-none}"
[ "$reads" -ge 1 ] || fail "no directory read in the server's slow log ($slow)"
[ "$most" -ge 33 ] || fail "no directory read named more than the walk's 32 queues (most: $most of 40)"
if grep -Ei 'claim.*(failed|error)|syntax' "$KYUD_LOG" | grep . >/dev/null; then
	fail "a claim failed: $(grep -Ei 'claim.*(failed|error)|syntax' "$KYUD_LOG" | sed -n 1,3p)"
fi
assert_no_worker_death
