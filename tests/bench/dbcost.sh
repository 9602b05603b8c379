#!/usr/bin/env bash
# dbcost: where mariadbd's work goes per plain job, by statement kind (issue 40).
# Never a pass/fail test.
#
#   tests/bench/dbcost.sh                      N=5000, WORKERS="1 2", REPEAT=3
#   N=2000 WORKERS=1 REPEAT=1 tests/bench/dbcost.sh       quick (~1 min)
#
# Its own mariadbd (scripts/sandbox-db, performance_schema on, every InnoDB
# monitor counter enabled), sql/schema.sql loaded.  Each run:
#   insert  N /bin/true argv jobs, multi-row INSERTs of 1,000 (as run.sh fills);
#   run     kyud (WORKERS workers, retention = 0 and cleanup_every = 20, so that its retention DELETE
#           runs often and deletes most of what has ended) until no
#           job is waiting or running; then kyud stops;
#   purge   no client work: until InnoDB's history list is empty (PURGE_WAIT s
#           at most), the purge threads removing what the phases delete-marked.
# Per phase: mariadbd CPU (/proc/PID/stat, ticks), SHOW GLOBAL STATUS deltas
# (Handler_*, Innodb_rows_*, buffer pool write requests, redo bytes) and
# information_schema.INNODB_METRICS deltas (page splits, purge, undo).  Per
# statement kind (kyud's and the fill's statements, told apart by their text,
# from performance_schema.events_statements_summary_by_digest of schema kyu;
# this script's own queries run with no default schema and are left out):
# count, server time (SUM_TIMER_WAIT, triggers included), rows examined and
# rows affected, per job.  Then the same for the floor (tests/bench/floor.c,
# seed 000's table, FLOOR_PROCS processes, batches of 100, inflight 4).
#
# Counts (rows, statements, redo bytes, page writes) do not depend on the
# machine's load; times and CPU do (report medians of the repeats).
#
# Environment: N [5000]  WORKERS ["1 2"]  REPEAT [3]  PURGE_WAIT [120]
#   FLOOR_PROCS ["1 2"]  BUILD_DIR [<repo>/build]  KYUD [$BUILD_DIR/kyud]
#   OUT (a directory for the raw files) [a temporary one, removed unless KEEP=1]
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
N=${N:-5000}
WORKERS=${WORKERS:-1 2}
REPEAT=${REPEAT:-3}
PURGE_WAIT=${PURGE_WAIT:-120}
FLOOR_PROCS=${FLOOR_PROCS:-1 2}
BUILD_DIR=${BUILD_DIR:-$root/build}
KYUD=${KYUD:-$BUILD_DIR/kyud}
FLOOR=$BUILD_DIR/tests/bench/floor

