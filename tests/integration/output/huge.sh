#!/usr/bin/env bash
# Output is capped at [job] output_limit: of a 1 GB output, the first and
# the last part are kept, with a line counting what was cut in between, in
# output_limit bytes at most. A job whose output never ends is stopped by
# its time limit and recorded; meanwhile the same worker keeps running
# other jobs.
. "$KYU_SRC/tests/lib.sh"

limit=65536
start_kyud kyud.workers=1 job.output_limit=$limit job.max_attempts=1 job.kill_grace=1

# ---- 1 GB, with recognisable first and last lines.
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('gigabyte', 'echo FIRST-LINE; head -c 1000000000 /dev/zero; echo LAST-LINE')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'gigabyte' AND status <> 'running'" succeeded 90
# At most output_limit bytes in all (kyu_jobs(7)), marker line included:
# FIRST-LINE, zeros, the marker, zeros, LAST-LINE.
row=$(sql "SELECT exit_code, LENGTH(output), LEFT(output, 11) = 'FIRST-LINE\n', RIGHT(output, 10) = 'LAST-LINE\n',
              (LENGTH(output) - LENGTH(REPLACE(output, ' bytes omitted]', ''))) DIV 15,
              SUBSTRING_INDEX(SUBSTRING_INDEX(output, '\n[kyu: ', -1), ' bytes omitted]\n', 1),
              LENGTH(REPLACE(output, X'00', ''))
           FROM kyu_jobs WHERE id = 'gigabyte'")
read -r code len first last markers omitted nonzero <<<"$row"
assert_eq "0 1 1 1" "$code $first $last $markers" "exit_code, first line, last line, marker lines"
[ "$len" -le "$limit" ] || fail "output is $len bytes, more than output_limit = $limit"
marker=$'\n[kyu: '"$omitted"$' bytes omitted]\n'
# Nothing lost without being counted: 11 + 10^9 + 10 bytes were written.
assert_eq 1000000021 $((len - ${#marker} + omitted)) "bytes kept + bytes counted as omitted"
# The cap is used, not just respected; all but the lines and the marker is zeros.
[ "$len" -ge $((limit - 64)) ] || fail "output is only $len bytes of $limit allowed"
assert_eq $((21 + ${#marker})) "$nonzero" "non-zero bytes in the output"

# ---- endless output, 12 s limit (room for a loaded machine to claim,
# start and record the quick job below meanwhile).
sql "INSERT INTO kyu_jobs (id, command, time_limit) VALUES ('endless', 'yes', 12)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'endless'" running 30
# A job submitted meanwhile runs on the same worker, and soon: the endless
# output does not starve its event loop. Soon enough to end before the
# endless one, 12 s after its start, is what is asserted: a starved loop
# would start it only after that.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('quick', 'echo quick')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'quick'" succeeded 30
assert_eq "quick" "$(sql "SELECT TRIM(TRAILING '\n' FROM CAST(output AS CHAR)) FROM kyu_jobs WHERE id = 'quick'")" "quick output"

wait_for "SELECT status FROM kyu_jobs WHERE id = 'endless' AND status <> 'running'" failed 60
assert_eq 1 "$(sql "SELECT q.finished_at < e.finished_at FROM kyu_jobs q, kyu_jobs e WHERE q.id = 'quick' AND e.id = 'endless'")" \
	"quick finished before endless (finished at $(sql "SELECT GROUP_CONCAT(id, ' ', finished_at) FROM kyu_jobs WHERE id IN ('quick', 'endless')"))"
assert_eq "NULL	15	timed out after 12 s	1	1	1" \
	"$(sql "SELECT IFNULL(exit_code, 'NULL'), \`signal\`, error, LENGTH(output) BETWEEN $limit - 64 AND $limit,
	               LEFT(output, 6) = 'y\ny\ny\n', output LIKE '%y\n\n[kyu: % bytes omitted]\n%'
	        FROM kyu_jobs WHERE id = 'endless'")" \
	"endless: exit_code, signal, error, output length, first lines, marker"
# The limit, not the output, ended it: from the claim to the recorded end
# (database clock), 12 s and at most 20 s of a loaded machine's delays
# (the job itself keeps a CPU busy).
assert_eq 1 "$(sql "SELECT duration BETWEEN 11.9 AND 32 FROM kyu_jobs WHERE id = 'endless'")" \
	"endless: duration within 12-32 s (was $(sql "SELECT duration FROM kyu_jobs WHERE id = 'endless'"))"
stop_kyud
