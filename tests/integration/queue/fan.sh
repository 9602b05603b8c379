#!/usr/bin/env bash
# Many queues due at once: the fan (notes/DESIGN.md, "Many queues: the
# fan"). 400 queues of 20 jobs each, inserted queue after queue, and a
# queue limited to one running job; one kyud, 2 workers, 8 slots, prefetch
# 64, no wake-ups. Orders of starts, not times, so that a loaded machine
# (a worker that begins long after the other) passes, where chunks of 32
# rows per queue or the due order (the last queue's first start after
# ~7,980 others) fail:
# - every queue starts its first job within two turns over the 400 names
#   (one per worker: a worker that begins late takes second jobs of the
#   queues the other passed) plus the claims made before the directory
#   showed them (at most two per worker of slots + prefetch rows); seen
#   here: ~550 of the bound 1,088;
# - by then few queues have started a third job: those of the claims
#   before the fan (288 rows of queues of 20, in due order), not a turn's;
# - the limited queue never runs two jobs at once, and every job runs
#   once (a lease of 60 s: a worker stalled past the tests' 6 s by a loaded
#   machine would have its jobs run again, rightly).
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_queues (name, max_running) VALUES ('lim', 1)"
sql "INSERT INTO kyu_jobs (id, queue, argv)
     SELECT CONCAT('j', seq), CONCAT('q', LPAD((seq - 1) DIV 20, 3, '0')), '[\"true\"]' FROM seq_1_to_8000"
sql "INSERT INTO kyu_jobs (id, queue, argv) SELECT CONCAT('l', seq), 'lim', '[\"true\"]' FROM seq_1_to_20"
# Once per name: the rows of a queue follow each other in the INSERT.
assert_eq "401	401" "$(sql "SELECT COUNT(DISTINCT name), COUNT(*) FROM kyu_queue_names_new")" \
	"new queue names noted by the INSERT trigger (names, rows)"
start_kyud kyud.slots=8 kyud.prefetch=64 kyud.lease=60
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 8020 60
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE attempts <> 1")" "every job ran once"

sql "SELECT queue FROM kyu_jobs ORDER BY started_at, seq" >"$T_DIR/starts.txt"
read -r worst thirds < <(python3 - "$T_DIR/starts.txt" <<'PY'
import sys
first, seen = {}, {}
order = [l.strip() for l in open(sys.argv[1])]
for i, q in enumerate(order):
    first.setdefault(q, i + 1)
worst = max(r for q, r in first.items() if q.startswith('q'))
# Queues that started a third job before the last queue's first.
for q in order[:worst - 1]:
    seen[q] = seen.get(q, 0) + 1
print(worst, sum(1 for q, n in seen.items() if q.startswith('q') and n >= 3))
PY
)
echo "the last of 400 queues started its first job as start number $worst;" \
	"$thirds queues had started a third job by then"
bound=$((2 * 400 + 2 * 2 * (8 + 64)))
[ "$worst" -le "$bound" ] || fail "a queue waited for $worst starts (at most $bound)"
# 288 rows in due order span at most 16 queues; a margin over that.
[ "$thirds" -le 40 ] || fail "$thirds queues started a third job before every queue its first (at most 40)"

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
