#!/usr/bin/env bash
# The status channel with live output off ([kyud] live_output = 0): a
# running job's progress is not written while it runs (its writes ride
# with the live output's, and there are none), and the last progress, note
# and result are recorded when the attempt ends, as with live output on.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.live_output=0 kyud.lease=60
S='>&"$KYU_STATUS_FD"'
job="echo 'progress 40 working' $S; echo line; while [ ! -e $T_DIR/go ]; do sleep 0.05; done;
     echo 'progress 80 nearly' $S; echo 'result [1, 2]' $S"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('quiet', '$(sed "s/'/''/g" <<<"$job")')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'quiet'" running 30
# It has written its progress and a line by now, or soon: give a worker
# that would write them three seconds (live_output's default interval).
sleep 3
assert_eq "running NULL NULL NULL" \
	"$(sql "SELECT CONCAT_WS(' ', status, IFNULL(progress, 'NULL'), IFNULL(progress_note, 'NULL'), IFNULL(output, 'NULL'))
	        FROM kyu_jobs WHERE id = 'quiet'")" "no progress nor output written while it runs"
touch "$T_DIR/go"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'quiet'" succeeded 30
assert_eq "80 nearly [1, 2]" \
	"$(sql "SELECT CONCAT_WS(' ', progress, progress_note, result) FROM kyu_jobs WHERE id = 'quiet'")" \
	"the last progress, note and result at the end"
assert_eq 1 "$(sql "SELECT output = 'line\n' FROM kyu_jobs WHERE id = 'quiet'")" "its output at the end"
stop_kyud
assert_no_sanitizer_report
