#!/usr/bin/env bash
# kyu web's overview with 2,000 queues and 50,000 rows (no kyud: the rows
# are written as daemons would leave them): pages of it cover every queue
# exactly once, those that need attention first (failing, then stuck,
# then with failed attempts, then busy, then the rest, ties by name), or
# by name on request; a retry storm (five jobs failing over and over) is
# shown as retrying jobs, failed attempts and the failing mark, by the API
# and by kyu queues (in the overview's order); with no live kyud, one banner says so (the last one
# seen, or none ever) instead of "no daemon" on every queue. What a page
# costs is counted in rows the server read for kyu web's own account
# (userstat), not in time: it must not grow with the finished rows, and
# stays within a few reads per queue.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"
. "$KYU_SRC/tests/lib/count.sh"

use_own_db_user
port=$(free_tcp_port)
start_web "$port" -- "database.user=$T_USER" database.password=kyu
u=$WEB_URL
ov() { webq "$u/api/overview$1" "$2"; }
NOW_MINUTE="UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND"

# ---- 47,988 rows that ended long ago, 2,000 queues of one job each, due tomorrow
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, finished_at, updated_at)
     SELECT CONCAT('q', LPAD(1 + seq % 2000, 4, '0')), 'true', 'succeeded', 1, NOW(6) - INTERVAL 1 DAY,
            NOW(6) - INTERVAL 1 DAY FROM seq_1_to_47988"
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT CONCAT('q', LPAD(seq, 4, '0')), 'true', NOW(6) + INTERVAL 1 DAY
     FROM seq_1_to_2000"
# The storm: five jobs that failed 20-40 times each, waiting for their
# next attempt; 3 of 4 attempts in the last hour failed.
sql "INSERT INTO kyu_jobs (id, queue, command, attempts, max_attempts, error, run_at)
     SELECT CONCAT('storm-', seq), 'storm', 'false', 19 + seq * 4, 50, 'exited with status 1', NOW(6) + INTERVAL 2 SECOND
     FROM seq_1_to_5"
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     ($NOW_MINUTE, 'storm', 'd1', 1, 10, 0, 30), ($NOW_MINUTE - INTERVAL 5 MINUTE, 'storm', 'd1', 2, 0, 0, 5),
     ($NOW_MINUTE, 'mixed', 'd1', 1, 50, 1, 1), ($NOW_MINUTE, 'calm', 'd1', 1, 7, 0, 0)"
# Stuck: due for 10 minutes and for an hour.
sql "INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('stuck-a', 'true', NOW(6) - INTERVAL 10 MINUTE),
     ('stuck-b', 'true', NOW(6) - INTERVAL 1 HOUR), ('mixed', 'true', NOW(6) - INTERVAL 5 SECOND)"
# Busy: running jobs (the most of the busy), a due job; idle: a queue with
# settings only, one whose job is not due yet.
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, owner, lease_until, started_at)
     SELECT 'runner', 'sleep 100', 'running', 1, 1, NOW(6) + INTERVAL 1 HOUR, NOW(6) FROM seq_1_to_2"
sql "INSERT INTO kyu_queues (name, paused) VALUES ('idle', 1)"
sql "INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('later', 'true', NOW(6) + INTERVAL 1 DAY),
     ('busy-a', 'true', NOW(6))"
total=$((2000 + 9))
assert_eq "50000" "$(sql 'SELECT COUNT(*) FROM kyu_jobs')" "the table's rows"

# ---- the order: what needs attention first
assert_eq "200 [\"storm\", \"stuck-b\", \"stuck-a\", \"mixed\", \"runner\", \"busy-a\", \"calm\", \"idle\", \"later\", \"q0001\"]" \
	"$(ov "?limit=10" "[x['queue'] for x in d['queues']]")" "the first page's queues, by attention"
assert_eq "200 [\"failing\", \"stuck\", \"stuck\", \"failed\", \"busy\", \"busy\", \"idle\"]" \
	"$(ov "?limit=7" "[x['attention'] for x in d['queues']]")" "what each needs"
assert_eq "200 [\"q1998\", \"q1999\", \"q2000\"]" \
	"$(ov "?offset=$((total - 3))" "[x['queue'] for x in d['queues']]")" "the last page: nothing to do, by name"
assert_eq "200 {\"offset\": $((total - 3)), \"limit\": 100, \"total\": $total, \"sort\": \"attention\"}" \
	"$(ov "?offset=$((total - 3))" "json.dumps(d['page'])")" "the page's place"

