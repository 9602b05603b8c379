#!/usr/bin/env bash
# Workflows in plain SQL: a chain, a fan-in, both policies, a cascade of
# cancels to any depth, and a retry that re-opens what it cancelled. Each
# job runs once and only after its upstreams ended (started_at against
# their finished_at); a dependent never runs when its policy forbids.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=2 kyud.slots=4

# ---- a chain a -> b -> c, inserted in one go; each step appends its name.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('a', 'echo a >> $T_DIR/chain');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('b', 'echo b >> $T_DIR/chain', '[\"a\"]');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('c', 'echo \"c \$KYU_AFTER\" >> $T_DIR/chain', '[\"b\"]')"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('a','b','c')" \
	succeeded,succeeded,succeeded 60
assert_eq $'a\nb\nc ["b"]' "$(cat "$T_DIR/chain")" "the chain's steps, in order, with KYU_AFTER"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
                    JOIN kyu_jobs AS u ON u.seq = e.up_seq WHERE d.started_at < u.finished_at")" \
	"steps that started before their upstream finished"

# ---- fan-in: f runs after three jobs (one of them slow), g after f
# whatever happened (policy finished).
sql "INSERT INTO kyu_jobs (id, command) VALUES ('p1', 'true'), ('p2', 'sleep 1'), ('p3', 'true');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('f', 'true', '[\"p1\",\"p2\",\"p3\"]');
     INSERT INTO kyu_jobs (id, command, after, after_policy) VALUES ('g', 'true', '[\"f\"]', 'finished')"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('f','g')" succeeded,succeeded 60
assert_eq 1 "$(sql "SELECT f.started_at >= (SELECT MAX(finished_at) FROM kyu_jobs WHERE id IN ('p1','p2','p3'))
                    FROM kyu_jobs AS f WHERE f.id = 'f'")" "the fan-in started after its last upstream finished"

# ---- a failed upstream: its dependents (policy succeeded) are cancelled to
# any depth, naming it; the 'finished' one runs all the same.
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('x', 'exit 3', 1);
     INSERT INTO kyu_jobs (id, command, after) VALUES ('x1', 'touch $T_DIR/x1', '[\"x\"]');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('x2', 'touch $T_DIR/x2', '[\"x1\"]');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('x3', 'touch $T_DIR/x3', '[\"x2\"]');
     INSERT INTO kyu_jobs (id, command, after, after_policy) VALUES ('xf', 'touch $T_DIR/xf', '[\"x2\"]', 'finished')"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('x','x1','x2','x3','xf')" \
	failed,cancelled,cancelled,cancelled,succeeded 60
assert_eq "x	kyu: upstream job x ended failed" \
	"$(sql "SELECT cancelled_by, error FROM kyu_jobs WHERE id = 'x1'")" "x1: cancelled_by, error"
assert_eq "x2	kyu: upstream job x2 ended cancelled" \
	"$(sql "SELECT cancelled_by, error FROM kyu_jobs WHERE id = 'x3'")" "x3: cancelled_by, error"
for f in x1 x2 x3; do [ ! -e "$T_DIR/$f" ] || fail "$f ran although its upstream failed"; done

# ---- the retry of x (the documented UPDATE) re-opens x1..x3 to blocked;
# x now succeeds, and they run, in order.
sql "UPDATE kyu_jobs SET command = 'true', status = 'waiting', run_at = NOW(6), max_attempts = NULL,
     attempts = 0 WHERE id = 'x'"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('x','x1','x2','x3')" \
	succeeded,succeeded,succeeded,succeeded 60
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('x1','x2','x3') AND (cancelled_by IS NOT NULL OR error IS NOT NULL)")" \
	"re-opened jobs that kept their cancel"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left in kyu_after_todo"

# ---- after naming a job that does not exist: refused with KYU02.
out=$(sql "INSERT INTO kyu_jobs (id, command, after) VALUES ('bad', 'true', '[\"a\", \"nope\"]')" 2>&1) &&
	fail "an after naming a missing job was accepted"
case $out in
*"(KYU02)"*"kyu: after of job bad names job nope, which does not exist"*) ;;
*) fail "the refusal of an after naming a missing job: $out" ;;
esac
stop_kyud
