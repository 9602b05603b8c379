#!/usr/bin/env bash
# [kyud] prefetch: a worker of short jobs claims more rows than it has slots,
# and gives back, due at once and the attempt not counted, what it cannot
# start within 1 s because its slots stayed busy; then it stops claiming
# ahead. Every job still runs exactly once.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.slots=1 kyud.prefetch=16 kyud.lease=10 kyud.fence_margin=2

# Short jobs first: the worker learns that its slot frees up every few ms.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('warm', seq), 'echo \$KYU_JOB_ID >> $T_DIR/ran'
     FROM seq_1_to_40"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 40 60
# With one slot, a claim of several rows can only come from prefetching.
grep -Eq 'acquired ([2-9]|[1-9][0-9]+) job\(s\) \(asked for' "$KYUD_LOG" ||
	fail "no claim took more than one row with slots = 1: $(grep -E 'acquired' "$KYUD_LOG" | tail -3 | tr '\n' ' ')"

# A long job takes the slot while the short ones behind it were claimed
# ahead: those are given back after about 1 s, not held until it ends. The
# long job runs until the test opens its gate, so the test sees each state
# however slowly it runs; the claim of the short ones is known from the
# rows (owner set, attempt not counted) and the log, not by catching the
# second or so during which they were held.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('long', 'echo \$KYU_JOB_ID >> $T_DIR/ran
               for i in \$(seq 600); do [ -e $T_DIR/gate ] && exit 0; sleep 0.1; done; exit 1',
      NOW(6) - INTERVAL 1 SECOND);
     INSERT INTO kyu_jobs (id, command) SELECT CONCAT('short', seq), 'echo \$KYU_JOB_ID >> $T_DIR/ran'
     FROM seq_1_to_10"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" running 30
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'short%' AND owner IS NOT NULL" 1 30
# Given back: waiting again, attempt not counted, no error recorded.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'short%' AND status = 'waiting'
          AND attempts = 0 AND error IS NULL" 10 30
assert_log_contains 'gave back [0-9]+ claimed job\(s\) not started within 1\.0 s: every slot stayed busy'
assert_eq "running" "$(sql "SELECT status FROM kyu_jobs WHERE id = 'long'")" "long job while the others wait"
# No more claiming ahead while the slot is busy: the given-back rows stay
# waiting rather than being claimed and given back every second.
sleep 1.5
assert_eq "0" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'short%' AND status = 'running'")" \
	"short jobs claimed again while the only slot was busy"
assert_eq "1" "$(grep -Ec 'gave back' "$KYUD_LOG")" "give-back lines"
assert_eq "" "$(grep -x 'short[0-9]*' "$T_DIR/ran" | tr '\n' ' ')" "short jobs run while the long one held the slot"

touch "$T_DIR/gate"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 51 60
assert_each_ran_once 51 "$T_DIR/ran"
stop_kyud
assert_log_contains 'exiting: [0-9]+ job\(s\) started, [0-9]+ result\(s\) recorded, [1-9][0-9]* given back unstarted'
assert_no_worker_death
