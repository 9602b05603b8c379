#!/usr/bin/env bash
# time_limit: a job that ignores SIGTERM gets SIGKILL kill_grace later; its
# whole process group is gone, and the row says so: failed when it was the
# last attempt, waiting for a retry otherwise, error "timed out after N s",
# signal 9.
. "$KYU_SRC/tests/lib.sh"

# backoff_base 60: the retried job stays waiting while we look at it.
start_kyud kyud.workers=1 job.kill_grace=1 job.backoff_base=60 job.backoff_cap=60
# `trap '' TERM` is inherited by the sleep (ignored signals survive exec), so
# only SIGKILL ends either of them. Each shell writes its own pid and its
# sleep's: the test need not catch them in the 2 s they live.
sql "INSERT INTO kyu_jobs (id, command, time_limit, max_attempts) VALUES
     ('last',  'trap \"\" TERM; sleep 30 & echo \$\$ \$! > $T_DIR/last.pids; wait; touch $T_DIR/last.done', 1, 1),
     ('retry', 'trap \"\" TERM; sleep 30 & echo \$\$ \$! > $T_DIR/retry.pids; wait; touch $T_DIR/retry.done', 1, 2)"

# 1 s limit + 1 s grace + bookkeeping.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE finished_at IS NOT NULL" 2 30
pids="$(cat "$T_DIR/last.pids") $(cat "$T_DIR/retry.pids")"
[ "$(wc -w <<<"$pids")" = 4 ] || fail "expected the pids of two shells and two sleeps, got '$pids'"
assert_eq "failed	1	NULL	9	timed out after 1 s" \
	"$(sql "SELECT status, attempts, IFNULL(exit_code, 'NULL'), \`signal\`, error FROM kyu_jobs WHERE id = 'last'")" \
	"last attempt: status, attempts, exit_code, signal, error"
assert_eq "waiting	1	NULL	9	timed out after 1 s	1" \
	"$(sql "SELECT status, attempts, IFNULL(exit_code, 'NULL'), \`signal\`, error, run_at > NOW(6) FROM kyu_jobs WHERE id = 'retry'")" \
	"attempt 1 of 2: status, attempts, exit_code, signal, error, run_at ahead"
# TERM was ignored: the attempt lasted the limit plus the grace, and was
# then killed rather than waited for (30 s): 2 s, with 18 s for the delays
# of a loaded machine (duration runs from the claim to the recorded end).
assert_eq 1 "$(sql "SELECT duration BETWEEN 1.9 AND 20 FROM kyu_jobs WHERE id = 'last'")" \
	"duration between 1.9 and 20 s (was $(sql "SELECT duration FROM kyu_jobs WHERE id = 'last'"))"

# Nothing of either job is left: not the shells, not the sleeps.
for _ in $(seq 150); do # 15 s: the sleeps would end by themselves at 30 s
	left=
	for p in $pids; do pid_alive "$p" && left="$left $p"; done
	[ -z "$left" ] && break
	sleep 0.1
done
[ -z "$left" ] || fail "processes of the timed-out jobs still running:$left"
! ps -o args= -p "$(descendants "$KYUD_PID" | paste -sd, -)" 2>/dev/null | grep '^sleep 30' >/dev/null ||
	fail "a 'sleep 30' is still among kyud's descendants"
[ ! -e "$T_DIR/last.done" ] || fail "the timed-out job 'last' ran to its end"
[ ! -e "$T_DIR/retry.done" ] || fail "the timed-out job 'retry' ran to its end"
assert_log_contains 'job last: time limit of 1 s reached; terminating'
assert_log_contains 'job last failed: timed out after 1 s'
assert_log_contains 'job retry will retry: timed out after 1 s'
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'retry'"
stop_kyud
