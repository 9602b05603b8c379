#!/usr/bin/env bash
# Bounded intake and bad input around queues:
# - max_waiting 3: the fourth INSERT fails with error 31001, SQLSTATE KYU01,
#   naming the queue and the bound, kyu submit says so and exits 75; room
#   comes back as jobs leave 'waiting'; other queues are not bounded;
# - bad kyu_queues values are refused by name; kyu pause/limit refuse bad
#   arguments (status 64) and a queue without jobs or settings (1, no row
#   made); --create makes its row, which is harmless and kyu queues lists;
#   kyu queue-reset removes a queue's row;
# - a NULL concurrency_key is no key (jobs overlap), '' is a key like any
#   other (jobs do not).
. "$KYU_SRC/tests/lib.sh"

port=$(free_udp_port)
start_kyud kyud.slots=4 kyud.listen=127.0.0.1:$port
KYU_CMD=("$KYU" -c "$KYUD_INI")

# ---- 1. max_waiting
"${KYU_CMD[@]}" pause --create in >/dev/null || fail "kyu pause --create in"
sql "UPDATE kyu_queues SET max_waiting = 3 WHERE name = 'in'"
for i in 1 2 3; do "${KYU_CMD[@]}" submit -i "in$i" -q in -s true >/dev/null || fail "submit in$i refused"; done
rc=0
"${KYU_CMD[@]}" submit -i in4 -q in -s true >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
echo "kyu submit into a full queue: status $rc: $(cat "$T_DIR/err")"
assert_eq 75 "$rc" "kyu submit's status when the queue is full"
grep -q 'queue in is full: kyu_queues.max_waiting is 3 and 3 jobs wait' "$T_DIR/err" ||
	fail "kyu submit's message does not name the queue and the bound: $(cat "$T_DIR/err")"
if out=$(root_sql -D "$T_DB" -e "INSERT INTO kyu_jobs (id, queue, command) VALUES ('in5', 'in', 'true')" 2>&1); then
	fail "a plain INSERT into the full queue succeeded"
fi
grep -q '^ERROR 31001 (KYU01).*kyu: queue in is full' <<<"$out" || fail "plain INSERT: no error 31001, SQLSTATE KYU01: $out"
assert_eq 3 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'in'")" "rows in the bounded queue"
# Not bounded: another queue, and a multi-row INSERT elsewhere.
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('o', seq), 'other', 'true' FROM seq_1_to_20"
"${KYU_CMD[@]}" resume in >/dev/null || fail "kyu resume in"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue IN ('in', 'other') AND status = 'succeeded'" 23 20
"${KYU_CMD[@]}" submit -i in6 -q in -s true >/dev/null || fail "submit refused after the queue emptied"

# ---- 2. bad values, bad arguments
check_refused() { # SQL CONSTRAINT_NAME
	local out
	if out=$(root_sql -D "$T_DB" -e "$1" 2>&1); then fail "accepted: $1"; fi
	grep -q "CONSTRAINT \`$2\` failed" <<<"$out" || fail "[$1] refused without naming $2: $out"
}
check_refused "INSERT INTO kyu_queues (name, max_running) VALUES ('bad', -1)" kyu_queues_max_running
check_refused "INSERT INTO kyu_queues (name, weight) VALUES ('bad', 0)" kyu_queues_weight
check_refused "INSERT INTO kyu_queues (name, rate_limit) VALUES ('bad', 5)" kyu_queues_rate_needs_period
check_refused "INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('bad', 5, 0)" kyu_queues_rate_period
check_refused "INSERT INTO kyu_queues (name, paused) VALUES ('bad', 2)" kyu_queues_paused
check_refused "INSERT INTO kyu_queues (name, max_waiting) VALUES ('bad', -3)" kyu_queues_max_waiting
rc=0; "${KYU_CMD[@]}" limit other -1 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "kyu limit other -1"
grep -q "'-1' is not a number from 0 to" "$T_DIR/err" || fail "kyu limit -1: $(cat "$T_DIR/err")"
rc=0; "${KYU_CMD[@]}" pause '' 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "kyu pause ''"
"${KYU_CMD[@]}" limit other 2 >/dev/null || fail "kyu limit other 2"
assert_eq 2 "$(sql "SELECT max_running FROM kyu_queues WHERE name = 'other'")" "max_running after kyu limit"
"${KYU_CMD[@]}" limit other none | grep -x 'queue other: max_running none' >/dev/null || fail "kyu limit other none"
assert_eq NULL "$(sql "SELECT IFNULL(max_running, 'NULL') FROM kyu_queues WHERE name = 'other'")" "max_running after none"
# A queue without jobs or settings: refused, no row left behind (a typo
# must not make a queue that nothing shows how to remove); --create makes
# its settings ahead of its first job; queue-reset removes them.
for c in "pause ghost" "resume ghost" "limit ghost 3"; do
	rc=0; "${KYU_CMD[@]}" $c >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 1 "$rc" "kyu $c, a queue that does not exist"
	grep -qF "no queue 'ghost': it has no jobs and no settings" "$T_DIR/err" || fail "kyu $c: $(cat "$T_DIR/err")"
