#!/usr/bin/env bash
# An idle kyud costs the database one claim (an UPDATE that finds nothing
# and a SELECT of the next due time) per poll_interval in total, however
# many workers it has: 8 workers cost what 1 does. Statements are counted
# on the server (per-user statistics of a user only this kyud uses).
. "$KYU_SRC/tests/lib.sh"

POLL=2
WINDOW=8
# Polls that fit in the window at the shortest jittered interval (0.9 x
# POLL), one more for the phase; two statements each, two to spare; and
# one refresh of the daemon's row of kyu_daemons (every 20 s) that may
# fall in the window.
MAX_POLLS=$((WINDOW * 10 / (POLL * 9) + 1))
MAX_STATEMENTS=$((2 * MAX_POLLS + 2 + REGISTRY_STATEMENTS))

use_own_db_user

# idle_statements WORKERS: set idle_n to the statements kyud sent during
# WINDOW seconds of idleness (after its start-up: connections, session
# set-up, first claims, retention delete; on a loaded machine 8 workers
# take well over a second for it, so the window starts only once every
# worker has been quiet for a second).
idle_statements() {
	local s0 s1
	# shellcheck disable=SC2086
	start_kyud $T_USER_KV kyud.workers="$1" kyud.poll_interval=$POLL
	wait_workers_idle "$1"
	s0=$(db_statements)
	sleep $WINDOW
	s1=$(db_statements)
	stop_kyud
	idle_n=$((s1 - s0))
}

idle_statements 8
n8=$idle_n
echo "idle, 8 workers, poll_interval $POLL: $n8 statement(s) in $WINDOW s"
[ "$n8" -ge 2 ] || fail "8 idle workers sent $n8 statements in $WINDOW s: not even one poll was counted"
[ "$n8" -le "$MAX_STATEMENTS" ] ||
	fail "8 idle workers sent $n8 statements in $WINDOW s (at most $MAX_STATEMENTS: 2 per poll interval in total)"

idle_statements 1
n1=$idle_n
echo "idle, 1 worker, poll_interval $POLL: $n1 statement(s) in $WINDOW s"
[ "$n1" -ge 2 ] || fail "1 idle worker sent $n1 statements in $WINDOW s: not even one poll was counted"
[ "$n1" -le "$MAX_STATEMENTS" ] ||
	fail "1 idle worker sent $n1 statements in $WINDOW s (at most $MAX_STATEMENTS: 2 per poll interval)"
# With the jitter (1.8-2.2 s) an 8 s window holds 3 to 5 polls, whatever
# the number of workers: two polls' worth of slack. A poll per worker would
# cost 8 times as much.
[ "$n8" -le $((n1 + 4 + REGISTRY_STATEMENTS)) ] || fail "8 idle workers cost more than 1: $n8 statements against $n1"
