#!/usr/bin/env bash
# kyu web's JSON endpoints against known rows (no kyud: the rows are
# written as a daemon would leave them): the overview's per-queue counts,
# its last hour from kyu_minutes, or from kyu_jobs without that table,
# the running and failed lists, keyset pages that cover a list exactly
# once, a job's every column with hostile and non-UTF-8 output returned as
# inert text, the security headers, schedules, locks and daemons (from
# running rows, then from a kyu_daemons table once one exists); each action
# changes the rows as kyu(1) documents and refuses a job in the wrong
# status; a POST without or with a wrong CSRF token, or from another
# origin, is refused; a Host that is not localhost or an address is
# refused; a 64-bit owner above 2^53 is sent exactly, as a string.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL

# ---- known rows
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a-due1', 'alpha', 'true'), ('a-due2', 'alpha', 'true'),
     ('a-due3', 'alpha', 'true')"
sql "INSERT INTO kyu_jobs (id, queue, command, run_at) VALUES ('a-later1', 'alpha', 'true', NOW(6) + INTERVAL 1 DAY),
     ('a-later2', 'alpha', 'true', NOW(6) + INTERVAL 1 DAY)"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, owner, lease_until, host, pid, started_at,
                           unique_key, traceparent, concurrency_key, key_slot)
     VALUES ('a-run', 'alpha', 'sleep 100', 'running', 1, 5169991159545666686, NOW(6) + INTERVAL 1 HOUR, 'host-a', 4242,
             NOW(6) - INTERVAL 5 SECOND, 'u-a-run', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
             'tenant-1', 2)"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, max_attempts, exit_code, error, finished_at)
     VALUES ('a-fail1', 'alpha', 'exit 3', 'failed', 3, 3, 3, 'exited with status 3', NOW(6)),
            ('a-fail2', 'alpha', 'exit 4', 'failed', 1, 1, 4, 'exited with status 4', NOW(6))"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at)
     SELECT CONCAT('a-ok', seq), 'alpha', 'true', 'succeeded', 1, NOW(6) FROM seq_1_to_4"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at)
     VALUES ('a-retry', 'alpha', 'exit 75', 'waiting', 1, 'exited with status 1', NOW(6) + INTERVAL 1 HOUR)"
sql "INSERT INTO kyu_queues (name, paused, max_running) VALUES ('beta', 1, 2)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('b-1', 'beta', 'true')"
# Output a browser must show as text, and bytes that are not UTF-8.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at, output, error)
     VALUES ('hostile', 'gamma', 'echo', 'succeeded', 1, NOW(6),
             '<script>alert(1)</script><img src=x onerror=alert(2)>', '</pre><b>x</b>'),
            ('binary', 'gamma', 'head -c', 'succeeded', 1, NOW(6), X'61ff62c3', NULL)"

# ---- overview
ov() { webq "$u/api/overview" "$1"; }
# First as on a schema older than version 4 (no kyu_minutes): the last
# hour counted on kyu_jobs' rows. web/minutes.sh has the counts kyud keeps.
sql "RENAME TABLE kyu_minutes TO kyu_minutes_v3"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_minutes_v3 TO kyu_minutes' 2>/dev/null || true")
assert_eq "200 [6, 3, 1, 2, null, null]" "$(ov "[q('alpha')[k] for k in ('waiting', 'due', 'running', 'failed_1h', 'succeeded_1h', 'per_minute')]")" "alpha's counts"
assert_eq "200 [6, 2, 8, 60, false]" "$(ov "[d['all']['succeeded_1h'], d['all']['failed_1h'], sum(d['all']['per_minute']), len(d['all']['per_minute']), d['per_queue_hour']]")" \
	"all queues' jobs ended in the last hour, per minute"
# With an index (status, updated_at, queue), per queue as well.
sql "ALTER TABLE kyu_jobs ADD KEY kyu_jobs_ended_queue (status, updated_at, queue)"
assert_eq "200 [true, 4, 2, 6, 60]" "$(ov "[d['per_queue_hour'], q('alpha')['succeeded_1h'], q('alpha')['failed_1h'], sum(q('alpha')['per_minute']), len(q('alpha')['per_minute'])]")" \
	"alpha's jobs ended in the last hour, per minute"
