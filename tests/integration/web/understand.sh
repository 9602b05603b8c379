#!/usr/bin/env bash
# kyu web's overview says why a queue with due jobs is not moving -- paused,
# at max_running, its rate used up, its oldest due jobs waiting for a
# concurrency key a running job holds, no live daemon serving it -- from
# the rows of kyu_queues, kyu_queue_starts, kyu_jobs and kyu_daemons; a
# queue that nothing holds back says nothing; the hour's failed jobs per
# minute come with the totals; the job page sends the database's clock
# and zone; the schedules are enabled, disabled and run from the
# dashboard with kyu schedule's statements (CSRF and read-only as for
# every action; remove stays kyu's).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
ov() { webq "$u/api/overview" "$1"; }
why() { ov "sorted(w['reason'] for w in q('$1')['why'])"; }

sql "INSERT INTO kyu_queues (name, paused) VALUES ('p', 1)"
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('m', 1)"
sql "INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('r', 2, 3600)"
sql "INSERT INTO kyu_queue_starts (queue, at, n) VALUES ('r', NOW(6) - INTERVAL 1 MINUTE, 2)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('p-1', 'p', 'true'), ('m-1', 'm', 'true'),
     ('r-1', 'r', 'true'), ('free-1', 'free', 'true')"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, owner, lease_until, host, pid, started_at, concurrency_key)
     VALUES ('m-run', 'm', 'sleep 9', 'running', 1, 7, NOW(6) + INTERVAL 1 HOUR, 'h', 1, NOW(6), NULL),
            ('k-run', 'k', 'sleep 9', 'running', 1, 8, NOW(6) + INTERVAL 1 HOUR, 'h', 2, NOW(6), 'acct-7')"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES ('k-1', 'k', 'true', 'acct-7'),
     ('k-2', 'k', 'true', 'acct-7')"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES ('h-1', 'half', 'true', 'acct-7'),
     ('h-2', 'half', 'true', 'acct-9')"

# Without kyu_daemons (an older schema) the daemons are not judged.
sql "RENAME TABLE kyu_daemons TO kyu_daemons_away"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_daemons_away TO kyu_daemons' 2>/dev/null || true")
assert_eq "200 [\"paused\"]" "$(why p)" "a paused queue"
assert_eq "200 [\"max_running\"]" "$(why m)" "a queue at max_running"
assert_eq "200 [\"rate-limited\"]" "$(why r)" "a queue whose rate is used up"
assert_eq "200 [\"key-blocked\"]" "$(why k)" "a queue whose due jobs wait for a key"
assert_eq "200 its 2 oldest due jobs wait for a concurrency key that a running job holds" \
	"$(ov "q('k')['why'][0]['detail']")" "the key's detail"
assert_eq "200 1 of its 2 oldest due jobs wait for a concurrency key that a running job holds" \
	"$(ov "q('half')['why'][0]['detail']")" "some of the due jobs wait for a key"
assert_eq "200 [[], null]" "$(ov "[q('free')['why'], q('free')['daemons']]")" "a free queue, no registry"
sql "RENAME TABLE kyu_daemons_away TO kyu_daemons"
# With the registry: a daemon of other queues serves none of these, and a
# dead one nobody.
sql "INSERT INTO kyu_daemons (id, host, pid, queues, version, started, last_seen, live_until) VALUES
     ('h:1:a', 'h', 1, 'm,other', 'test', NOW(6), NOW(6), NOW(6) + INTERVAL 1 HOUR),
     ('h:2:b', 'h', 2, '', 'test', NOW(6), NOW(6), NOW(6) - INTERVAL 1 HOUR)"
assert_eq "200 [\"no daemon\"]" "$(why free)" "a queue no live daemon serves"
assert_eq "200 [\"max_running\"] 1" "$(ov "[w['reason'] for w in q('m')['why']]") $(ov "q('m')['daemons']" | cut -d' ' -f2)" \
	"a queue a live daemon serves"
sql "UPDATE kyu_daemons SET queues = '' WHERE id = 'h:1:a'"
assert_eq "200 []" "$(why free)" "served by a daemon of every queue"

# The hour per minute, the failed apart.
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND, 'm', 'd', 1, 5, 2, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 3 MINUTE, 'm', 'd', 1, 1, 1, 0)"
assert_eq "200 [7, 2, 2, 1, 60]" "$(ov "[q('m')['per_minute'][59], q('m')['failed_per_minute'][59], q('m')['per_minute'][56], q('m')['failed_per_minute'][56], len(d['all']['failed_per_minute'])]")" \
	"succeeded and failed per minute"
zone=$(sql "SELECT IF(@@session.time_zone = 'SYSTEM', @@system_time_zone, @@session.time_zone)")
assert_eq "200 $zone" "$(ov "d['zone']")" "the overview's zone"
assert_eq "200 $zone True False" "$(webq "$u/api/job?id=m-1" "d['zone'] + ' ' + str(d['now'][:2] == '20') + ' ' + str('db_now' in d['job'])")" \
	"a job's page: the clock and zone, apart from its columns"

# Schedules.
sql "INSERT INTO kyu_schedules (name, cron, queue, command, enabled) VALUES ('nightly', '0 3 * * *', 'm', 'echo hi', 1),
     ('odd:name', '0 4 * * *', 'm', 'true', 1)"
post() { webq -X POST "$@"; }
assert_eq 403 "$(post "$u/api/schedule/disable?name=nightly")" "a schedule's action without a token"
assert_eq "200 disabled" "$(post --csrf "$u/api/schedule/disable?name=nightly" "d['done']")" "disable"
assert_eq 0 "$(sql "SELECT enabled FROM kyu_schedules WHERE name = 'nightly'")" "disabled in the table"
assert_eq "200 disabled" "$(post --csrf "$u/api/schedule/disable?name=nightly" "d['done']")" "disable twice"
assert_eq "200 enabled" "$(post --csrf "$u/api/schedule/enable?name=nightly" "d['done']")" "enable"
assert_eq 1 "$(sql "SELECT enabled FROM kyu_schedules WHERE name = 'nightly'")" "enabled in the table"
got=$(post --csrf "$u/api/schedule/run-now?name=odd:name" "d['done'] + ' ' + d['job']")
case $got in "200 enqueued cron:odd:name:now:"*Z) ;; *) fail "run-now: $got" ;; esac
job=${got#200 enqueued }
assert_eq "m waiting" "$(sql "SELECT queue, status FROM kyu_jobs WHERE id = '$job'" | tr '\t' ' ')" "run-now's job"
assert_eq "404" "$(post --csrf "$u/api/schedule/enable?name=nobody")" "a schedule that does not exist"
assert_eq "404" "$(post --csrf "$u/api/schedule/remove?name=nightly")" "remove is not the dashboard's"
assert_eq "404" "$(post --csrf "$u/api/schedule/drop?name=nightly")" "no such action"
assert_eq "400" "$(post --csrf "$u/api/schedule/enable")" "no name"
assert_eq "200 nightly" "$(webq "$u/api/schedules?from=nightly" "d['rows'][0]['name']")" "the schedules from one"
grep -q "disable schedule 'nightly'" "$WEB_LOG" || fail "the action is not logged: $(cat "$WEB_LOG")"
stop_web

start_web "$port" --read-only
assert_eq 403 "$(post --csrf "$u/api/schedule/enable?name=nightly")" "read-only"
stop_web
