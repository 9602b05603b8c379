#!/usr/bin/env bash
# kyu_queues.key_max_running: at most N running jobs per concurrency_key,
# cluster-wide (two daemons), each in its own slot (key_slot 0..N-1; the
# unique index on running_key is the guard), and the N slots are used.
# - N = 2: 6 jobs of one key that record their own start and end: never
#   more than 2 at once, 2 at once at some point, all 6 run; a second key
#   in the same queue and unkeyed jobs run beside them;
# - N = 3 on a queue that also has max_running 4: at most 3 per key, at
#   most 4 in all;
# - the queue's limit counts the key's running rows of every queue, and a
#   limit lowered while jobs run holds for the next starts.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.slots=4
start_extra_kyud b kyud.slots=4

# Each job writes its own start and end (host clock, ns).
job="echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/starts; sleep 1; echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/ends"

# overlap FILE-PREFIX: the most jobs whose ids start with PREFIX that ran at
# once, by their own start and end times.
overlap() {
	python3 - "$T_DIR/starts" "$T_DIR/ends" "$1" <<'PY'
import sys
pre = sys.argv[3]
starts = {j: int(t) for j, t in (l.split() for l in open(sys.argv[1])) if j.startswith(pre)}
ends = {j: int(t) for j, t in (l.split() for l in open(sys.argv[2])) if j.startswith(pre)}
ev = sorted([(t, 1) for t in starts.values()] + [(t, -1) for t in ends.values()], key=lambda e: (e[0], e[1]))
cur = top = 0
for _, d in ev:
    cur += d
    top = max(top, cur)
print(len(starts), len(ends), top)
PY
}

# ---- 1. N = 2, two daemons
# kyu key-limit sets it (the queue has no jobs yet: --create), kyu queues
# shows it (its 12th column: later ones come after it); out of range is a
# usage error.
"$KYU" -c "$KYUD_INI" key-limit kq 2 2>/dev/null && fail "kyu key-limit of a queue that does not exist"
"$KYU" -c "$KYUD_INI" key-limit --create kq 2 | grep -x 'queue kq: key_max_running 2' >/dev/null ||
	fail "kyu key-limit --create kq 2"
for n in 0 1001 x; do
	rc=0
	"$KYU" -c "$KYUD_INI" key-limit kq "$n" 2>/dev/null || rc=$?
	assert_eq 64 "$rc" "exit status of kyu key-limit kq $n"
done
assert_eq "key_max_running 2" "$("$KYU" -c "$KYUD_INI" queues | awk -F'\t' 'NR == 1 {h = $12} $1 == "kq" {print h, $12}')" \
	"kyu queues' 12th column for kq"
start_sampler "$T_DIR/slots.samples" \
	"SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running' AND key_slot >= 2"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('t', seq), 'kq', '$job', 'tenant' FROM seq_1_to_6"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('o', seq), 'kq', '$job', 'other' FROM seq_1_to_4"
sql "INSERT INTO kyu_jobs (id, queue, command)
     SELECT CONCAT('u', seq), 'kq', 'true' FROM seq_1_to_10"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'kq' AND status = 'succeeded'" 20 60
stop_samplers
read -r ns ne top <<<"$(overlap t)"
echo "key_max_running 2: tenant $ns started, $ne ended, at most $top at once"
assert_eq 6 "$ns" "tenant jobs started"
assert_eq 6 "$ne" "tenant jobs ended"
[ "$top" -le 2 ] || fail "key_max_running 2 exceeded: $top jobs of key tenant at once"
[ "$top" -eq 2 ] || fail "key_max_running 2 never used in full (at most $top at once)"
read -r ns ne top <<<"$(overlap o)"
assert_eq 4 "$ne" "other jobs ended"
[ "$top" -le 2 ] || fail "key_max_running 2 exceeded: $top jobs of key other at once"
# Every running row held a slot below the limit.
# (Only the samples' numbers: a line the loaded server answered otherwise
# is shown, not counted.)
grep -vxE '[0-9]+' "$T_DIR/slots.samples" | sort | uniq -c | head -5 >&2 || true
[ "$(grep -xE '[0-9]+' "$T_DIR/slots.samples" | sort -n | tail -1)" = 0 ] ||
	fail "a running row held slot 2 or more: $(grep -xE '[0-9]+' "$T_DIR/slots.samples" | sort -n | uniq -c | tr '\n' ' ')"

# ---- 2. N = 3 with max_running 4
rm -f "$T_DIR/starts" "$T_DIR/ends"
sql "INSERT INTO kyu_queues (name, key_max_running, max_running) VALUES ('kr', 3, 4)"
start_sampler "$T_DIR/kr.samples" \
	"SELECT COUNT(*), IFNULL(MAX(n), 0) FROM (SELECT concurrency_key, COUNT(*) AS n FROM kyu_jobs
	 WHERE queue = 'kr' AND status = 'running' GROUP BY concurrency_key) AS k"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('a', seq), 'kr', '$job', 'a' FROM seq_1_to_6"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('b', seq), 'kr', '$job', 'b' FROM seq_1_to_3"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'kr' AND status = 'succeeded'" 9 60
stop_samplers
read -r ns ne top <<<"$(overlap a)"
echo "key_max_running 3, max_running 4: key a at most $top at once"
assert_eq 6 "$ne" "key a jobs ended"
[ "$top" -le 3 ] || fail "key_max_running 3 exceeded: $top jobs of key a at once"
read -r ns ne top <<<"$(overlap '')"
[ "$top" -le 4 ] || fail "max_running 4 exceeded: $top jobs of queue kr at once"

# ---- 3. the key's running rows of every queue count; a lowered limit holds
# Two jobs of key 'shared' run in queue kq (limit 2): a job of the same key
# in queue k3 (limit 3) starts beside them, in slot 2; a third one of kq
# does not. k3 lowered to 2: with s1 ended, 2 rows of the key still run,
# and neither queue starts another.
sql "INSERT INTO kyu_queues (name, key_max_running) VALUES ('k3', 3)"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key)
     SELECT CONCAT('s', seq), 'kq', 'sleep 60', 'shared' FROM seq_1_to_2"
wait_for "SELECT COUNT(*) = 2 FROM kyu_jobs WHERE id LIKE 's%' AND status = 'running'" 1 60
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES
     ('s3', 'kq', 'true', 'shared'), ('x1', 'k3', 'sleep 60', 'shared')"
wait_for "SELECT status = 'running' FROM kyu_jobs WHERE id = 'x1'" 1 60
assert_eq 2 "$(sql "SELECT key_slot FROM kyu_jobs WHERE id = 'x1'")" "slot of the third running job"
sleep 2
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 's3'")" "s3 (limit 2, 3 running)"
sql "UPDATE kyu_queues SET key_max_running = 2 WHERE name = 'k3'"
sql "INSERT INTO kyu_jobs (id, queue, command, concurrency_key) VALUES ('x2', 'k3', 'true', 'shared')"
"$KYU" -c "$KYUD_INI" cancel s1 >/dev/null
sleep 3
assert_eq waiting,waiting "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('s3', 'x2')")" \
	"s3 and x2 with 2 rows of their key running (limits 2)"
"$KYU" -c "$KYUD_INI" cancel s2 >/dev/null
"$KYU" -c "$KYUD_INI" cancel x1 >/dev/null
wait_for "SELECT COUNT(*) = 2 FROM kyu_jobs WHERE id IN ('s3', 'x2') AND status = 'succeeded'" 1 90
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'")" "running rows left"

stop_extra_kyuds
stop_kyud
assert_log_lacks 'failed:'
