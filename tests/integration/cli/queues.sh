#!/usr/bin/env bash
# kyu queues lists the queues in the dashboard overview's order (issue 43):
# those that need attention first -- failing (most failed attempts), then
# stuck (longest due), then with failed attempts, then busy (most running),
# then the rest, ties by name -- with an attention column, or by name
# (--sort name, or --after NAME); pages by --offset (either order) or
# --after (by name) cover every queue exactly once, here with 2,009 queues
# and 50,000 rows (no kyud: the rows are written as daemons leave them).
# The counts of a page's queues are its own; --json keeps the column. On a
# schema without kyu_minutes, the hour comes from kyu_jobs' rows.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
# names [ARGS...]: the listed queues' names on one line.
names() { kyu queues "$@" | awk -F'\t' 'NR > 1 {printf "%s%s", s, $1; s = " "} END {print ""}'; }
# col NAME [ARGS...]: that column of every listed queue, on one line.
col() {
	local c=$1
	shift
	kyu queues "$@" | awk -F'\t' -v c="$c" 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == c) k = i}
		NR > 1 {printf "%s%s", s, $k; s = " "} END {print ""}'
}
NOW_MINUTE="UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND"

# ---- 2,000 idle queues of one job due tomorrow, and 47,992 rows that
# ended a day ago among them
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, finished_at, updated_at)
     SELECT CONCAT('q', LPAD(1 + seq % 2000, 4, '0')), 'true', 'succeeded', 1, NOW(6) - INTERVAL 1 DAY,
            NOW(6) - INTERVAL 1 DAY FROM seq_1_to_47992"
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT CONCAT('q', LPAD(seq, 4, '0')), 'true', NOW(6) + INTERVAL 1 DAY
     FROM seq_1_to_2000"
# failing: 32 of 42 attempts in the hour failed (a retry storm), its job
# waiting for its next attempt; failed: one of 51.
sql "INSERT INTO kyu_jobs (queue, command, attempts, max_attempts, run_at)
     VALUES ('storm', 'false', 9, 50, NOW(6) + INTERVAL 1 HOUR)"
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     ($NOW_MINUTE, 'storm', 'd1', 1, 10, 2, 30), ($NOW_MINUTE, 'mixed', 'd1', 1, 50, 1, 0),
     ($NOW_MINUTE, 'calm', 'd1', 1, 7, 0, 0)"
# stuck: due for an hour and for 10 minutes.
sql "INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('stuck-a', 'true', NOW(6) - INTERVAL 10 MINUTE),
     ('stuck-b', 'true', NOW(6) - INTERVAL 1 HOUR)"
# busy: two running jobs, and one (nothing due: a due job turns stuck
# after a minute, which a loaded machine may take).
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, owner, lease_until, started_at)
     SELECT IF(seq < 3, 'runner', 'busy-a'), 'sleep 100', 'running', 1, 1, NOW(6) + INTERVAL 1 HOUR, NOW(6)
     FROM seq_1_to_3"
# idle: settings only, a job not due yet, only rows that ended long ago.
sql "INSERT INTO kyu_queues (name, paused) VALUES ('idle', 1)"
sql "INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('later', 'true', NOW(6) + INTERVAL 1 DAY)"
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, finished_at, updated_at)
     VALUES ('old', 'true', 'succeeded', 1, NOW(6) - INTERVAL 2 DAY, NOW(6) - INTERVAL 2 DAY)"
# (calm, whose jobs ended and were deleted, has no rows nor settings: the
# overview lists it from kyu_minutes, kyu queues does not.)
total=2009
assert_eq "50000" "$(sql 'SELECT COUNT(*) FROM kyu_jobs')" "the table's rows"

# ---- the order: what needs attention first, then by name
first="storm stuck-b stuck-a mixed runner busy-a idle later old q0001 q0002"
assert_eq "$first" "$(names --limit 11)" "the first page, by attention"
assert_eq "failing stuck stuck failed busy busy idle idle idle idle idle" "$(col attention --limit 11)" \
	"the attention column"
