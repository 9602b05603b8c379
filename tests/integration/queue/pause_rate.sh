#!/usr/bin/env bash
# One kyud woken by datagrams, poll_interval 30 (a poll cannot explain a
# start within seconds):
# - kyu pause: nothing starts; kyu resume: the jobs start at once;
# - a pause set in plain SQL while a queue runs: no job starts after it
#   (beyond the claim already on its way), the running ones finish;
# - rate_limit 4 per 2 s: no 2 s window holds more than 4 starts;
# - max_running 1 and the worker holding that slot killed: the slot comes back
#   once the lease expires, and the queue never runs two at once.
. "$KYU_SRC/tests/lib.sh"

port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.slots=4 kyud.poll_interval=30 kyud.listen=127.0.0.1:$port
KYU_CMD=("$KYU" -c "$KYUD_INI")
wait_workers_idle 2

# ---- 1. kyu pause / kyu resume
"${KYU_CMD[@]}" pause --create p | grep -x 'queue p: paused' >/dev/null || fail "kyu pause --create p"
for i in $(seq 10); do "${KYU_CMD[@]}" submit -i "p$i" -q p -s true >/dev/null || fail "submit p$i"; done
sleep 2
assert_eq 10 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p' AND status = 'waiting' AND started_at IS NULL")" \
	"jobs of the paused queue still waiting after 2 s"
"${KYU_CMD[@]}" queues >"$T_DIR/queues.txt" || fail "kyu queues"
grep -P '^p\t10\t10\t0\t0\t1\t' "$T_DIR/queues.txt" >/dev/null ||
	fail "kyu queues does not show p paused with 10 waiting: $(cat "$T_DIR/queues.txt")"
resumed=$(sql "SELECT NOW(6)")
"${KYU_CMD[@]}" resume p | grep -x 'queue p: resumed' >/dev/null || fail "kyu resume p"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p' AND status = 'succeeded'" 10 20
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$resumed', MAX(started_at)) / 1000) FROM kyu_jobs WHERE queue = 'p'")
echo "kyu resume: the last of 10 jobs started $ms ms after it"
# (15 s: room for a loaded machine, and still half the poll interval.)
[ "$ms" -lt 15000 ] || fail "jobs started $ms ms after kyu resume: found by a poll, not woken"

# ---- 2. a pause in plain SQL while the queue runs
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('q', seq), 'p2', 'sleep 0.05' FROM seq_1_to_400"
"${KYU_CMD[@]}" wake p2 || fail "kyu wake"
wait_for "SELECT COUNT(*) >= 20 FROM kyu_jobs WHERE queue = 'p2' AND status = 'succeeded'" 1 20
paused=$(sql "INSERT INTO kyu_queues (name, paused) VALUES ('p2', 1); SELECT NOW(6)")
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p2' AND status = 'running'" 0 20
late=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p2' AND started_at > '$paused' + INTERVAL 1 SECOND")
left=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p2' AND status = 'waiting'")
echo "pause in SQL: $late job(s) started more than 1 s after it, $left still waiting"
assert_eq 0 "$late" "jobs started after the pause committed"
[ "$left" -gt 0 ] || fail "the pause came too late to test anything (nothing left waiting)"
sleep 2
assert_eq "$left" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'p2' AND status = 'waiting'")" \
	"waiting jobs of the paused queue 2 s later"
sql "DELETE FROM kyu_jobs WHERE queue = 'p2'"

# ---- 3. rate_limit 4 per 2 s
sql "INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('r', 4, 2)"
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('r', seq), 'r', 'true' FROM seq_1_to_20"
"${KYU_CMD[@]}" wake r || fail "kyu wake"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'r' AND status = 'succeeded'" 20 15
sql "SELECT UNIX_TIMESTAMP(started_at) FROM kyu_jobs WHERE queue = 'r' ORDER BY started_at" >"$T_DIR/rate.txt"
python3 - "$T_DIR/rate.txt" <<'PY' || fail "rate limit broken"
import sys
t = [float(x) for x in open(sys.argv[1])]
assert len(t) == 20, len(t)
worst = min(t[i + 4] - t[i] for i in range(len(t) - 4))
print(f"rate 4/2 s: 20 starts over {t[-1] - t[0]:.2f} s; closest 5 consecutive starts span {worst:.3f} s")
sys.exit(0 if worst >= 2.0 else 1)
PY

# ---- 4. the worker holding a limited queue's only slot is killed
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('one', 1)"
start_sampler "$T_DIR/one.samples" "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'one' AND status = 'running'"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES
     ('o1', 'one', '[ \"\$KYU_ATTEMPT\" -gt 1 ] || sleep 60')"
"${KYU_CMD[@]}" wake one || fail "kyu wake"
wait_for "SELECT pid IS NOT NULL FROM kyu_jobs WHERE id = 'o1'" 1 20
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('o2', 'one', 'true')"
"${KYU_CMD[@]}" wake one || fail "kyu wake"
jobpid=$(sql "SELECT pid FROM kyu_jobs WHERE id = 'o1'")
worker=$(ps -o ppid= -p "$jobpid" | tr -d ' ')
grep -qw "$worker" <<<"$(worker_pids)" || fail "job o1 (pid $jobpid) is not a worker's child (parent $worker)"
killed=$(sql "SELECT NOW(6)")
WORKER_DEATHS_OK=1
kill -KILL "$worker"
wait_for "SELECT CONCAT(status, ' ', attempts) FROM kyu_jobs WHERE id = 'o1'" "succeeded 2" 30
wait_for "SELECT status FROM kyu_jobs WHERE id = 'o2'" succeeded 20
stop_samplers
max=$(sort -n "$T_DIR/one.samples" | tail -1)
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$killed', started_at) / 1000) FROM kyu_jobs WHERE id = 'o1'")
echo "worker killed holding the only slot: o1 started again $ms ms later (lease 6 s); at most $max running"
[ "$max" -le 1 ] || fail "max_running 1 exceeded after a worker was killed: $max running"
[ "$(sql "SELECT started_at >= (SELECT finished_at FROM kyu_jobs WHERE id = 'o1') FROM kyu_jobs WHERE id = 'o2'")" = 1 ] ||
	fail "o2 started before o1 finished"

stop_kyud
