#!/usr/bin/env bash
# 2,000 jobs with 3 workers: all reach succeeded, each ran exactly once.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=3
# Each job appends its id to one file (short O_APPEND writes don't interleave).
sql "INSERT INTO kyu_jobs (id, command)
     SELECT CONCAT('m', seq), CONCAT('echo \$KYU_JOB_ID >> $T_DIR/ran')
     FROM seq_1_to_2000"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2000 100
stop_kyud

assert_eq "" "$(sql "SELECT CONCAT(id, ':', status, '/', attempts) FROM kyu_jobs
                     WHERE status <> 'succeeded' OR attempts <> 1 LIMIT 10" | tr '\n' ' ')" \
	"rows not succeeded at the first attempt (id:status/attempts)"
assert_eq 2000 "$(sort -u "$T_DIR/ran" | wc -l)" "distinct jobs that ran"
assert_eq "" "$(sort "$T_DIR/ran" | uniq -d | head -5 | tr '\n' ' ')" "jobs that ran twice"
# More than one worker took part.
workers=$(grep -Eo 'kyud\[worker [0-9]+\]: job m[0-9]+ attempt' "$KYUD_LOG" | awk '{print $2}' | sort -u | wc -l)
[ "$workers" -ge 2 ] || fail "only $workers worker(s) ran jobs (expected the load to spread over 3)"
