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
# the refreshes of the daemon's row of kyu_daemons (every 20 s) that may
# fall in the window. The window is its real length: on a loaded machine
# the readings around the sleep take a while themselves.
max_statements() { echo $((2 * $(max_polls "$1" $POLL) + 2 + REGISTRY_STATEMENTS * $(max_registry "$1"))); }

use_own_db_user

# idle_statements WORKERS: set idle_n to the statements kyud sent during
# WINDOW seconds of idleness (after its start-up: connections, session
# set-up, first claims, retention delete; on a loaded machine 8 workers
# take well over a second for it, so the window starts only once every
# worker has been quiet for a second).
idle_statements() {
	# shellcheck disable=SC2086
	start_kyud $T_USER_KV kyud.workers="$1" kyud.poll_interval=$POLL
	wait_workers_idle "$1"
	count_statements $WINDOW
	stop_kyud
	idle_n=$IDLE_N idle_ms=$IDLE_MS
}

# check_idle WORKERS WHAT: measure, print, and bound by the window's polls.
check_idle() {
	local max
	idle_statements "$1"
	max=$(max_statements "$idle_ms")
	echo "idle, $2, poll_interval $POLL: $idle_n statement(s) in $idle_ms ms"
	[ "$idle_n" -ge 2 ] || fail "$2 sent $idle_n statements in $idle_ms ms: not even one poll was counted"
	[ "$idle_n" -le "$max" ] ||
		fail "$2 sent $idle_n statements in $idle_ms ms (at most $max: 2 per poll interval in total)"
}

check_idle 8 "8 idle workers"
n8=$idle_n ms8=$idle_ms
check_idle 1 "1 idle worker"
n1=$idle_n ms1=$idle_ms
# With the jitter (1.8-2.2 s) an 8 s window holds 3 to 5 polls, whatever
# the number of workers: two polls' worth of slack, and two statements for
# each poll that the 8-worker window, if longer, may hold more. A poll per
# worker would cost 8 times as much.
more=$(($(max_polls "$ms8" $POLL) - $(max_polls "$ms1" $POLL)))
[ "$more" -gt 0 ] || more=0
[ "$n8" -le $((n1 + 4 + 2 * more + REGISTRY_STATEMENTS * $(max_registry "$ms8"))) ] || fail "8 idle workers cost more than 1: $n8 statements against $n1"
