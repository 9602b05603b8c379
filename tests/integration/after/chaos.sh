#!/usr/bin/env bash
# Workflows under faults: a graph of 1,000 jobs run by two kyud (3 workers
# each) while workers are SIGKILLed and the database restarts.
#
# The graph, inserted in one transaction (tests/chaos/job.sh jobs: they
# leave start and end marks, and sleep 0-300 ms):
#   r1..r10     roots
#   f1..f300    fan-outs: f<i> after r<(i-1)%10+1> (30 per root)
#   g1..g30     fan-ins: g<k> after the 10 f<i> with i % 30 = k % 30
#   h           a fan-in after all 300 f
#   c<n>s<k>    20 chains of 20 steps, c<n>s1 after g<n>
#   o1..o258    a fan-out after h
#   z           after the 20 chain ends, h and g21..g30
# A loop SIGKILLs a random worker every 1-2.5 s until 60 % of the jobs are
# done (at most WF_KILLS kills); at about 40 % the database is stopped and
# started again (a private server). Then:
#   - every job succeeded, nothing lost, stuck (blocked included), run twice
#     at once or still running, no crash (tests/chaos/check.py);
#   - no dependent started before the end of its upstream's last attempt:
#     started_at against finished_at over every edge (database clock), and
#     every start mark of a dependent against the end mark of the attempt
#     of its upstream that counted (host clock);
#   - a job ran more than once only when an earlier run was cut short by
#     a fault: its worker was killed (its pid is the run's parent), it was
#     fenced ("lease not renewed"), or it started within a lease of the
#     database outage (a claim or result whose reply was lost);
#   - kyu_after_todo is empty, every edge counted succeeded, every
#     dependent's counters are at 0.
. "$KYU_SRC/tests/lib.sh"
BUDGET=${BUDGET:-540}
. "$KYU_SRC/tests/chaos/chaos.sh"

WORKER_DEATHS_OK=1 # the ones we kill

# Edges whose dependent started (started_at) before its upstream finished
# (finished_at), by the database clock: "DOWN after UP: N ms early; ...".
early_starts() {
	sql "SELECT CONCAT(d.id, ' after ', u.id, ': ', IFNULL(ROUND(TIMESTAMPDIFF(MICROSECOND, d.started_at,
	            u.finished_at) / 1000, 1), '?'), ' ms early') FROM kyu_after AS e
	     JOIN kyu_jobs AS d ON d.seq = e.down_seq JOIN kyu_jobs AS u ON u.seq = e.up_seq
	     WHERE d.started_at IS NULL OR u.finished_at IS NULL OR d.started_at < u.finished_at LIMIT 10" | tr '\n' ';'
}
lease=10 margin=3
WF_KILLS=${WF_KILLS:-10}
chaos_private_db
common=(kyud.workers=3 kyud.slots=8 kyud.lease="$lease" kyud.fence_margin="$margin" database.connect_timeout=2
	job.max_attempts=50 job.backoff_base=1 job.backoff_cap=2 kyud.log_level=info)
# Blocked rows are not finished either.
chaos_unfinished() {
	sql "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running', 'blocked')"
}
chaos_watch_start
d_start a "${common[@]}"
d_start b "${common[@]}"
say "kyud a (workers $(d_workers a)) and b (workers $(d_workers b)) ready"

