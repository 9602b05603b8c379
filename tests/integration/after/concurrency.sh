#!/usr/bin/env bash
# Workflows under concurrency: two kyud (3 workers each) on one table, and
# a graph whose 200 upstreams end at the same instant, so that their ends
# are recorded and settled by six workers at once, on the same dependents:
#
#   u1..u200   held at a gate (a shared flock on $T_DIR/gate while the test
#              holds it exclusive), all released together
#   fin        after u1..u200 (policy succeeded)
#   fin2       after u1..u200 (policy finished)
#   m1..m20    m<k> after u<10k-9>..u<10k>: fan-ins overlapping fin's
#   o1..o100   after fin (a fan-out)
#   z          after o1..o100, fin2 and m1..m20
#   t1..t10    a chain after fin
#   c<i>s1..s25  four chains that run while the gate is held
#   r, r1..r50 a fan-out that runs while the gate is held
#
# Every job runs once (attempts 1, its id once in $T_DIR/ran), none before
# the end of any of its upstreams (started_at against finished_at, by the
# database clock, over every edge of kyu_after), nothing stays blocked,
# kyu_after_todo is empty at the end, every edge counted succeeded and every
# dependent's counters at 0, and both daemons ran jobs.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/after.sh"

# 120 slots per daemon: the 200 held upstreams need both.
common=(kyud.workers=3 kyud.slots=40 kyud.lease=20)
start_kyud "${common[@]}"
start_extra_kyud second "${common[@]}"

# The gate: held exclusive by this shell (opened after the daemons started,
# so that no job inherits it); each upstream waits for a shared lock on it.
exec {gate}>"$T_DIR/gate"
flock -x "$gate"

rec="echo \$KYU_JOB_ID >> $T_DIR/ran"
held="flock -s $T_DIR/gate true && $rec"
# submit: the statements on stdin in one transaction, tried again when the
# server chose it as a deadlock's victim (an INSERT with after reads its
# upstreams with shared locks while kyu_settle moves them: the rollback is
# whole, so trying again is safe, as for any InnoDB transaction).
submit() {
	local sql_text try
	sql_text=$(cat)
	for try in 1 2 3 4 5; do
		{ echo "START TRANSACTION;"; echo "$sql_text"; echo "COMMIT;"; } |
			root_sql -D "$T_DB" 2>"$T_DIR/submit.err" && return 0
		grep -q "ERROR 1213" "$T_DIR/submit.err" || fail "submit: $(cat "$T_DIR/submit.err")"
		echo "submit: deadlock, try $try: trying again"
	done
	fail "submit: five deadlocks in a row"
}
# ids PREFIX FROM TO: a JSON array of job ids, made by the server.
ids() { echo "(SELECT JSON_ARRAYAGG(CONCAT('$1', seq)) FROM seq_$2_to_$3)"; }

# ---- work that runs while the gate is held: four chains, a fan-out.
for c in 1 2 3 4; do
	{
		echo "INSERT INTO kyu_jobs (id, command) VALUES ('c${c}s1', '$rec');"
		for s in $(seq 2 25); do
			echo "INSERT INTO kyu_jobs (id, command, after) VALUES ('c${c}s$s', '$rec', '[\"c${c}s$((s - 1))\"]');"
		done
	} | submit
done
sql "INSERT INTO kyu_jobs (id, command) VALUES ('r', 'sleep 0.5; $rec');
     INSERT INTO kyu_jobs (id, command, after) SELECT CONCAT('r', seq), '$rec', '[\"r\"]' FROM seq_1_to_50"

# ---- the held upstreams and what waits for them.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('u', seq), '$held' FROM seq_1_to_200"
sql "INSERT INTO kyu_jobs (id, command, after) SELECT 'fin', '$rec', $(ids u 1 200);
     INSERT INTO kyu_jobs (id, command, after, after_policy) SELECT 'fin2', '$rec', $(ids u 1 200), 'finished'"