assert_eq "200 kyu_jobs" "$(ov "d['hour_source']")" "the hour's source without kyu_minutes"
# With kyu_minutes, its rows are the hour's figures, whatever kyu_jobs holds.
sql "RENAME TABLE kyu_minutes_v3 TO kyu_minutes"
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'alpha', 'd1', 1, 5, 1, 2),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'alpha', 'd1', 2, 1, 0, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'gamma', 'd1', 2, 2, 0, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'delta', 'd2', 1, 0, 3, 0)"
assert_eq "200 [\"kyu_minutes\", null, true, 6, 1, 2, 7, 2, 3]" \
	"$(ov "[d['hour_source'], d['hour_age'], d['per_queue_hour']] + [q('alpha')[k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h')] + [sum(q('alpha')['per_minute']), q('gamma')['succeeded_1h'], q('delta')['failed_1h']]")" \
	"the hour from kyu_minutes"
assert_eq "200 [8, 4, 2, 12]" "$(ov "[d['all'][k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h')] + [sum(d['all']['per_minute'])]")" \
	"all queues' hour from kyu_minutes"
sql "DELETE FROM kyu_minutes WHERE queue = 'delta'"
assert_eq "200 [true, 2, 1, 1, true, false]" "$(ov "[q('beta')[k] for k in ('paused', 'max_running', 'waiting', 'due', 'settings')] + [q('alpha')['settings']]")" "beta's settings and counts"
assert_eq "200 [\"alpha\", \"beta\", \"gamma\"]" "$(webq "$u/api/overview?sort=name" "[x['queue'] for x in d['queues']]")" "queues, by name"
# By default, what needs attention first: alpha has due jobs and failed
# attempts, beta a due job (paused), gamma nothing to do (web/scale.sh
# has the whole order).
assert_eq "200 [\"alpha\", \"beta\", \"gamma\"] idle" \
	"$(ov "[x['queue'] for x in d['queues']]") $(ov "q('gamma')['attention']" | cut -d' ' -f2)" "queues, by attention"
# A backlog is counted up to the cap and one more: the page says "more than".
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT 'big', 'true', NOW(6) - INTERVAL 1 MINUTE FROM seq_1_to_1005"
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT 'big', 'true', NOW(6) + INTERVAL 1 DAY FROM seq_1_to_3"
assert_eq "200 [1000, 1001, 1001]" "$(ov "[d['count_cap'], q('big')['waiting'], q('big')['due']]")" "a backlog over the cap"
sql "DELETE FROM kyu_jobs WHERE queue = 'big'"
age=$(ov "q('alpha')['oldest_due_age']")
python3 -c "import sys; v = float(sys.argv[1].split()[1]); sys.exit(0 if 0 <= v < 600 else 1)" "$age" ||
	fail "alpha's oldest due age: $age"

# ---- lists
assert_eq "200 a-run host-a 4242" "$(webq "$u/api/running" "' '.join(str(d['rows'][0][k]) for k in ('id', 'host', 'pid'))")" "running"
lease=$(webq "$u/api/running" "d['rows'][0]['lease_left']")
python3 -c "import sys; v = float(sys.argv[1].split()[1]); sys.exit(0 if 0 < v <= 3600 else 1)" "$lease" ||
	fail "lease left of the running job: $lease"
assert_eq "200 a-fail2 a-fail1" "$(webq "$u/api/jobs?status=failed" "ids()")" "failed, newest first (then by seq)"
assert_eq "200 exited with status 4" "$(webq "$u/api/jobs?status=failed" "d['rows'][0]['error']")" "a failed job's error"
assert_eq "200 a-retry 5000" "$(webq "$u/api/retrying" "ids() + ' ' + str(d['window'])")" "retrying"
assert_eq "400" "$(webq "$u/api/jobs?status=nonsense")" "a status that does not exist"
assert_eq "400" "$(webq "$u/api/jobs?status=failed&before=1;DROP")" "a cursor that is not one"

# Keyset pages: 130 rows in one second (equal updated_at) and 30 more a
# minute apart: three pages hold every row exactly once, in order.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at, updated_at)
     SELECT CONCAT('p-', LPAD(seq, 3, '0')), 'pages', 'true', 'cancelled', 1, NOW(6), '2026-01-01 00:00:00' FROM seq_1_to_130"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at, updated_at)
     SELECT CONCAT('p-', LPAD(seq, 3, '0')), 'pages', 'true', 'cancelled', 1, NOW(6),
            '2026-01-02 00:00:00' - INTERVAL seq MINUTE FROM seq_131_to_160"
next=
: >"$T_DIR/pages"
for page in 1 2 3 4; do
	arg=${next:+&before=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$next")}
	got=$(webq "$u/api/jobs?status=cancelled$arg" "json.dumps([ids(), d['next']])")
	assert_eq 200 "${got%% *}" "page $page"
	python3 -c 'import json, sys; ids, nxt = json.loads(sys.argv[1].split(" ", 1)[1]); print(ids.replace(" ", "\n")); print(nxt or "", file=sys.stderr)' \
		"$got" >>"$T_DIR/pages" 2>"$T_DIR/next"
	next=$(cat "$T_DIR/next")
	[ -n "$next" ] || break
done
assert_eq 4 "$page" "pages of 160 rows by 50"
assert_eq 160 "$(grep -c . "$T_DIR/pages")" "rows over all pages"
assert_eq 160 "$(sort -u "$T_DIR/pages" | grep -c .)" "distinct rows over all pages"
# Newest first: the minute-apart rows (p-131 newest), then the 130 of one
# second by seq descending.
assert_eq "p-131 p-132" "$(sed -n 1,2p "$T_DIR/pages" | tr '\n' ' ' | sed 's/ $//')" "first rows"
assert_eq "p-160 p-130 p-129" "$(sed -n 30,32p "$T_DIR/pages" | tr '\n' ' ' | sed 's/ $//')" "rows 30 to 32"
assert_eq "p-001" "$(sed -n 160p "$T_DIR/pages")" "last row"

# ---- a job, and escaping
hdrs=(--header Content-Type --header Content-Security-Policy --header X-Frame-Options
	--header X-Content-Type-Options --header Cache-Control --header Referrer-Policy)
got=$(webq "${hdrs[@]}" "$u/api/job?id=hostile" "d['job']['output']")
assert_eq "200 application/json default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none' DENY nosniff no-store no-referrer <script>alert(1)</script><img src=x onerror=alert(2)>" \
	"$got" "the hostile job's output as JSON text, and the headers"
body=$(webq "$u/api/job?id=hostile" "body")
case $body in *'</script>'* | *'</pre>'*) fail "the JSON holds '</' unescaped: $body" ;; esac
assert_eq '200 "a\ufffdb\ufffd"' "$(webq "$u/api/job?id=binary" "json.dumps(d['job']['output'])")" "bytes that are not UTF-8"
assert_eq "200 [\"a-run\", \"running\", 4242, 1, \"sleep 100\"]" \
	"$(webq "$u/api/job?id=a-run" "[d['job'][k] for k in ('id', 'status', 'pid', 'attempts', 'command')]")" "a job's columns"
assert_eq 46 "$(webq "$u/api/job?id=a-run" "len(d['job'])" | cut -d' ' -f2)" \
	"columns of a job (32, 8 of workflows and 6 of schema version 6)"
assert_eq "200 [\"u-a-run\", \"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\", \"tenant-1\", 2]" \
	"$(webq "$u/api/job?id=a-run" "[d['job'][k] for k in ('unique_key', 'traceparent', 'concurrency_key', 'key_slot')]")" \
	"a job's unique key, trace context, key and slot"
# 64-bit identifiers as strings: a JavaScript number would round this owner
# (above 2^53) to 5169991159545667000.
assert_eq "200 [\"5169991159545666686\", true]" \
	"$(webq "$u/api/job?id=a-run" "[d['job']['owner'], isinstance(d['job']['seq'], str) and d['job']['seq'].isdigit()]")" "owner and seq, as strings"
assert_eq "200 true" "$(webq "$u/api/running" "isinstance(d['rows'][0]['seq'], str)")" "seq in a list, as a string"
assert_eq "404" "$(webq "$u/api/job?id=nope")" "a job that does not exist"
assert_eq "200 text/html; charset=utf-8 DENY" "$(webq --header Content-Type --header X-Frame-Options "$u/")" "the page"
assert_eq "200 text/javascript; charset=utf-8" "$(webq --header Content-Type "$u/app.js")" "the script"
assert_eq "404" "$(webq "$u/nothing-here")" "an unknown path"

# ---- schedules, locks, daemons
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('nightly', '0 3 * * *', 'true')"
assert_eq "200 [true, \"nightly\", \"0 3 * * *\"]" "$(webq "$u/api/schedules" "[d['exists'], d['rows'][0]['name'], d['rows'][0]['cron']]")" "schedules"
sql "INSERT INTO kyu_locks (name, slot) VALUES ('deploy', 0)"
assert_eq "200 [true, \"deploy\", \"free\"]" "$(webq "$u/api/locks" "[d['exists'], d['rows'][0]['name'], d['rows'][0]['lease_left']]")" "locks"
# Daemons: without kyu_daemons (a schema older than version 3), the hosts
# of the running rows; with it, the registry rows.
sql "RENAME TABLE kyu_daemons TO kyu_daemons_away"
assert_eq "200 [\"running jobs\", \"host-a\", 1]" "$(webq "$u/api/daemons" "[d['source'], d['rows'][0]['host'], d['rows'][0]['running']]")" "daemons from running rows"
sql "RENAME TABLE kyu_daemons_away TO kyu_daemons"
sql "INSERT INTO kyu_daemons (id, host, pid, version, started, last_seen, live_until)
     VALUES ('host-b:99:0011223344556677', 'host-b', 99, '0.1.0', NOW(6), NOW(6), NOW(6) + INTERVAL 60 SECOND)"
assert_eq "200 [\"kyu_daemons\", \"host-b\", 99, 1, \"host-b:99:0011223344556677\"]" \
	"$(webq "$u/api/daemons" "[d['source'], d['rows'][0]['host'], d['rows'][0]['pid'], d['rows'][0]['live'], d['rows'][0]['id']]")" "daemons from kyu_daemons"

# ---- CSRF and origin: refused, nothing changed
post() { webq -X POST "$@"; }
# Slots, running and the drain (schema version 9): a daemon drained from
# the dashboard as kyu drain does it (by id or HOST:PID, live rows only).
sql "UPDATE kyu_daemons SET slots = 8, running = 3 WHERE id = 'host-b:99:0011223344556677'"
assert_eq "200 [8, 3, null]" "$(webq "$u/api/daemons" "[d['rows'][0]['slots'], d['rows'][0]['running'], d['rows'][0]['drain']]")" \
	"daemons: slots, running, drain"
assert_eq 403 "$(post "$u/api/daemon/drain?id=host-b:99")" "drain without a token"
assert_eq 404 "$(post --csrf "$u/api/daemon/drain?id=host-z:1")" "drain of no live daemon"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_daemons WHERE drain IS NOT NULL")" "nothing drained yet"
assert_eq "200 draining" "$(post --csrf "$u/api/daemon/drain?id=host-b:99" "d['done']")" "drain by HOST:PID"
assert_eq 1 "$(sql "SELECT drain IS NOT NULL AND drain_by IS NOT NULL FROM kyu_daemons WHERE pid = 99")" "drain and drain_by set"
assert_eq "200 true" "$(webq "$u/api/daemons" "d['rows'][0]['drain'] is not None")" "daemons: the drain shown"
assert_eq 403 "$(post "$u/api/job/cancel?id=a-due1")" "POST without a token"
assert_eq 403 "$(post -H 'X-Kyu-CSRF: 0000' "$u/api/job/cancel?id=a-due1")" "POST with a wrong token"
assert_eq 403 "$(post --csrf -H 'Origin: http://evil.example' "$u/api/job/cancel?id=a-due1")" "POST from another origin"
assert_eq 403 "$(post --csrf -H 'Sec-Fetch-Site: cross-site' "$u/api/job/cancel?id=a-due1")" "POST a browser marks cross-site"
assert_eq 403 "$(webq -H 'Host: evil.example' "$u/api/overview")" "a Host that is a name (DNS rebinding)"
assert_eq 200 "$(webq -H "Host: localhost:$port" "$u/api/overview")" "Host localhost"
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'a-due1'")" "a-due1 after the refused POSTs"
assert_eq 405 "$(webq -X PUT "$u/api/overview")" "PUT"
assert_eq 413 "$(webq -X POST -H 'Content-Length: 100000' "$u/api/job/cancel?id=a-due1")" "a POST with a large body"

# ---- actions, each with the documented statement's effect
assert_eq "200 cancelled" "$(post --csrf "$u/api/job/cancel?id=a-due1" "d['done']")" "cancel"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = 'a-due1'")" "a-due1 after cancel"
assert_eq 409 "$(post --csrf "$u/api/job/cancel?id=a-due1")" "cancel of a cancelled job"
assert_eq "200 retrying" "$(post --csrf "$u/api/job/retry?id=a-fail1" "d['done']")" "retry"
assert_eq "waiting 0 1" "$(sql "SELECT status, attempts, error IS NULL AND run_at <= NOW(6) FROM kyu_jobs WHERE id = 'a-fail1'" | tr '\t' ' ')" "a-fail1 after retry"
assert_eq 409 "$(post --csrf "$u/api/job/retry?id=a-due2")" "retry of a waiting job"
assert_eq "200 due now" "$(post --csrf "$u/api/job/run-now?id=a-later1" "d['done']")" "run now"
assert_eq "waiting 1" "$(sql "SELECT status, run_at <= NOW(6) FROM kyu_jobs WHERE id = 'a-later1'" | tr '\t' ' ')" "a-later1 after run now"
assert_eq 409 "$(post --csrf "$u/api/job/run-now?id=a-ok1")" "run now of a finished job"
assert_eq "200 deleted" "$(post --csrf "$u/api/job/delete?id=a-ok1" "d['done']")" "delete"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'a-ok1'")" "a-ok1 after delete"
assert_eq 409 "$(post --csrf "$u/api/job/delete?id=a-run")" "delete of a running job"
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'a-run'")" "a-run after the refused delete"
assert_eq "200 paused" "$(post --csrf "$u/api/queue/pause?queue=alpha" "d['done']")" "pause"
assert_eq 1 "$(sql "SELECT paused FROM kyu_queues WHERE name = 'alpha'")" "alpha after pause"
assert_eq "200 resumed" "$(post --csrf "$u/api/queue/resume?queue=beta" "d['done']")" "resume"
assert_eq "0 2" "$(sql "SELECT paused, max_running FROM kyu_queues WHERE name = 'beta'" | tr '\t' ' ')" "beta after resume (limit kept)"
# A queue that has no jobs and no settings: refused, no row made (a typo
# must not create a queue); reset removes a queue's settings.
assert_eq "404 pause: no queue 'nosuch' (no job, no settings)" "$(post --csrf "$u/api/queue/pause?queue=nosuch" "d['error']")" "pause of a queue that does not exist"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues WHERE name = 'nosuch'")" "rows of nosuch after the refused pause"
assert_eq "200 settings removed" "$(post --csrf "$u/api/queue/reset?queue=beta" "d['done']")" "reset"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues WHERE name = 'beta'")" "beta's settings after reset"
assert_eq 404 "$(post --csrf "$u/api/queue/reset?queue=beta")" "reset of a queue without settings"
assert_eq "200 paused" "$(post --csrf "$u/api/queue/pause?queue=beta" "d['done']")" "pause of a queue with jobs and no settings"
assert_eq 404 "$(post --csrf "$u/api/job/pause?id=a-due2")" "a queue action on a job"
assert_eq 400 "$(post --csrf "$u/api/job/cancel")" "an action without an id"
# The same statements as kyu's own commands: kyu run-now and kyu delete.
"$KYU" -c "$T_DIR/web.ini" run-now a-later2 >/dev/null || fail "kyu run-now"
assert_eq 1 "$(sql "SELECT run_at <= NOW(6) FROM kyu_jobs WHERE id = 'a-later2'")" "a-later2 after kyu run-now"
"$KYU" -c "$T_DIR/web.ini" delete a-ok2 >/dev/null || fail "kyu delete"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'a-ok2'")" "a-ok2 after kyu delete"
grep -E "kyu-web: cancel job 'a-due1' \(from 127\.0\.0\.1\)" "$WEB_LOG" >/dev/null || fail "the cancel is not logged: $(cat "$WEB_LOG")"


stop_web
echo "ok"
