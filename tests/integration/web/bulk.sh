#!/usr/bin/env bash
# The dashboard's bulk actions: GET /api/bulk counts what a filter
# matches; POST /api/jobs/ACTION with the filter (not ids) is refused
# without the CSRF token or from another site, and with it acts on exactly
# the filter's rows, in slices the page POSTs again ("more") until done;
# no filter, or a status the action does not apply to, is a 400; a
# read-only dashboard refuses.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
counts() { sql "SELECT CONCAT(queue, ':', status, ':', COUNT(*)) FROM kyu_jobs GROUP BY queue, status ORDER BY queue, status" | tr '\n' ' ' | sed 's/ $//'; }

sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('j-', seq), IF(seq <= 1500, 'a', 'b'), 'false', 'failed', 1,
            IF(seq % 100 = 0, 'quota exceeded', 'exited with status 1'), NOW(6) FROM seq_1_to_2200"
before="a:failed:1500 b:failed:700"

assert_eq "200 [1500, \"retry\"]" "$(webq "$u/api/bulk?action=retry&status=failed&queue=a" "[d['count'], d['action']]")" "the count"
assert_eq "200 22" "$(webq "$u/api/bulk?action=delete&status=failed&q=quota" "d['count']")" "the count of a search"
assert_eq "400" "$(webq "$u/api/bulk?action=run-now&status=waiting")" "an action not done in bulk"

# Refused: without the token, with a wrong one, from another site.
assert_eq "403" "$(webq -X POST "$u/api/jobs/retry?status=failed&queue=a")" "POST without the CSRF token"
assert_eq "403" "$(webq -X POST -H 'X-Kyu-CSRF: 0000' "$u/api/jobs/retry?status=failed&queue=a")" "a wrong token"
assert_eq "403" "$(webq -X POST --csrf -H 'Origin: http://evil.example' "$u/api/jobs/retry?status=failed&queue=a")" "another origin"
assert_eq "400" "$(webq -X POST --csrf "$u/api/jobs/delete")" "no filter"
assert_eq "400" "$(webq -X POST --csrf "$u/api/jobs/cancel?status=failed")" "a status cancel does not apply to"
assert_eq "404" "$(webq -X POST --csrf "$u/api/jobs/pause?status=failed")" "not a job action"
assert_eq "$before" "$(counts)" "nothing changed by the refusals"

# With it: POSTed again while "more", as the page does.
bulk_all() { # ACTION QUERY: the rows changed over every slice
	local total=0 pos="" got n more
	for _ in $(seq 1 100); do
		got=$(webq -X POST --csrf "$u/api/jobs/$1?$2$pos" \
			"json.dumps([d['count'], d['more'], d.get('at_queue') or '', d['after_seq']])")
		assert_eq 200 "${got%% *}" "POST $1?$2$pos"
		read -r n more < <(python3 -c 'import json, sys, urllib.parse as p; c, m, q, s = json.loads(sys.argv[1].split(" ", 1)[1]); print(c, "&at_queue=" + p.quote(q) + "&after_seq=" + s if m else "")' "$got")
		total=$((total + n))
		[ -n "$more" ] || { echo "$total"; return; }
		pos=$more
	done
	fail "$1?$2: still more after 100 POSTs"
}
upto=$(webq "$u/api/bulk?action=retry&status=failed&queue=a" "d['upto']")
assert_eq 1500 "$(bulk_all retry "status=failed&queue=a&upto=${upto#* }")" "retried, over the slices"
assert_eq "a:waiting:1500 b:failed:700" "$(counts)" "exactly queue a's rows retried"
assert_eq 7 "$(bulk_all delete "status=failed&q=quota")" "deleted by a search"
assert_eq "a:waiting:1500 b:failed:693" "$(counts)" "exactly the rows found"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE error = 'quota exceeded' AND status = 'failed'")" "no failed row of the search left"
grep -q "retry 1500 jobs matching status='failed' queue='a'\|retry [0-9]* jobs matching status='failed' queue='a'" "$WEB_LOG" ||
	fail "no log line of the bulk action: $(cat "$WEB_LOG")"
stop_web

# Read-only: refused like the single actions.
start_web "$port" --read-only
assert_eq "403" "$(webq -X POST --csrf "$u/api/jobs/cancel?status=waiting&queue=a")" "read-only"
assert_eq "a:waiting:1500 b:failed:693" "$(counts)" "nothing changed read-only"
stop_web
echo ok
