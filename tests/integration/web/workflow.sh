#!/usr/bin/env bash
# kyu web and workflows (kyu_jobs(7), "Workflows"), without kyud: rows made
# in SQL, settled by CALL kyu_settle where the test says so. A chain
# a -> b -> c, a batch of 3 and a job after it, a job whose upstream was
# deleted: a job's JSON carries its workflow columns, its upstream and
# downstream jobs with their statuses (a deleted one as a seq without an
# id) and why a blocked one waits; lists are bounded (the first 50 and a
# count); the overview counts blocked jobs per queue and names what the
# oldest waits for, and says when nobody settles; the Jobs list has the
# status blocked; the graph of a job (depth, node cap) and the batch page
# (counts, pages, the jobs after it). The dashboard's cancel, retry and
# delete settle at once: the cancel of a cancels b and c with no kyud
# running, its retry re-opens them, a blocked job is cancelled; a settle
# that fails leaves the action done and is logged. A job with 10,000
# dependents shows 50 of them. On a schema without workflows the pages
# work without them.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
post() { webq -X POST "$@"; }
settle() { sql "CALL kyu_settle(1000)"; }
job() { webq "$u/api/job?id=$1" "$2"; }
ov() { webq "$u/api/overview" "$1"; }

# ---- the rows; a live daemon of every queue (else the overview says that
# none serves them)
sql "INSERT INTO kyu_daemons (id, host, pid, queues, version, started, last_seen, live_until)
     VALUES ('h:1:a', 'h', 1, '', 'test', NOW(6), NOW(6), NOW(6) + INTERVAL 1 DAY)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a', 'flow', 'true');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('b', 'flow', 'true', '[\"a\"]');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('c', 'flow', 'true', '[\"b\"]')"
sql "INSERT INTO kyu_jobs (id, queue, command, batch, status, attempts, finished_at) VALUES
     ('n1', 'nightly', 'true', 'night', 'waiting', 0, NULL),
     ('n2', 'nightly', 'true', 'night', 'waiting', 0, NULL),
     ('n3', 'nightly', 'true', 'night', 'waiting', 0, NULL);
     INSERT INTO kyu_jobs (id, queue, command, after_batch) VALUES ('report', 'flow', 'true', 'night');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('early', 'other', 'true', '[\"n2\"]')"
# n2 ends after early was inserted, before any settle: early stays blocked
# with its only upstream ended and not counted.
sql "UPDATE kyu_jobs SET status = 'succeeded', attempts = 1, finished_at = NOW(6) WHERE id = 'n2'"
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('w', seq), 'other', 'true' FROM seq_1_to_5;
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('many', 'other', 'true',
       '[\"w1\", \"w2\", \"w3\", \"w4\", \"w5\"]')"
sql "UPDATE kyu_jobs SET status = 'running', attempts = 1, owner = 7, host = 'h', pid = 1, started_at = NOW(6),
     lease_until = NOW(6) + INTERVAL 1 HOUR WHERE id = 'n3'"

# Before kyu_settle has counted them: blocked, nothing counted, and why.
assert_eq "200 [\"blocked\", \"[\\\"a\\\"]\", \"succeeded\", null, null, null, null, 0]" \
	"$(job b "[d['job'][k] for k in ('status', 'after', 'after_policy', 'batch', 'after_batch', 'after_left', 'cancelled_by', 'has_downstream')]")" \
	"b's workflow columns, before any settle"
assert_eq "200 [\"blocked\", \"waits for a (waiting)\", [\"a\"]]" \
	"$(job b "[d['why'][0]['reason'], d['why'][0]['detail'], [w['id'] for w in d['why'][0]['waits_for']]]")" "why b waits, before any settle"
assert_eq "200 [\"blocked\", \"has not had its upstream jobs counted: kyu_settle has not run since it was inserted (kyud calls it; so does CALL kyu_settle(1000))\", null]" \
	"$(job early "[d['why'][0]['reason'], d['why'][0]['detail'], d['why'][0]['waits_for']]")" "why early waits: its upstream ended, not counted"
settle
assert_eq "200 [\"waiting\", []]" "$(job early "[d['job']['status'], d['why']]")" "early, settled"

# ---- a job's page: its edges both ways, with statuses
edge_rows() { echo "[[r['id'], r['status'], r['state']] for r in d['$1']['rows']]"; }
assert_eq "200 [[[\"a\", \"waiting\", 0]], [[\"c\", \"blocked\", 0]], [1, 0, 1, 0]]" \
	"$(job b "[$(edge_rows upstream), $(edge_rows downstream), [d['upstream']['total'], d['upstream']['more'], d['downstream']['total'], d['downstream']['more']]]")" \
	"b: upstream a, downstream c"
assert_eq "200 [1, 1, \"waits for a (waiting)\", [\"a\"]]" \
	"$(job b "[d['job']['after_left'], d['job']['has_downstream'], d['why'][0]['detail'], [w['id'] for w in d['why'][0]['waits_for']]]")" \
	"why b waits, after the settle"
assert_eq "200 [1, [], [\"b\"], []]" \
	"$(job a "[d['job']['has_downstream'], [r['id'] for r in d['upstream']['rows']], [r['id'] for r in d['downstream']['rows']], d['why']]")" \
	"a: no upstream, b downstream, no reason (waiting)"
assert_eq "200 [\"night\", [\"n1\", \"n2\", \"n3\"], [\"waiting\", \"succeeded\", \"running\"], [0, 1, 0], 2]" \
	"$(job report "[d['job']['after_batch'], [r['id'] for r in d['upstream']['rows']], [r['status'] for r in d['upstream']['rows']], [r['state'] for r in d['upstream']['rows']], d['job']['after_left']]")" \
	"report: the batch's jobs upstream"
assert_eq "200 waits for n1 (waiting) and n3 (running)" "$(job report "d['why'][0]['detail']")" "why report waits"
assert_eq "200 [\"waits for w1 (waiting), w2 (waiting), w3 (waiting) and 2 more\", 3]" \
	"$(job many "[d['why'][0]['detail'], len(d['why'][0]['waits_for'])]")" "why a job after five waits: three named"
assert_eq "200 [\"night\", [\"report\"]]" "$(job n1 "[d['job']['batch'], [r['id'] for r in d['downstream']['rows']]]")" "n1: in the batch, report downstream"
seq_a=$(sql "SELECT seq FROM kyu_jobs WHERE id = 'a'")
assert_eq "200 [\"$seq_a\", true]" "$(job b "[d['upstream']['rows'][0]['seq'], isinstance(d['upstream']['rows'][0]['seq'], str)]")" \
	"an edge's seq, as a string"

# An upstream deleted since: a seq without a row, then (settled) the
# dependent cancelled naming it.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('gone', 'lost', 'true');
     INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('orphan', 'lost', 'true', '[\"gone\"]')"
settle
seq_gone=$(sql "SELECT seq FROM kyu_jobs WHERE id = 'gone'")
sql "DELETE FROM kyu_jobs WHERE id = 'gone'"
assert_eq "200 [[[\"$seq_gone\", null, null]], \"blocked\"]" \
	"$(job orphan "[[[r['seq'], r['id'], r['status']] for r in d['upstream']['rows']], d['job']['status']]")" \
	"a deleted upstream"
settle
assert_eq "200 [\"cancelled\", \"gone\", \"kyu: upstream job gone ended deleted\"]" \
	"$(job orphan "[d['job'][k] for k in ('status', 'cancelled_by', 'error')]")" "the orphan, cancelled by its deleted upstream"

# ---- the overview: blocked per queue, and why
assert_eq "200 [true, 3, 0, 1, 0]" "$(ov "[d['workflows'], q('flow')['blocked'], q('nightly')['blocked'], q('nightly')['waiting'], q('lost')['blocked'] if any(x['queue'] == 'lost' for x in d['queues']) else 0]")" \
	"blocked jobs per queue"
assert_eq "200 [[\"blocked\"], \"3 blocked jobs; the oldest, b, waits for a (waiting)\", \"b\", [\"a\"]]" \
	"$(ov "[[w['reason'] for w in q('flow')['why']], q('flow')['why'][0]['detail'], q('flow')['why'][0]['job'], [w['id'] for w in q('flow')['why'][0]['waits_for']]]")" \
	"why flow's jobs do not move"
assert_eq "200 0" "$(ov "d['unsettled']['items']")" "no workflow change left to settle"
# A change nobody settles for five minutes: said on the queues with
# blocked jobs and on a blocked job's page.
sql "INSERT INTO kyu_jobs (id, queue, command, after) VALUES ('late', 'flow', 'true', '[\"a\"]');
     UPDATE kyu_after_todo SET at = NOW(6) - INTERVAL 5 MINUTE"
assert_eq "200 [1, true, [\"blocked\", \"unsettled\"]]" \
	"$(ov "[d['unsettled']['items'], d['unsettled']['oldest_age'] >= 300, sorted(w['reason'] for w in q('flow')['why'])]")" \
	"an unsettled change in the overview"
assert_eq "200 [\"blocked\", \"unsettled\"]" "$(job c "sorted(w['reason'] for w in d['why'])")" "an unsettled change on a blocked job's page"
settle
assert_eq "200 [\"blocked\"]" "$(ov "[w['reason'] for w in q('flow')['why']]")" "settled: only blocked"

# ---- the Jobs list of blocked jobs
assert_eq "200 b c late many report" "$(webq "$u/api/jobs?status=blocked" "' '.join(sorted(ids().split()))")" "the blocked list"
assert_eq "200 4 submitted" "$(webq "$u/api/jobs?status=blocked&queue=flow" "str(d['total']) + ' ' + d['order']")" \
	"the blocked list of a queue"

# ---- the graph
assert_eq "200 [[[\"a\", -1], [\"b\", 0], [\"c\", 1]], 2, false, \"b\"]" \
	"$(webq "$u/api/graph?id=b" "[sorted([[n['id'], n['level']] for n in d['nodes']], key=lambda x: (x[1], x[0])), len(d['edges']), d['truncated'], d['root']['id']]")" \
	"the graph of b"
assert_eq "200 [[\"b\", \"c\"], 1]" \
	"$(webq "$u/api/graph?id=c&depth=1" "[sorted(n['id'] for n in d['nodes']), d['depth']]")" \
	"the graph of c, one level"
assert_eq "200 [[\"a\", \"b\", 0], [\"b\", \"c\", 0]]" \
	"$(webq "$u/api/graph?id=c&depth=2" "sorted([[x['id'] for x in d['nodes'] if x['seq'] == e[k]][0] for k in ('up', 'down')] + [e['state']] for e in d['edges'])")" \
	"the graph's edges"
assert_eq 400 "$(webq "$u/api/graph?id=c&depth=0")" "a depth of 0"
assert_eq 404 "$(webq "$u/api/graph?id=nope")" "the graph of no job"

# ---- a batch
assert_eq "200 [{\"blocked\": 0, \"waiting\": 1, \"running\": 1, \"succeeded\": 1, \"failed\": 0, \"cancelled\": 0}, 3, false, \"n1 n2 n3\", [\"report\"], null]" \
	"$(webq "$u/api/batch?label=night" "[d['counts'], d['total'], d['total_capped'], ids(), [r['id'] for r in d['waiters']['rows']], d['next']]")" \
	"the batch night"
assert_eq "200 [0, [], []]" "$(webq "$u/api/batch?label=nothing" "[d['total'], d['rows'], d['waiters']['rows']]")" "a batch with no job"
assert_eq 400 "$(webq "$u/api/batch")" "a batch without a label"

# ---- actions settle at once (no kyud runs)
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "nothing to settle before the actions"
assert_eq "200 cancelled True" "$(post --csrf "$u/api/job/cancel?id=a" "d['done'] + ' ' + str(d['settled'])")" "cancel a"
assert_eq "a cancelled 
b cancelled a
c cancelled b
late cancelled a" "$(sql "SELECT id, status, IFNULL(cancelled_by, '') FROM kyu_jobs WHERE id IN ('a', 'b', 'c', 'late') ORDER BY id" | tr '\t' ' ')" \
	"a's dependents, cancelled by the dashboard's settle"
assert_eq "200 [\"cancelled\", \"a\", [[\"a\", \"cancelled\", 2]]]" \
	"$(job b "[d['job']['status'], d['job']['cancelled_by'], [[r['id'], r['status'], r['state']] for r in d['upstream']['rows']]]")" \
	"b's page after the cancel"
assert_eq "200 retrying True" "$(post --csrf "$u/api/job/retry?id=a" "d['done'] + ' ' + str(d['settled'])")" "retry a"
assert_eq "a waiting 
b blocked 
c blocked 
late blocked " "$(sql "SELECT id, status, IFNULL(cancelled_by, '') FROM kyu_jobs WHERE id IN ('a', 'b', 'c', 'late') ORDER BY id" | tr '\t' ' ')" \
	"re-opened by the retry's settle"
assert_eq "200 cancelled" "$(post --csrf "$u/api/job/cancel?id=c" "d['done']")" "cancel of a blocked job"
assert_eq "cancelled" "$(sql "SELECT status FROM kyu_jobs WHERE id = 'c'")" "c after its cancel"
assert_eq "200 deleted True" "$(post --csrf "$u/api/job/delete?id=c" "d['done'] + ' ' + str(d['settled'])")" "delete c"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "nothing left to settle after the actions"

# ---- bounded: a job with 10,000 dependents, in a batch
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('hub', 'fan', 'true');
     INSERT INTO kyu_jobs (id, queue, command, after, batch) SELECT CONCAT('dep-', LPAD(seq, 5, '0')), 'fan', 'true',
       '[\"hub\"]', 'fanout' FROM seq_1_to_10000"
assert_eq "200 [50, 10000, false, 9950, \"dep-00001\", \"dep-00050\"]" \
	"$(job hub "[len(d['downstream']['rows']), d['downstream']['total'], d['downstream']['total_capped'], d['downstream']['more'], d['downstream']['rows'][0]['id'], d['downstream']['rows'][-1]['id']]")" \
	"a page of 10,000 dependents, and their count"
assert_eq "200 [200, true, 199]" "$(webq "$u/api/graph?id=hub" "[len(d['nodes']), d['truncated'], len(d['edges'])]")" \
	"the graph of the hub: at most 200 jobs"
assert_eq "200 [10000, 50, \"dep-00050\"]" "$(webq "$u/api/batch?label=fanout" "[d['counts']['blocked'], len(d['rows']), d['rows'][-1]['id']]")" \
	"the batch fanout, first page"
next=$(webq "$u/api/batch?label=fanout" "d['next']" | cut -d' ' -f2)
assert_eq "200 dep-00051 dep-00100" "$(webq "$u/api/batch?label=fanout&after=$next" "d['rows'][0]['id'] + ' ' + d['rows'][-1]['id']")" \
	"the batch fanout, second page"
assert_eq "200 > 1000" "$(ov "'> 1000' if q('fan')['blocked'] > d['count_cap'] else q('fan')['blocked']")" "blocked jobs over the cap"

# ---- a schema without workflows (older than version 5): no blocked
# count, no edges on a job's page, no graph
sql "RENAME TABLE kyu_after TO kyu_after_away"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_after_away TO kyu_after' 2>/dev/null || true")
assert_eq "200 [false, null, 0]" "$(ov "[d['workflows'], d['unsettled'], q('fan')['blocked'] if q('fan') else 0]")" \
	"the overview without workflows"
assert_eq "200 [false, false, false]" "$(job a "['upstream' in d, 'why' in d, 'after' in d['job']]")" "a job's page without workflows"
assert_eq 404 "$(webq "$u/api/graph?id=a")" "a graph without workflows"
assert_eq 404 "$(webq "$u/api/batch?label=night")" "a batch without workflows"
sql "RENAME TABLE kyu_after_away TO kyu_after"

# ---- a settle that fails: the action is done, the failure logged
sql "DROP PROCEDURE kyu_settle"
assert_eq "200 cancelled False" "$(post --csrf "$u/api/job/cancel?id=hub" "d['done'] + ' ' + str(d['settled'])")" "cancel without kyu_settle"
assert_eq cancelled "$(sql "SELECT status FROM kyu_jobs WHERE id = 'hub'")" "hub after the cancel"
grep -q "cancel job 'hub': done, but settling its dependents (CALL kyu_settle(1000)) failed" "$WEB_LOG" ||
	fail "the failed settle is not logged: $(cat "$WEB_LOG")"
stop_web
echo ok