done
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues WHERE name = 'ghost'")" "rows of ghost after the refusals"
"${KYU_CMD[@]}" pause --create ghost >/dev/null || fail "kyu pause --create of a queue without jobs"
"${KYU_CMD[@]}" queues >"$T_DIR/queues.txt" || fail "kyu queues"
grep -P '^ghost\t0\t0\t0\t0\t1\t-\t-\t1\t-\t0\t1\t0\t0\tidle$' "$T_DIR/queues.txt" >/dev/null ||
	fail "kyu queues does not list ghost: $(cat "$T_DIR/queues.txt")"
grep -P '^in\t0\t0\t0\t0\t0\t-\t-\t1\t3\t0\t1\t0\t0\tidle$' "$T_DIR/queues.txt" >/dev/null ||
	fail "kyu queues does not show in's bound: $(cat "$T_DIR/queues.txt")"
# Settings that exist: resumed without --create; then removed.
"${KYU_CMD[@]}" resume ghost | grep -x 'queue ghost: resumed' >/dev/null || fail "kyu resume ghost (settings only)"
"${KYU_CMD[@]}" queue-reset ghost | grep -x 'queue ghost: settings removed' >/dev/null || fail "kyu queue-reset ghost"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_queues WHERE name = 'ghost'")" "rows of ghost after queue-reset"
rc=0; "${KYU_CMD[@]}" queue-reset ghost 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "kyu queue-reset of a queue without settings"
grep -qF "queue 'ghost' has no settings" "$T_DIR/err" || fail "kyu queue-reset ghost again: $(cat "$T_DIR/err")"
"${KYU_CMD[@]}" queues | grep -P '^ghost\t' && fail "kyu queues still lists ghost after queue-reset"
# A queue with jobs but no settings row exists: pause makes its row.
"${KYU_CMD[@]}" queue-reset other >/dev/null || fail "kyu queue-reset other"
"${KYU_CMD[@]}" pause other | grep -x 'queue other: paused' >/dev/null || fail "kyu pause other (jobs, no settings)"
"${KYU_CMD[@]}" resume other >/dev/null || fail "kyu resume other"

# ---- 3. NULL and empty keys
job="echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/starts; sleep 2; echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/ends"
# Jobs without a key must be able to run at once: each waits (up to 20 s)
# until both have started, so a slow machine cannot make them look
# serialized, while a wrong mutex would hold the second back for good.
meet="echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/starts; for i in \$(seq 200); do [ \$(grep -c ^n $T_DIR/starts) -ge 2 ] && break; sleep 0.1; done; echo \"\$KYU_JOB_ID \$(date +%s%N)\" >> $T_DIR/ends"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('n1', '$meet'), ('n2', '$meet')"
"${KYU_CMD[@]}" wake
"${KYU_CMD[@]}" submit -i e1 -k '' -s "$job" >/dev/null
"${KYU_CMD[@]}" submit -i e2 -k '' -s "$job" >/dev/null
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('n1', 'n2', 'e1', 'e2') AND status = 'succeeded'" 4 30
assert_eq "'' ''" "$(sql "SELECT CONCAT(QUOTE(concurrency_key)) FROM kyu_jobs WHERE id IN ('e1', 'e2')" | tr '\n' ' ' | sed 's/ $//')" \
	"the empty key as stored"
python3 - "$T_DIR/starts" "$T_DIR/ends" <<'PY' || fail "NULL or empty concurrency keys misread"
import sys
s = dict(l.split() for l in open(sys.argv[1]))
e = dict(l.split() for l in open(sys.argv[2]))
def overlap(a, b):
    return int(s[a]) < int(e[b]) and int(s[b]) < int(e[a])
print(f"NULL key: n1/n2 overlap {overlap('n1', 'n2')}; empty key: e1/e2 overlap {overlap('e1', 'e2')}")
sys.exit(0 if overlap("n1", "n2") and not overlap("e1", "e2") else 1)
PY
stop_kyud