# ---- pages cover every queue exactly once, in either order
for sort in attention name; do
	got=$(for off in 0 500 1000 1500 2000; do ov "?limit=500&offset=$off&sort=$sort" "' '.join(x['queue'] for x in d['queues'])" | cut -d' ' -f2-; done)
	assert_eq "$total $total" "$(echo $got | tr ' ' '\n' | sort | uniq | wc -l) $(echo $got | wc -w)" "pages by $sort: each queue once"
	if [ "$sort" = name ]; then
		assert_eq "$(echo $got | tr ' ' '\n' | LC_ALL=C sort | tr '\n' ' ')" "$(echo $got | tr ' ' '\n' | tr '\n' ' ')" "by name, in order"
	fi
done
assert_eq "400" "$(ov "?limit=0" "")" "a limit of 0 is refused"
assert_eq "400" "$(ov "?sort=size" "")" "an unknown order is refused"

# ---- the storm, loud
assert_eq "200 [5, false, 35, 0, 35, 10, true]" \
	"$(ov "?limit=1" "[q('storm')[k] for k in ('retrying', 'retrying_capped', 'retried_1h', 'failed_1h', 'failed_attempts_1h', 'succeeded_1h', 'failing')]")" \
	"the storm's retrying jobs, failed attempts and mark"
assert_eq "200 [false, 2, false]" "$(ov "?limit=9" "[q('mixed')['failing'], q('mixed')['failed_attempts_1h'], q('calm')['failing']]")" \
	"a queue whose attempts mostly succeed is not marked"
"$KYU" -c "$T_DIR/web.ini" queues >"$T_DIR/queues.txt" || fail "kyu queues: $(cat "$T_DIR/queues.txt")"
assert_eq "retrying failed_attempts_1h attention 5 35 failing" \
	"$(awk -F'\t' 'NR == 1 {a = $(NF - 2); b = $(NF - 1); c = $NF} $1 == "storm" {print a, b, c, $(NF - 2), $(NF - 1), $NF}' "$T_DIR/queues.txt")" \
	"kyu queues' retrying and failed attempts of the storm"
# Every queue with jobs or settings: calm has only jobs that ended (and
# were deleted), counted in kyu_minutes. In the overview's order.
assert_eq "$((total - 1))" "$(($(wc -l <"$T_DIR/queues.txt") - 1))" "kyu queues lists every queue"
# (mixed and busy-a, whose due jobs turn stuck after a minute, are left
# out of the order compared; calm is the overview's alone.)
assert_eq "$(ov "?limit=500" "' '.join(x['queue'] for x in d['queues'] if x['queue'] not in ('mixed', 'busy-a', 'calm'))")" \
	"200 $(awk -F'\t' 'NR > 1 && NR <= 500 && $1 != "mixed" && $1 != "busy-a" {printf "%s%s", s, $1; s = " "}' "$T_DIR/queues.txt")" \
	"kyu queues: the overview's order"
assert_eq "busy-a idle later" "$("$KYU" -c "$T_DIR/web.ini" queues --sort name --limit 3 | awk -F'\t' 'NR > 1 {printf "%s%s", s, $1; s = " "}')" \
	"kyu queues --limit"
assert_eq "q2000 runner" "$("$KYU" -c "$T_DIR/web.ini" queues --after q1999 --limit 2 | awk -F'\t' 'NR > 1 {printf "%s%s", s, $1; s = " "}')" \
	"kyu queues --after"
"$KYU" -c "$T_DIR/web.ini" queues --limit 0 2>/dev/null && fail "kyu queues --limit 0 accepted"

# ---- no kyud: one banner, no "no daemon" reason on any queue
assert_eq "200 [0, null, null, 0]" \
	"$(ov "" "[d['kyud']['live'], d['kyud']['last'], d['kyud']['last_attempt'], sum(1 for x in d['queues'] for w in x['why'] if w['reason'] == 'no daemon')]")" \
	"never a kyud: said once"
sql "INSERT INTO kyu_daemons (id, host, pid, version, started, last_seen, live_until)
     VALUES ('host-z:77:00', 'host-z', 77, '1', NOW(6) - INTERVAL 1 HOUR, NOW(6) - INTERVAL 5 MINUTE, NOW(6) - INTERVAL 4 MINUTE)"
