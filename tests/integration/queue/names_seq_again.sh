#!/usr/bin/env bash
# A job's seq used again (kyu_jobs emptied and its AUTO_INCREMENT reset, or
# TRUNCATE) while the name its first job noted is still in
# kyu_queue_names_new, not filed yet: the submitter's INSERT must not fail
# on the note's key (name, seq), and kyud then runs the job.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('first', 'fresh', '[\"true\"]')"
assert_eq "fresh	1" "$(sql "SELECT name, seq FROM kyu_queue_names_new")" "the note of the new queue"
sql "DELETE FROM kyu_jobs; ALTER TABLE kyu_jobs AUTO_INCREMENT = 1"
# Another session (no @kyu_noted), the same queue, the same seq.
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('second', 'fresh', '[\"true\"]')" 2>"$T_DIR/insert.err" ||
	fail "the INSERT of a job whose seq was used before failed: $(cat "$T_DIR/insert.err")"
assert_eq 1 "$(sql "SELECT seq FROM kyu_jobs WHERE id = 'second'")" "the second job's seq (used again)"
start_kyud
wait_for "SELECT status FROM kyu_jobs WHERE id = 'second'" succeeded 60
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_queue_names WHERE name = 'fresh'")" "the name filed"
stop_kyud
