#!/usr/bin/env bash
# Four daemons (2 workers x 4 slots each) claim from one table at once:
# - max_running 3 holds at every 10 ms sample of the table, is used in full,
#   and a limit raised to 5 while jobs run takes effect at once;
# - concurrency keys: jobs sharing a key never run at the same time (their
#   processes' own start and end times), and 40 unkeyed jobs submitted behind
#   a busy key all finish before that key's third job has started.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.slots=4
for d in b c d; do start_extra_kyud "$d" kyud.slots=4; done

# ---- 1. max_running, raised while jobs run
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('lim', 3)"
start_sampler "$T_DIR/lim.samples" \
	"SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'lim' AND status = 'running'"
sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('l', seq), 'lim', 'sleep 0.2' FROM seq_1_to_60"
# Unlimited work at the same time, so the limited queue competes.
sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('f', seq), 'free', 'sleep 0.1' FROM seq_1_to_60"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'lim' AND status = 'succeeded'" 60 30
stop_samplers
max=$(sort -n "$T_DIR/lim.samples" | tail -1)
n=$(wc -l <"$T_DIR/lim.samples")
echo "max_running 3: $n samples, at most $max running"
[ "$n" -ge 50 ] || fail "the sampler took only $n samples: $(head -3 "$T_DIR/lim.samples")"
[ "$max" -le 3 ] || fail "max_running 3 exceeded: $max running at once"
[ "$max" -eq 3 ] || fail "max_running 3 never used in full (at most $max at once)"

sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('m', seq), 'lim', 'sleep 0.3' FROM seq_1_to_80"
wait_for "SELECT COUNT(*) >= 10 FROM kyu_jobs WHERE queue = 'lim' AND id LIKE 'm%' AND status = 'succeeded'" 1 30
start_sampler "$T_DIR/lim5.samples" \
	"SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'lim' AND status = 'running'"
"$KYU" -c "$KYUD_INI" limit lim 5 | grep -x 'queue lim: max_running 5' >/dev/null || fail "kyu limit lim 5"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'lim' AND status = 'succeeded'" 140 30
stop_samplers
max=$(sort -n "$T_DIR/lim5.samples" | tail -1)
echo "raised to max_running 5: at most $max running"
[ "$max" -le 5 ] || fail "max_running 5 exceeded: $max running at once"
[ "$max" -ge 4 ] || fail "the raised limit was not used: at most $max running after kyu limit lim 5"

# ---- 2. concurrency keys
# Each job writes its own start and end (host clock, ns) to a file.
job="echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/starts; sleep 0.3; echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/ends"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('k', seq), 'keys', '$job', CONCAT('key', seq % 3) FROM seq_1_to_30"
# A busy key holds up nothing else: 5 jobs of key 'slow' (4 s each: the
# key's third start is 8 s after its first at the earliest, room for a
# loaded machine to run 40 short jobs), then 40 jobs without a key in the
# same queue.
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('s', seq), 'keys', 'sleep 4', 'slow' FROM seq_1_to_5"
sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('u', seq), 'keys', 'true' FROM seq_1_to_40"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'keys' AND status = 'succeeded'" 75 30
python3 - "$T_DIR/starts" "$T_DIR/ends" <<'PY' || fail "concurrency keys: two jobs with one key ran at the same time"
import sys
starts = dict(l.split() for l in open(sys.argv[1]))
ends = dict(l.split() for l in open(sys.argv[2]))
assert len(starts) == 30 and len(ends) == 30, (len(starts), len(ends))
spans = {}
for j, t in starts.items():
    spans.setdefault(int(j[1:]) % 3, []).append((int(t), int(ends[j]), j))
bad = 0
for key, s in spans.items():
    s.sort()
    for a, b in zip(s, s[1:]):
        if b[0] < a[1]:
            print(f"key{key}: {b[2]} started {(a[1] - b[0]) / 1e6:.1f} ms before {a[2]} ended")
            bad += 1
print(f"concurrency keys: 30 jobs on 3 keys, {bad} overlaps")
sys.exit(1 if bad else 0)
PY
third=$(sql "SELECT started_at FROM kyu_jobs WHERE concurrency_key = 'slow' ORDER BY started_at LIMIT 2, 1")
late=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'u%' AND finished_at > '$third'")
echo "busy key: unkeyed jobs finished after the key's third start: $late of 40"
assert_eq 0 "$late" "unkeyed jobs held up behind a busy key"
# The table's own invariant, however the claims raced: one running row per key.
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'")" "running rows left"

stop_extra_kyuds
stop_kyud
assert_log_lacks 'failed:'