# ---- the graph
argv() { echo "JSON_ARRAY('/bin/bash', '$CHAOS_JOB', '$T_DIR', '0', '$1')"; }
{
	echo "START TRANSACTION;"
	echo "INSERT INTO kyu_jobs (id, argv) SELECT CONCAT('r', seq), $(argv 300) FROM seq_1_to_10;"
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('f', seq), $(argv 200),
	        JSON_ARRAY(CONCAT('r', (seq - 1) % 10 + 1)) FROM seq_1_to_300;"
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('g', g.seq), $(argv 100),
	        (SELECT JSON_ARRAYAGG(CONCAT('f', f.seq)) FROM seq_1_to_300 AS f WHERE f.seq % 30 = g.seq % 30)
	      FROM seq_1_to_30 AS g;"
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT 'h', $(argv 300),
	        (SELECT JSON_ARRAYAGG(CONCAT('f', seq)) FROM seq_1_to_300);"
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('c', seq, 's1'), $(argv 100),
	        JSON_ARRAY(CONCAT('g', seq)) FROM seq_1_to_20;"
	for k in $(seq 2 20); do
		echo "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('c', seq, 's$k'), $(argv 100),
		        JSON_ARRAY(CONCAT('c', seq, 's$((k - 1))')) FROM seq_1_to_20;"
	done
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT CONCAT('o', seq), $(argv 300), '[\"h\"]' FROM seq_1_to_258;"
	echo "INSERT INTO kyu_jobs (id, argv, after) SELECT 'z', $(argv 0),
	        JSON_MERGE_PRESERVE((SELECT JSON_ARRAYAGG(CONCAT('c', seq, 's20')) FROM seq_1_to_20), '[\"h\"]',
	          (SELECT JSON_ARRAYAGG(CONCAT('g', seq)) FROM seq_21_to_30));"
	echo "COMMIT;"
} | root_sql -D "$T_DB"
N=$(sql "SELECT COUNT(*) FROM kyu_jobs")
assert_eq 1000 "$N" "jobs in the graph"
sql "SELECT id FROM kyu_jobs" >"$T_DIR/ids"
say "graph of $N jobs, $(sql "SELECT COUNT(*) FROM kyu_after") edges, inserted"

done_count() { sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2>/dev/null || echo 0; }

