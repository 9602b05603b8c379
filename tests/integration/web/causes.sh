#!/usr/bin/env bash
# The dashboard's failures by cause: 30 failed jobs whose errors differ
# only in numbers and 3 with another error are two causes in
# GET /api/causes, 30 and 3 jobs, most first, with their queues and first
# and last seen; ?queue narrows; ?cause=ID lists a cause's jobs ("show
# them"); the bulk count and POST with the cause retry exactly the 30
# (and log it), cancel its retrying jobs; an unknown id has no jobs, and
# the bulk actions refuse it (404).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
counts() { sql "SELECT CONCAT(LEFT(id, 1), ':', status, ':', COUNT(*)) FROM kyu_jobs GROUP BY LEFT(id, 1), status ORDER BY 1" | tr '\n' ' ' | sed 's/ $//'; }

sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at, updated_at)
     SELECT CONCAT('f-', seq), IF(seq <= 20, 'a', 'b'), 'false', 'failed', 1,
            CONCAT('exit code 1: GET /v1/items/', seq, ' answered 503 after ', seq * 3, ' ms'), NOW(6),
            '2026-01-01 10:00:00' + INTERVAL seq MINUTE FROM seq_1_to_30"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('d-', seq), 'a', 'false', 'failed', 1,
            CONCAT('exit code 2: no such user ''u', seq, ''''), NOW(6) FROM seq_1_to_3"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at)
     VALUES ('r-1', 'c', 'false', 'waiting', 2, 'exit code 1: GET /v1/items/77 answered 503 after 9 ms', NOW(6) + INTERVAL 1 HOUR)"
before="d:failed:3 f:failed:30 r:waiting:1"
assert_eq "$before" "$(counts)" "the rows"

got=$(webq "$u/api/causes" "[[c['failed'], c['retrying'], c['queues'], c['text']] for c in d['causes']]")
assert_eq "200 [[30, 1, [\"a\", \"b\", \"c\"], \"exit code 1: GET <path> answered <n> after <n> ms\"], [3, 0, [\"a\"], \"exit code 2: no such user '<s>'\"]]" \
	"$got" "two causes, 30 and 3 failed"
assert_eq '200 ["2026-01-01 10:21:00.000000", "2026-01-01 10:30:00.000000"]' \
	"$(webq "$u/api/causes?queue=b" "[d['causes'][0]['first'], d['causes'][0]['last']]")" "first and last seen"
assert_eq "200 [[10, 0]]" "$(webq "$u/api/causes?queue=b" "[[c['failed'], c['retrying']] for c in d['causes']]")" "?queue=b"
id1=$(webq "$u/api/causes" "d['causes'][0]['id']")
id1=${id1#* }
id2=$(webq "$u/api/causes" "d['causes'][1]['id']")
id2=${id2#* }
assert_eq '200 ["d-1", "d-2", "d-3"]' "$(webq "$u/api/causes?cause=$id2" "sorted(j['id'] for j in d['jobs'])")" "show them"
assert_eq "200 [null, 0]" "$(webq "$u/api/causes?cause=deadbeef" "[d['cause'], len(d['jobs'])]")" "an unknown cause: none"

assert_eq "200 30" "$(webq "$u/api/bulk?action=retry&cause=$id1" "d['count']")" "the count of a cause (its failed jobs)"
assert_eq "200 1" "$(webq "$u/api/bulk?action=cancel&status=retrying&cause=$id1" "d['count']")" "its retrying jobs"
assert_eq "404" "$(webq -X POST --csrf "$u/api/jobs/retry?cause=deadbeef")" "POST with an unknown cause"
assert_eq "403" "$(webq -X POST "$u/api/jobs/retry?status=failed&cause=$id1")" "POST without the CSRF token"
assert_eq "$before" "$(counts)" "nothing changed yet"

# As the page sends it: the status and the cause's text.
text=$(webq "$u/api/causes" "d['causes'][0]['text']")
text=$(python3 -c 'import sys, urllib.parse as p; print(p.quote(sys.argv[1], safe=""))' "${text#* }")
assert_eq "200 [30, false]" "$(webq -X POST --csrf "$u/api/jobs/retry?status=failed&cause=$text" "[d['count'], d['more']]")" \
	"retry these"
assert_eq "d:failed:3 f:waiting:30 r:waiting:1" "$(counts)" "exactly the 30 retried"
assert_eq 2 "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'r-1'")" "the retrying one untouched"
grep -q "retry 30 jobs matching status='failed' cause='exit code 1: GET" "$WEB_LOG" ||
	fail "no log line of the action: $(cat "$WEB_LOG")"
assert_eq "200 [1, false]" "$(webq -X POST --csrf "$u/api/jobs/cancel?status=retrying&cause=$text" "[d['count'], d['more']]")" \
	"cancel these"
assert_eq "d:failed:3 f:waiting:30 r:cancelled:1" "$(counts)" "exactly the retrying one cancelled"
assert_eq "200 [3]" "$(webq "$u/api/causes" "[c['failed'] for c in d['causes']]")" "one cause left"
stop_web
echo ok
