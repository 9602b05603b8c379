#!/usr/bin/env bash
# Many queues due at once: the fan (notes/DESIGN.md, "Many queues: the
# fan"). 400 queues of 20 jobs each, inserted queue after queue, and a
# queue limited to one running job; one kyud, 2 workers, 8 slots, prefetch
# 64, no wake-ups.
# - every queue starts its first job within the first 400 starts plus the
#   claims made before the directory showed them (at most two per worker
#   of slots + prefetch rows): chunks of 32 rows per queue, or the due
#   order, would start the last queue's first job after ~7,980 others;
# - the limited queue never runs two jobs at once, and every job runs once.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_queues (name, max_running) VALUES ('lim', 1)"
sql "INSERT INTO kyu_jobs (id, queue, argv)
     SELECT CONCAT('j', seq), CONCAT('q', LPAD((seq - 1) DIV 20, 3, '0')), '[\"true\"]' FROM seq_1_to_8000"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('l', seq), 'lim', '[\"true\"]' FROM seq_1_to_20"
# Once per name: the rows of a queue follow each other in the INSERT.
assert_eq "401	401" "$(sql "SELECT COUNT(DISTINCT name), COUNT(*) FROM kyu_queue_names_new")" \
	"new queue names noted by the INSERT trigger (names, rows)"
start_kyud kyud.slots=8 kyud.prefetch=64
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 8020 60
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE attempts <> 1")" "every job ran once"

sql "SELECT queue FROM kyu_jobs ORDER BY started_at, seq" >"$T_DIR/starts.txt"
worst=$(python3 - "$T_DIR/starts.txt" <<'PY'
import sys
first = {}
for i, q in enumerate(l.strip() for l in open(sys.argv[1])):
    first.setdefault(q, i + 1)
print(max(r for q, r in first.items() if q.startswith('q')))
PY
)
echo "the last of 400 queues started its first job as start number $worst"
bound=$((400 + 2 * 2 * (8 + 64)))
[ "$worst" -le "$bound" ] || fail "a queue waited for $worst starts (at most $bound)"

overlap=$(sql "SELECT COUNT(*) FROM kyu_jobs a JOIN kyu_jobs b ON a.queue = 'lim' AND b.queue = 'lim'
               AND a.seq < b.seq AND a.started_at < b.finished_at AND b.started_at < a.finished_at")
assert_eq 0 "$overlap" "jobs of the queue limited to 1 that overlapped"
grep -q "claims take one job of each in turn" "$T_DIR"/kyud*.log || fail "the fan was not begun (log)"
# Filed by the retention pass (at start), noted no more.
assert_eq "401	0" "$(sql "SELECT (SELECT COUNT(*) FROM kyu_queue_names WHERE name LIKE 'q%' OR name = 'lim'),
                             (SELECT COUNT(*) FROM kyu_queue_names_new)")" "queue names filed"
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('again', 'q001', '[\"true\"]')"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queue_names_new")" "a known queue's job noted again"
stop_kyud