for k in $(seq 1 20); do
	echo "INSERT INTO kyu_jobs (id, command, after) SELECT 'm$k', '$rec', $(ids u $((10 * k - 9)) $((10 * k)));"
done | submit
sql "INSERT INTO kyu_jobs (id, command, after) SELECT CONCAT('o', seq), '$rec', '[\"fin\"]' FROM seq_1_to_100"
sql "INSERT INTO kyu_jobs (id, command, after)
     SELECT 'z', '$rec', JSON_MERGE_PRESERVE($(ids o 1 100), '[\"fin2\"]', $(ids m 1 20))"
sql "INSERT INTO kyu_jobs (id, command, after) VALUES ('t1', '$rec', '[\"fin\"]')"
for s in $(seq 2 10); do
	echo "INSERT INTO kyu_jobs (id, command, after) VALUES ('t$s', '$rec', '[\"t$((s - 1))\"]');"
done | submit
total=$(sql "SELECT COUNT(*) FROM kyu_jobs")
assert_eq 484 "$total" "jobs inserted"

# All 200 held upstreams started (a claimed row is running before its
# command starts: wait for the processes too), and nothing that waits for
# them has run.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'u%' AND status = 'running'" 200 120
at_gate() { [ "$(pgrep -fc -- "^flock -s $T_DIR/gate true")" -ge 200 ]; }
wait_until 60 "200 upstreams waiting at the gate" at_gate
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id REGEXP '^(fin|fin2|m[0-9]+|o[0-9]+|z|t[0-9]+)$'
                    AND status <> 'blocked'")" "dependents of the held upstreams not blocked before the gate opened"

# ---- open the gate: 200 ends at once.
flock -u "$gate"
exec {gate}>&-
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" "$total" 60
stop_extra_kyuds
stop_kyud

echo "the 200 upstreams ended within $(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, MIN(finished_at), MAX(finished_at)) / 1000)
	FROM kyu_jobs WHERE id LIKE 'u%'") ms (database clock); fin started $(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND,
	(SELECT MAX(finished_at) FROM kyu_jobs WHERE id LIKE 'u%'), started_at) / 1000) FROM kyu_jobs WHERE id = 'fin'") ms after the last"
assert_each_ran_once "$total" "$T_DIR/ran"
assert_eq "" "$(early_starts)" "dependents that started before their upstream finished (started_at, finished_at)"
assert_eq "$(sql "SELECT SUM(JSON_LENGTH(after)) FROM kyu_jobs")" "$(sql "SELECT COUNT(*) FROM kyu_after")" \
	"edges in kyu_after (one per id of every after)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after WHERE state <> 1")" "edges not counted as succeeded"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left in kyu_after_todo"
assert_eq "" "$(sql "SELECT CONCAT(id, ':', IFNULL(after_left, 'NULL'), '/', IFNULL(after_bad, 'NULL')) FROM kyu_jobs
                    WHERE after IS NOT NULL AND NOT (after_left <=> 0 AND after_bad <=> 0) LIMIT 10" | tr '\n' ' ')" \
	"dependents whose counters are not 0 (id:after_left/after_bad)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs AS u WHERE has_downstream = 0
                    AND EXISTS (SELECT 1 FROM kyu_after AS e WHERE e.up_seq = u.seq)")" \
	"upstreams not marked has_downstream"
a=$(grep -c 'job [a-z0-9]* attempt 1 started' "$KYUD_LOG" || true)
b=$(grep -c 'job [a-z0-9]* attempt 1 started' "$T_DIR/second.log" || true)
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "jobs ran on one daemon only (first $a, second $b)"
assert_eq "$total" "$((a + b))" "attempts started by both daemons together"
if grep -hE 'settling workflows|dropping' "$KYUD_LOG" "$T_DIR/second.log" | grep . >/dev/null; then
	fail "a settle or a result failed: $(grep -hE 'settling workflows|dropping' "$KYUD_LOG" "$T_DIR/second.log" | sed -n 1,3p)"
fi
grep -h 'exiting:' "$KYUD_LOG" "$T_DIR/second.log"
