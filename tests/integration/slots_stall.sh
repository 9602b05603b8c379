#!/usr/bin/env bash
# Reaping keeps up (issue 24): eight workers with eight slots each and
# 3,000 jobs that exit at once. Every job ends succeeded exactly once, and no
# claimed job is ever given back for want of a free slot ("not started
# within ... every slot stayed busy"): with jobs that last a millisecond a
# slot is busy only while its job is not yet reaped. On a 16-core server
# kyud once sat for minutes with every slot "busy" and zombies unreaped; on
# two cores the kyud before the fix gave jobs back here (workers spinning
# with a statement in flight starved the ones with jobs to reap) and took
# 30 s where it now takes 8.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=8 kyud.slots=8 kyud.log_level=info
sql "INSERT INTO kyu_jobs (id, argv)
     SELECT CONCAT('s', seq), JSON_ARRAY('sh', '-c', 'echo \$KYU_JOB_ID >> $T_DIR/ran')
     FROM seq_1_to_3000"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 3000 30
stop_kyud 60
assert_each_ran_once 3000 "$T_DIR/ran"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE attempts <> 1")" "jobs claimed more than once"
assert_log_lacks 'every slot stayed busy'
assert_log_lacks 'gave back'