assert_eq "$first" "$(names --limit 11 --sort attention)" "--sort attention is the default"
assert_eq "busy-a idle later mixed old q0001" "$(names --sort name --limit 6)" "--sort name"
assert_eq "q1999 q2000 runner storm stuck-a stuck-b" "$(names --after q1998)" "--after: by name"
# The page's own counts, the hour, the settings.
assert_eq "storm 1 0 0 2 1 32 failing" \
	"$(kyu queues --limit 1 | awk -F'\t' 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i}
	   NR == 2 {print $1, $c["waiting"], $c["due"], $c["running"], $c["failed_1h"], $c["retrying"], $c["failed_attempts_1h"], $c["attention"]}')" \
	"the storm's row"
assert_eq "runner 2 busy-a 1" "$(kyu queues --offset 4 --limit 2 | awk -F'\t' 'NR > 1 {printf "%s%s %s", s, $1, $4; s = " "} END {print ""}')" \
	"the busy queues' running jobs"
assert_eq "idle 1 1" "$(kyu queues --offset 6 --limit 1 | awk -F'\t' 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i}
	NR == 2 {print $1, $c["paused"], $c["weight"]}')" "a queue with settings only"

# ---- pages cover every queue exactly once, in either order
all_att=$(names)
all_name=$(names --sort name)
assert_eq "$total $total" "$(echo $all_att | wc -w) $(echo $all_att | tr ' ' '\n' | sort -u | wc -l)" \
	"every queue once, by attention"
assert_eq "$(echo $all_att | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ')" "$(echo $all_name | tr ' ' '\n' | tr '\n' ' ')" \
	"by name: the same queues, in order"
for sort in attention name; do
	got=$(for off in 0 700 1400 2100; do names --sort "$sort" --offset "$off" --limit 700; done)
	want=$([ "$sort" = name ] && echo "$all_name" || echo "$all_att")
	assert_eq "$(echo $want)" "$(echo $got)" "pages by $sort, by --offset: each queue once, in order"
done
got="" after=""
for _ in 1 2 3 4 5; do
	page=$(names --sort name ${after:+--after "$after"} --limit 600)
	[ -n "$page" ] || break
	got="$got $page"
	after=${page##* }
done
assert_eq "$(echo $all_name)" "$(echo $got)" "pages by --after: each queue once, in order"
assert_eq "" "$(names --offset $total)" "past the end: no queue"
assert_eq "queue" "$(kyu queues --offset 5000 | cut -f1)" "past the end: the header"

# ---- the forms: --json, --format table
assert_eq "3 storm failing 32" \
	"$(kyu --json queues --limit 3 | python3 -c 'import json, sys; d = json.load(sys.stdin); print(len(d), d[0]["queue"], d[0]["attention"], d[0]["failed_attempts_1h"])')" \
	"--json: the column, numbers as numbers"
COLUMNS=200 "$KYU" -c "$T_DIR/kyu.ini" --format table queues --limit 2 >"$T_DIR/table.txt" || fail "--format table"
grep -q 'attention' "$T_DIR/table.txt" && grep -q 'storm .*failing' "$T_DIR/table.txt" ||
	fail "--format table: $(cat "$T_DIR/table.txt")"

# ---- what is refused
for bad in "--sort size" "--offset -1" "--limit 0" "--after q0001 --sort attention"; do
	rc=0
	kyu queues $bad >/dev/null 2>"$T_DIR/err" || rc=$?
	assert_eq 64 "$rc" "kyu queues $bad: $(cat "$T_DIR/err")"
done

# ---- without kyu_minutes, the hour from kyu_jobs: three jobs that failed
# for good in it make a queue failing; the storm's retries are not known.
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, finished_at, updated_at)
     SELECT 'crash', 'false', 'failed', 1, NOW(6), NOW(6) FROM seq_1_to_3"
sql "RENAME TABLE kyu_minutes TO kyu_minutes_away"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_minutes_away TO kyu_minutes' 2>/dev/null || true")
assert_eq "crash failing 3 -" "$(kyu queues --limit 1 | awk -F'\t' 'NR == 1 {for (i = 1; i <= NF; i++) c[$i] = i}
	NR == 2 {print $1, $c["attention"], $c["failed_1h"], $c["failed_attempts_1h"]}')" \
	"without kyu_minutes: failing from kyu_jobs"
sql "RENAME TABLE kyu_minutes_away TO kyu_minutes"
echo ok