assert_eq "200 [0, \"host-z\", 77, true, 0]" \
	"$(ov "" "[d['kyud']['live'], d['kyud']['last']['host'], d['kyud']['last']['pid'], 290 < d['kyud']['last']['ago'] < 900, sum(1 for x in d['queues'] for w in x['why'] if w['reason'] == 'no daemon')]")" \
	"the last kyud seen, 5 minutes ago"
sql "UPDATE kyu_daemons SET last_seen = NOW(6), live_until = NOW(6) + INTERVAL 1 HOUR, queues = 'q0001'"
assert_eq "200 [1, true]" "$(ov "" "[d['kyud']['live'], any(w['reason'] == 'no daemon' for w in q('busy-a')['why'])]")" \
	"a live kyud: the queues it does not serve say so"

# ---- what a page costs: rows read, not growing with the finished rows
rows_read() {
	root_sql -N -B -e "SELECT COALESCE(SUM(ROWS_READ), 0) FROM information_schema.USER_STATISTICS WHERE USER = '$T_USER'"
}
page_reads() {
	local r0
	r0=$(rows_read)
	ov "?limit=50" "len(d['queues'])" >/dev/null
	echo $(($(rows_read) - r0))
}
small=$(page_reads)
sql "INSERT INTO kyu_jobs (queue, command, status, attempts, finished_at, updated_at)
     SELECT CONCAT('q', LPAD(1 + seq % 2000, 4, '0')), 'true', IF(seq % 10 = 0, 'failed', 'succeeded'), 1,
            NOW(6) - INTERVAL 1 DAY, NOW(6) - INTERVAL 1 DAY FROM seq_1_to_50000"
big=$(page_reads)
echo "rows read by a page of 50 of $total queues: $small with 50,000 rows, $big with 100,000"
# Each queue costs an index read or two (the loose scan's dive, its name);
# a page's queues their own counts. The table's 50,000 rows are not read.
[ "$small" -le $((3 * total + 1000)) ] || fail "a page read $small rows: more than 3 per queue"
[ "$big" -le $((small + 500)) ] || fail "a page read $big rows with 50,000 more finished rows, $small before"

# ---- every queue in kyu_minutes' hour: more than a page's worth, so the
# sums for all queues are read once and kept a while (10 s); the order is
# the same on the first reading and from what was kept. q0500's attempts
# mostly failed (failing), q0007 and q1500 had a few fail (failed).
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried)
     SELECT $NOW_MINUTE - INTERVAL 2 MINUTE, CONCAT('q', LPAD(seq, 4, '0')), 'd2', 1, 5,
            IF(seq = 7, 2, IF(seq = 500, 4, 0)), IF(seq = 500, 3, IF(seq = 1500, 1, 0)) FROM seq_1_to_2000"
# (mixed and busy-a, whose due jobs turn stuck after a minute, are left
# out of the order checked.)
mine="['storm', 'q0500', 'stuck-b', 'q0007', 'q1500', 'calm', 'q0001']"
for reading in first kept; do
	assert_eq "200 [\"storm\", \"q0500\", \"stuck-b\", \"q0007\", \"q1500\", \"calm\", \"q0001\"]" \
		"$(ov "?limit=20" "[x['queue'] for x in d['queues'] if x['queue'] in $mine]")" \
		"the first page with every queue in the hour ($reading)"
	assert_eq "200 [$total, 10067, 2, [5, 4, 7, true, \"failing\"], [0, 2, 2, \"failed\"], [5, 0, 1, 1, \"failed\"]]" \
		"$(ov "?limit=20" "[d['all']['queues'], d['all']['succeeded_1h'], d['all']['failing'],
		   [q('q0500')[k] for k in ('succeeded_1h', 'failed_1h', 'failed_attempts_1h', 'failing', 'attention')],
		   [q('q0007')[k] for k in ('retried_1h', 'failed_1h', 'failed_attempts_1h', 'attention')],
		   [q('q1500')[k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h', 'failed_attempts_1h', 'attention')]]")" \
		"the hour's figures of all queues and of the page's ($reading)"
done
got=$(for off in 0 500 1000 1500 2000; do ov "?limit=500&offset=$off" "' '.join(x['queue'] for x in d['queues'])" | cut -d' ' -f2-; done)
assert_eq "$total $total" "$(echo $got | tr ' ' '\n' | sort | uniq | wc -l) $(echo $got | wc -w)" \
	"pages by attention with every queue in the hour: each queue once"

stop_web
echo "ok"
