#!/usr/bin/env bash
# A batch of 200 jobs: every one succeeds exactly once and leaves its file.
. "$KYU_SRC/tests/lib.sh"

mkdir "$T_DIR/out"
start_kyud kyud.workers=2
sql "INSERT INTO kyu_jobs (id, command)
     SELECT CONCAT('b', seq), CONCAT('echo ran >> $T_DIR/out/b', seq)
     FROM seq_1_to_200"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 200 30
stop_kyud

assert_eq 200 "$(sql "SELECT COUNT(*) FROM kyu_jobs
                      WHERE status = 'succeeded' AND exit_code = 0 AND attempts = 1
                        AND finished_at IS NOT NULL")" "succeeded rows with exit 0, 1 attempt, finish time"
assert_eq 200 "$(find "$T_DIR/out" -type f | wc -l)" "files written by the jobs"
# Each file holds one line: no job ran twice.
assert_eq 200 "$(cat "$T_DIR"/out/* | wc -l)" "lines written by the jobs"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status <> 'succeeded'")" "rows not succeeded"
