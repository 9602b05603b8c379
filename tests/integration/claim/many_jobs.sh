#!/usr/bin/env bash
# 2,000 jobs with 3 workers: all reach succeeded, each ran exactly once.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=3
# Each job appends its id to one file (short O_APPEND writes don't interleave).
sql "INSERT INTO kyu_jobs (id, command)
     SELECT CONCAT('m', seq), CONCAT('echo \$KYU_JOB_ID >> $T_DIR/ran')
     FROM seq_1_to_2000"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2000 30
stop_kyud

assert_each_ran_once 2000 "$T_DIR/ran"
# More than one worker took part.
workers=$(grep -Eo 'kyud\[worker [0-9]+\]: job m[0-9]+ attempt' "$KYUD_LOG" | awk '{print $2}' | sort -u | wc -l)
[ "$workers" -ge 2 ] || fail "only $workers worker(s) ran jobs (expected the load to spread over 3)"