# ---- the kill loop: "K EPOCH DAEMON WORKER_PID" lines in $T_DIR/kills.
: >"$T_DIR/kills"
(
	trap - EXIT
	set +e
	sups=("${D_PID[a]}" "${D_PID[b]}") names=(a b)
	n=0
	while [ ! -e "$T_DIR/stop-kills" ] && [ "$n" -lt "$WF_KILLS" ]; do
		sleep "$((1 + RANDOM % 2)).$((RANDOM % 10))"
		i=$((RANDOM % 2))
		ws=()
		{ read -r -a ws <"/proc/${sups[$i]}/task/${sups[$i]}/children"; } 2>/dev/null
		if [ "${#ws[@]}" -gt 0 ]; then
			w=${ws[RANDOM % ${#ws[@]}]}
			kill -KILL "$w" 2>/dev/null && echo "K $(now) ${names[$i]} $w" >>"$T_DIR/kills" && n=$((n + 1))
		fi
	done
) &
CHAOS_BG+=($!)
kill_loop=$!

# ---- the database restart at ~40 %, the end of the kills at 60 %.
restarted=0 t_down=0 t_up=0
deadline=$((SECONDS + 240))
while [ "$SECONDS" -lt "$deadline" ]; do
	d=$(done_count)
	if [ "$restarted" = 0 ] && [ "$d" -ge $((N * 4 / 10)) ]; then
		t_down=$(now)
		private_db_stop
		say "database stopped ($d jobs done); down for 2 s"
		sleep 2
		kill -0 "${D_PID[a]}" 2>/dev/null || fail "kyud a died while the database was down"
		kill -0 "${D_PID[b]}" 2>/dev/null || fail "kyud b died while the database was down"
		private_db_start
		t_up=$(now)
		restarted=1
		say "database back after $(awk -v a="$t_down" -v b="$t_up" 'BEGIN { printf "%.1f", b - a }') s"
	fi
	[ "$d" -ge $((N * 6 / 10)) ] && [ "$restarted" = 1 ] && break
	sleep 0.5
done
touch "$T_DIR/stop-kills"
wait "$kill_loop" 2>/dev/null || true
bg_done "$kill_loop"
kills=$(wc -l <"$T_DIR/kills")
say "kills over: $kills worker(s) SIGKILLed; $(done_count) of $N done"
[ "$restarted" = 1 ] || fail "the graph did not get to 40 % within 240 s: the database was not restarted"

finished=0
chaos_wait_finished 60 && finished=1
say "all finished: $finished"
kill -0 "${D_PID[a]}" 2>/dev/null || fail "kyud a died"
kill -0 "${D_PID[b]}" 2>/dev/null || fail "kyud b died"
# Items are settled after the last end that leaves one.
wait_for "SELECT COUNT(*) FROM kyu_after_todo" 0 60
d_term a 60
d_term b 60
# Orphans of killed workers run on by themselves, 300 ms at most.
sleep 1
chaos_check --worker-kills "$kills"
[ "$finished" = 1 ] || fail "not every job finished (stalled, or the budget was spent)"

# ---- the workflow's own verdict (the marks first: they say whether an
# early started_at was an early run)
assert_eq "$(sql "SELECT SUM(JSON_LENGTH(after)) FROM kyu_jobs")" "$(sql "SELECT COUNT(*) FROM kyu_after")" \
	"edges in kyu_after"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after WHERE state <> 1")" "edges not counted as succeeded"
assert_eq "" "$(sql "SELECT CONCAT(id, ':', IFNULL(after_left, 'NULL'), '/', IFNULL(after_bad, 'NULL')) FROM kyu_jobs
                    WHERE after IS NOT NULL AND NOT (after_left <=> 0 AND after_bad <=> 0) LIMIT 10" | tr '\n' ' ')" \
	"dependents whose counters are not 0 (id:after_left/after_bad)"
sql "SELECT u.id, d.id FROM kyu_after AS e JOIN kyu_jobs AS u ON u.seq = e.up_seq
     JOIN kyu_jobs AS d ON d.seq = e.down_seq" >"$T_DIR/edges.tsv"
sed -n 's/.*job \([^:]*\): lease not renewed.*/\1/p' "$T_DIR"/[ab].log >"$T_DIR/fenced"
marks_rc=0
python3 - "$CHAOS_MARKS" "$T_DIR/table.tsv" "$T_DIR/edges.tsv" "$T_DIR/kills" "$T_DIR/fenced" \
	"$t_down" "$t_up" "$lease" <<-'PY' || marks_rc=$?
	import sys
	marks, table, edges, kills, fenced, t_down, t_up, lease = sys.argv[1:]
	t_down, t_up, lease = float(t_down), float(t_up), float(lease)
	starts, ends = {}, {}
	for line in open(marks):
	    w = line.split()
	    if len(w) < 6:
	        continue
	    rec = (int(w[2]), float(w[3]), int(w[5]))  # attempt, time, parent (the worker)
	    if w[0] == "S":
	        starts.setdefault(w[1], []).append(rec)
	    elif w[0] == "E":
	        ends.setdefault(w[1], []).append(rec)
	f = open(table)
	head = f.readline().rstrip("\n").split("\t")
	attempts = {}
	for line in f:
	    r = dict(zip(head, line.rstrip("\n").split("\t")))
	    attempts[r["id"]] = int(r["attempts"])
	killed = {int(l.split()[3]) for l in open(kills) if l.strip()}
	fenced_ids = {l.strip() for l in open(fenced) if l.strip()}
	bad = []
	# The end that counted: the end mark of the attempt the row records.
	final_end = {}
	for i, lst in ends.items():
	    ts = [t for a, t, _ in lst if a == attempts.get(i)]
	    if ts:
	        final_end[i] = max(ts)
	n_edges = 0
	for line in open(edges):
	    up, down = line.split()
	    n_edges += 1
	    if up not in final_end:
	        bad.append(f"{up}: no end mark of its attempt {attempts.get(up)}")
	        continue
	    for a, t, _ in starts.get(down, []):
	        if t < final_end[up]:
	            bad.append(f"{down} attempt {a} started {final_end[up] - t:.3f} s before {up} ended")
	reruns = {"killed": 0, "fenced": 0, "outage": 0}
	for i, lst in starts.items():
	    lst.sort(key=lambda x: x[1])
	    for a, t, ppid in lst[:-1]:
	        if ppid in killed:
	            reruns["killed"] += 1
	        elif i in fenced_ids:
	            reruns["fenced"] += 1
	        elif t_down - lease <= t <= t_up + lease:
	            reruns["outage"] += 1
	        else:
	            bad.append(f"{i}: attempt {a} (worker {ppid}, at {t:.3f}) was run again, "
	                       "though its worker was not killed, it was not fenced and it was not near the outage")
	print(f"order: {n_edges} edges checked against the marks; runs cut short and run again: "
	      f"{reruns['killed']} (worker killed), {reruns['fenced']} (fenced), {reruns['outage']} (database outage)")
	for b in bad[:20]:
	    print("PROBLEM:", b)
	sys.exit(1 if bad else 0)
	PY
[ "$marks_rc" = 0 ] || fail "workflow order or re-runs by the marks (above)"
assert_eq "" "$(early_starts)" "dependents that started before their upstream finished (started_at, finished_at)"
