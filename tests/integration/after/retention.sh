#!/usr/bin/env bash
# Retention and workflows.
#
# 1. An upstream that succeeded longer ago than [kyud] retention is kept
#    while a dependent may still read it (its result, its output): while
#    the dependent is blocked (it also waits for a second, slow upstream),
#    waiting (in a paused queue) and running (held at a gate); once the
#    dependent has ended and retention passed, all of them go. Each "kept"
#    is asserted only after a witness -- a job without dependents that
#    ended after the upstream -- was deleted: a retention delete has run
#    since the upstream became old enough.
# 2. A plain DELETE of an upstream that has not ended counts as its failure:
#    a dependent of policy succeeded is cancelled (naming it), one of policy
#    finished runs; for an upstream waiting, blocked (the middle of a
#    chain) or running. Deleting a dependent takes its edges with it.
. "$KYU_SRC/tests/lib.sh"

rec="echo \$KYU_JOB_ID >> $T_DIR/ran"
exists() { sql "SELECT GROUP_CONCAT(id ORDER BY id) FROM kyu_jobs WHERE id IN ($1)"; }
# witness NAME: a job without dependents, run and then deleted by retention.
witness() {
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'true')"
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id = '$1' AND status <> 'succeeded'" 0 60
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id = '$1'" 0 60
}

# ---- 2 first, with the default retention (a cancelled row must stay to be seen).
start_kyud kyud.workers=2 kyud.slots=8 kyud.poll_interval=1
exec {gate}>"$T_DIR/gate"
flock -x "$gate"
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('u', 'true', NOW(6) + INTERVAL 1 DAY);
     INSERT INTO kyu_jobs (id, command, after) VALUES ('ds', '$rec', '[\"u\"]');
     INSERT INTO kyu_jobs (id, command, after, after_policy) VALUES ('df', '$rec', '[\"u\"]', 'finished');
     INSERT INTO kyu_jobs (id, command, run_at) VALUES ('a', 'true', NOW(6) + INTERVAL 1 DAY);
     INSERT INTO kyu_jobs (id, command, after) VALUES ('b', '$rec', '[\"a\"]');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('c', '$rec', '[\"b\"]');
     INSERT INTO kyu_jobs (id, command, after, after_policy) VALUES ('cf', '$rec', '[\"b\"]', 'finished');
     INSERT INTO kyu_jobs (id, command) VALUES ('r', 'flock -s $T_DIR/gate true; $rec');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('rs', '$rec', '[\"r\"]');
     INSERT INTO kyu_jobs (id, command, after, after_policy) VALUES ('rf', '$rec', '[\"r\"]', 'finished')"
# Counted (kyu_settle's 'new' items done) and r running before the deletes.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('ds','df','b','c','cf','rs','rf') AND after_left = 1" 7 30
wait_for "SELECT status FROM kyu_jobs WHERE id = 'r' AND pid IS NOT NULL" running 30
b_seq=$(sql "SELECT seq FROM kyu_jobs WHERE id = 'b'")
sql "DELETE FROM kyu_jobs WHERE id IN ('u', 'b', 'r')"
wait_for "SELECT GROUP_CONCAT(CONCAT(id, ':', status) ORDER BY id) FROM kyu_jobs WHERE id IN ('ds','df','c','cf','rs','rf')" \
	c:cancelled,cf:succeeded,df:succeeded,ds:cancelled,rf:succeeded,rs:cancelled 60
for d in ds:u c:b rs:r; do
	assert_eq "${d#*:}	kyu: upstream job ${d#*:} ended deleted" \
		"$(sql "SELECT cancelled_by, error FROM kyu_jobs WHERE id = '${d%:*}'")" "${d%:*}: cancelled_by, error"
done
wait_for "SELECT COUNT(*) FROM kyu_after WHERE down_seq = $b_seq" 0 30
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'a'")" "a, whose dependent b was deleted"
# The deleted running job ends when its gate opens (its result finds no
# row), or earlier, killed by the lease renewal that finds its row gone:
# which comes first depends on the machine's pace, not on kyud.
flock -u "$gate"
exec {gate}>&-
wait_until 30 "r's command to end or be killed" \
	bash -c "grep -qx r $T_DIR/ran || grep -q 'job r: its row is gone' '$KYUD_LOG'"
stop_kyud
for j in ds c rs; do ! grep -qx "$j" "$T_DIR/ran" || fail "$j ran although its upstream was deleted"; done

# ---- 1: retention 2 s, a retention delete at every claim (poll every second).
sql "DELETE FROM kyu_jobs; INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"
start_kyud kyud.workers=2 kyud.slots=8 kyud.poll_interval=1 kyud.retention=2 kyud.cleanup_every=1
exec {gate1}>"$T_DIR/gate1"
flock -x "$gate1"
exec {gate2}>"$T_DIR/gate2"
flock -x "$gate2"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('up1', '$rec'), ('up2', 'flock -s $T_DIR/gate1 true; $rec');
     INSERT INTO kyu_jobs (id, command, queue, after) VALUES
       ('down', 'flock -s $T_DIR/gate2 true; $rec', 'held', '[\"up1\", \"up2\"]')"
wait_for "SELECT CONCAT(status, ' ', has_downstream) FROM kyu_jobs WHERE id = 'up1'" "succeeded 1" 30

# Blocked: down waits for up2.
witness w1
assert_eq "down,up1,up2" "$(exists "'up1','up2','down'")" "rows while down is blocked (up1 ended before w1)"
assert_eq "blocked running" "$(sql "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('down', 'up2')" | tr ',' ' ')" \
	"down, up2"

# Waiting: up2 ended, down is due but its queue is paused.
flock -u "$gate1"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'down'" waiting 60
witness w2
assert_eq "down,up1,up2" "$(exists "'up1','up2','down'")" "rows while down waits (up2 ended before w2)"

# Running: down holds at its gate.
sql "UPDATE kyu_queues SET paused = 0 WHERE name = 'held'"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'down' AND pid IS NOT NULL" running 60
witness w3
assert_eq "down,up1,up2" "$(exists "'up1','up2','down'")" "rows while down runs"

# Ended: all three go once retention has passed.
flock -u "$gate2"
exec {gate1}>&- {gate2}>&-
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('up1', 'up2', 'down')" 0 60
wait_for "SELECT (SELECT COUNT(*) FROM kyu_after) + (SELECT COUNT(*) FROM kyu_after_todo)" 0 30
stop_kyud
assert_log_lacks 'retention delete failed|settling workflows'

assert_eq "up1 up2 down" "$(grep -E '^(up1|up2|down)$' "$T_DIR/ran" | tr '\n' ' ' | sed 's/ $//')" "ran, in order"