note() { echo "dbcost: $*" >&2; }
[ -x "$KYUD" ] || { note "no kyud at $KYUD (build first)"; exit 1; }
[ -x "$FLOOR" ] || { note "no floor program at $FLOOR (cmake --build build --target bench_floor)"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/kyu-dbcost.XXXXXX")
OUT=${OUT:-$tmp/out}
mkdir -p "$OUT"
kyud_pid=
cleanup() {
	[ -z "$kyud_pid" ] || kill -KILL "$kyud_pid" 2>/dev/null || true
	"$root/scripts/sandbox-db" stop "$tmp/db" >/dev/null 2>&1 || true
	if [ "${KEEP:-0}" = 1 ]; then note "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

port=3520
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do port=$((port + 1)); done
"$root/scripts/sandbox-db" start "$tmp/db" "$port" --performance-schema=ON \
	--performance-schema-events-statements-history-long-size=100000 \
	--performance-schema-consumer-events-statements-current=ON \
	--performance-schema-consumer-events-statements-history-long=ON >/dev/null
sock=$tmp/db/mysqld.sock
db_pid=$(cat "$tmp/db/mysqld.pid")
sql() { mariadb --no-defaults -ukyu -pkyu --socket="$sock" -N -B kyu "$@"; }
# No default schema: these statements stay out of the kyu digests.
adm() { mariadb --no-defaults -uroot --socket="$sock" -N -B "$@"; }
sql <"$root/sql/schema.sql"
adm -e "SET GLOBAL innodb_monitor_enable = 'all'"
clk=$(getconf CLK_TCK)
ticks() { awk '{print $14+$15}' "/proc/$db_pid/stat"; }

# snap FILE: every global status and InnoDB metric as "name value" lines,
# and mariadbd's CPU ticks as "cpu_ticks".
snap() {
	{
		adm -e "SHOW GLOBAL STATUS" | awk '$2 ~ /^[0-9]+$/ {print "s." $1, $2}'
		adm -e "SELECT NAME, COUNT FROM information_schema.INNODB_METRICS" | awk '{print "m." $1, $2}'
		echo "cpu_ticks $(ticks)"
	} >"$1"
}
# delta A B: "name delta" for every counter that moved
delta() { awk 'NR == FNR {a[$1] = $2; next} ($2 - a[$1]) != 0 {print $1, $2 - a[$1]}' "$1" "$2"; }
history_len() { adm -e "SELECT COUNT FROM information_schema.INNODB_METRICS WHERE NAME = 'trx_rseg_history_len'"; }
wait_purge() {
	for _ in $(seq 1 $((PURGE_WAIT * 2))); do
		[ "$(history_len)" -le 0 ] && return 0
		sleep 0.5
	done
	note "history list still $(history_len) after ${PURGE_WAIT}s"
}
# One line per top-level statement of schema kyu (a multi-statement round trip
# is one event per statement; those run by triggers and routines are nested
# and left out, their work counted in their statement's): count 1, time in
# ps, rows examined, affected, sent, event name and text.
digests() { # digests FILE
	adm -e "SELECT 1, TIMER_WAIT, ROWS_EXAMINED, ROWS_AFFECTED, ROWS_SENT,
	               CONCAT(EVENT_NAME, ' ', LEFT(REPLACE(REPLACE(SQL_TEXT, '\t', ' '), '\n', ' '), 300))
	        FROM performance_schema.events_statements_history_long
	        WHERE CURRENT_SCHEMA = 'kyu' AND (NESTING_EVENT_TYPE IS NULL OR NESTING_EVENT_TYPE <> 'STATEMENT')" >"$1"
}
fill() {
	awk -v n="$N" 'BEGIN {
		for (i = 0; i < n; i++) {
			if (i % 1000 == 0) printf "%sINSERT INTO kyu_jobs (argv) VALUES ", (i ? ";\n" : "")
			else printf ","
			printf "(%s)", "'"'"'[\"/bin/true\"]'"'"'"
		}
		print ";"
	}' | sql
}
write_conf() { # write_conf WORKERS FILE
	{
		printf '[database]\nsocket = %s\nuser = kyu\npassword = kyu\ndatabase = kyu\n' "$sock"
		printf '[kyud]\nworkers = %s\nlisten =\nwake_binlog = off\nwake_poll = 0\n' "$1"
		printf 'retention = 0\nretention_failed = 0\ncleanup_every = 20\n'
		[ "$(id -u)" != 0 ] || printf '[queue.*]\nuser = root\n'
	} >"$2"
	chmod 0600 "$2"
}

# Statement kinds, by the digest's text (what kyud sends: src/worker/store*.c).
classify='
function kind(t) {
	if (t ~ /^statement\/sql\/insert INSERT INTO kyu_jobs/) return "insert"
	if (t ~ /^statement\/sql\/compound_sql BEGIN NOT ATOMIC DECLARE q, p/) return "claim_directory"
	if (t ~ /^statement\/sql\/update UPDATE IGNORE kyu_jobs/) return "claim_mark"
	if (t ~ /^statement\/sql\/select SELECT j\.seq/) return "claim_select"
	if (t ~ /^statement\/sql\/update UPDATE kyu_jobs SET lease_until = NULL, exit_code = 0/) return "finish"
	if (t ~ /^statement\/sql\/insert_select INSERT INTO kyu_minutes/) return "finish_minutes"
	if (t ~ /^statement\/sql\/select SELECT \(EXISTS \(SELECT 1 FROM kyu_after_todo/) return "after_check"
	if (t ~ /^statement\/sql\/delete DELETE FROM kyu_jobs/) return "retention_delete"
	if (t ~ /kyu_cleanup/) return "cleanup_other"
	return "other"
}
function floorkind(t) {
	if (t ~ /^statement\/sql\/insert_select INSERT INTO floor_queue/) return "insert"
	if (t ~ /^statement\/sql\/update UPDATE floor_queue .* LIMIT/) return "claim_mark"
	if (t ~ /^statement\/sql\/select SELECT id, data FROM floor_queue/) return "claim_select"
	if (t ~ /^statement\/sql\/(update|delete) (UPDATE|DELETE FROM) floor_queue/) return "finish"
	return "other"
}'

runs=$OUT/runs.tsv # what phase w rep n key value
: >"$runs"
for w in $WORKERS; do
	for rep in $(seq 1 "$REPEAT"); do
		sql -e "TRUNCATE TABLE kyu_jobs"
		wait_purge
		adm -e "TRUNCATE TABLE performance_schema.events_statements_history_long"
		p=$OUT/kyud-w$w-r$rep
		snap "$p.0"
		fill
		snap "$p.1"
		write_conf "$w" "$tmp/kyu.ini"
		"$KYUD" -c "$tmp/kyu.ini" 2>"$p.log" &
		kyud_pid=$!
		while :; do
			sleep 0.5
			left=$(adm -e "SELECT COUNT(*) FROM kyu.kyu_jobs WHERE status IN ('waiting', 'running')")
			[ "$left" = 0 ] && break
			kill -0 "$kyud_pid" 2>/dev/null || { note "kyud exited: $(tail -n 3 "$p.log")"; exit 1; }
		done
		kill -TERM "$kyud_pid"
		wait "$kyud_pid" || true
		kyud_pid=
		snap "$p.2"
		wait_purge
		snap "$p.3"
		digests "$p.digests"
		deleted=$(awk '$1 == "s.Handler_delete" {print $2}' <(delta "$p.1" "$p.2"))
		for ph in 1:insert 2:run 3:purge; do
			delta "$p.$((${ph%%:*} - 1))" "$p.${ph%%:*}" |
				awk -v w="$w" -v r="$rep" -v n="$N" -v ph="${ph#*:}" '{print "kyud", ph, w, r, n, $1, $2}' >>"$runs"
		done
		awk -F'\t' -v w="$w" -v r="$rep" -v n="$N" "$classify"'
			{k = kind($6); c[k] += $1; t[k] += $2; e[k] += $3; a[k] += $4; s[k] += $5}
			END {for (k in c) print "kyud", "stmt:" k, w, r, n, c[k], t[k], e[k], a[k], s[k]}' \
			"$p.digests" >>"$runs"
		note "kyud workers=$w rep=$rep: done ($N jobs, $deleted rows deleted by the retention DELETE)"
	done
done

for fp in $FLOOR_PROCS; do
	for rep in $(seq 1 "$REPEAT"); do
		wait_purge
		p=$OUT/floor-p$fp-r$rep
		fl=(env BENCH_DB_PID="$db_pid" KYU_DB_SOCKET="$sock" "$FLOOR" -n "$N" -p "$fp" -b 100 -k 4)
		adm -e "TRUNCATE TABLE performance_schema.events_statements_history_long"
		snap "$p.0"
		"${fl[@]}" --fill-only
		snap "$p.1"
		line=$("${fl[@]}" --no-fill 2>&1)
		echo "$line" >"$p.line"
		snap "$p.2"
		wait_purge
		snap "$p.3"
		digests "$p.digests"
		for ph in 1:insert 2:run 3:purge; do
			delta "$p.$((${ph%%:*} - 1))" "$p.${ph%%:*}" |
				awk -v w="$fp" -v r="$rep" -v n="$N" -v ph="${ph#*:}" '{print "floor", ph, w, r, n, $1, $2}' >>"$runs"
		done
		echo "floor run_line $fp $rep $N ${line// /,}" >>"$runs"
		awk -F'\t' -v w="$fp" -v r="$rep" -v n="$N" "$classify"'
			{k = floorkind($6); c[k] += $1; t[k] += $2; e[k] += $3; a[k] += $4; s[k] += $5}
			END {for (k in c) print "floor", "stmt:" k, w, r, n, c[k], t[k], e[k], a[k], s[k]}' \
			"$p.digests" >>"$runs"
		note "floor procs=$fp rep=$rep: $line"
	done
done

# --- report: medians over the repeats, per job ---------------------------------------
python3 - "$runs" "$clk" <<'PY'
import sys, statistics as st
from collections import defaultdict
runs, clk = sys.argv[1], int(sys.argv[2])
ph = defaultdict(lambda: defaultdict(dict))       # (who,w) -> phase -> rep -> {key: val}
stm = defaultdict(lambda: defaultdict(dict))      # (who,w) -> kind -> rep -> (c,t,e,a,s)
floor_line = defaultdict(dict)
njobs = {}
for line in open(runs):
    f = line.split()
    who, what, w, rep, n = f[0], f[1], f[2], f[3], int(f[4])
    if what.startswith('stmt:'):
        stm[(who, w)][what[5:]][rep] = tuple(float(x) for x in f[5:10]) + (n,)
    elif who == 'floor' and what == 'run_line':
        floor_line[w][rep] = dict(kv.split('=', 1) for kv in f[5].split(',') if '=' in kv)
    else:
        ph[(who, w)][what].setdefault(rep, {})[f[5]] = float(f[6])
        njobs[(who, w)] = n
def med(v):
    v = [x for x in v if x is not None]
    return st.median(v) if v else float('nan')
keys = [('cpu_ticks', 'db CPU us'), ('s.Questions', 'statements'),
        ('s.Handler_write', 'Handler_write'), ('s.Handler_update', 'Handler_update'),
        ('s.Handler_delete', 'Handler_delete'),
        ('s.Handler_read_key', 'Handler_read_key'), ('s.Handler_read_next', 'Handler_read_next'),
        ('s.Handler_read_rnd_next', 'Handler_read_rnd_next'),
        ('s.Innodb_buffer_pool_write_requests', 'bp write requests'),
        ('s.Innodb_os_log_written', 'redo bytes'),
        ('m.index_page_splits', 'index page splits'),
        ('m.purge_del_mark_records', 'purge del-marked recs'),
        ('m.purge_upd_exist_or_extern_records', 'purge upd recs'),
        ('m.purge_undo_log_pages', 'purge undo pages'),
        ('m.trx_undo_slots_used', 'undo slots used')]
for (who, w) in sorted(ph):
    phases = ph[(who, w)]
    print(f"\n{who} ({'workers' if who == 'kyud' else 'procs'}={w}): per job, medians of {len(next(iter(phases.values())))} runs")
    print(f"{'counter':24s}" + ''.join(f"{p:>12s}" for p in phases))
    for k, label in keys:
        vals = []
        for p in phases:
            per = []
            for rep, d in phases[p].items():
                x = d.get(k, 0.0)
                if k == 'cpu_ticks':
                    x = x * 1e6 / clk
                per.append(x)
            vals.append(med(per))
        NN = njobs[(who, w)]
        print(f"{label:24s}" + ''.join(f"{v / NN:12.2f}" for v in vals))
    if who == 'floor':
        fl = floor_line[w]
        for k in ('jobs_per_s', 'db_cpu_ms_per_job', 'box_cpu_ms_per_job', 'q_per_job'):
            print(f"  run: {k} = median {med([float(d[k]) for d in fl.values() if k in d]):.3f}"
                  f" ({', '.join(d.get(k, '-') for d in fl.values())})")
    print(f"{'statement kind':18s}{'count/job':>10s}{'server_us/job':>14s}{'rows_exam/job':>14s}"
          f"{'rows_aff/job':>13s}{'rows_sent/job':>14s}")
    for kind, reps in sorted(stm[(who, w)].items()):
        NN = next(iter(reps.values()))[5]
        c = med([r[0] for r in reps.values()]) / NN
        t = med([r[1] for r in reps.values()]) / 1e6 / NN
        e = med([r[2] for r in reps.values()]) / NN
        a = med([r[3] for r in reps.values()]) / NN
        s = med([r[4] for r in reps.values()]) / NN
        print(f"{kind:18s}{c:10.3f}{t:14.1f}{e:14.2f}{a:13.2f}{s:14.2f}")
PY
