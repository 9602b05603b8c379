#!/usr/bin/env bash
# Fault suite (issue 12), scenario 2: a supervisor SIGKILLed under load.
#
# kyud a (2 workers) and kyud b (2 workers) run jobs of 1-3 s, and 8 jobs
# whose first attempt lasts 20 s (longer than a's shutdown_grace, so that the
# orphaned workers must interrupt them). a's supervisor is SIGKILLed while its
# workers run jobs. Then:
#   - each orphaned worker logs "supervisor went away; draining" and starts
#     no job after the kill (no S mark whose parent is an orphaned worker
#     later than 5 s after the supervisor died; no "attempt N started" line of that
#     worker after its "went away" line);
#   - each exits by itself within shutdown_grace + kill_grace + 15 s (the
#     drain: jobs get shutdown_grace, then TERM, KILL after kill_grace, and
#     the interrupted ones are put back as due);
#   - a is restarted at once with the same ini (own log, a2.log) and takes
#     part; every job ends succeeded, none lost, none ran twice at once
#     (tests/chaos/check.py).
# SOAK=1: three rounds of kill/restart over 600 jobs (CHAOS_JOBS=N).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

grace=4 kill_grace=2 lease=6
if [ "${SOAK:-0}" = 1 ]; then N=${CHAOS_JOBS:-600} ROUNDS=3; else N=${CHAOS_JOBS:-120} ROUNDS=1; fi
common=(kyud.workers=2 kyud.slots=4 kyud.lease="$lease" kyud.fence_margin=2 kyud.shutdown_grace="$grace"
	job.kill_grace="$kill_grace" job.max_attempts=50 job.backoff_base=1 job.backoff_cap=2)
# 15 s of slack: a loaded machine takes a while to put the interrupted
# jobs back; an orphan that never leaves is caught all the same.
bound=$((grace + kill_grace + 15))

chaos_watch_start
d_start a "${common[@]}"
d_start b "${common[@]}"
chaos_submit long 1 8 1000 2000 20000
chaos_submit j 1 "$N" 1000 3000

round=0 problems=()
while [ "$round" -lt "$ROUNDS" ]; do
	round=$((round + 1))
	alog=${D_LOG[a]}
	# Wait until a's workers run jobs (both, if they can).
	deadline=$((SECONDS + 60))
	while :; do
		ws=$(d_workers a)
		busy=0
		for w in $ws; do
			awk -v w="$w" '$1 == "S" && $6 == w { n++ } $1 == "E" && $6 == w { n-- } END { exit !(n > 0) }' \
				"$CHAOS_MARKS" && busy=$((busy + 1))
		done
		[ "$busy" -ge 2 ] && break
		[ "$SECONDS" -lt "$deadline" ] || fail "a's workers ($ws) never both ran jobs"
		sleep 0.2
	done
	sleep 1
	# shellcheck disable=SC2206
	orphans=($ws)
	running_before=$(awk -v ws=" $ws " '$1 == "S" && index(ws, " " $6 " ") { k = $2 " " $3 " " $5; s[k] = 1 }
		$1 == "E" { delete s[$2 " " $3 " " $5] } END { for (k in s) n++; print n + 0 }' "$CHAOS_MARKS")
	# worker index of each orphan, from the supervisor's "worker N started (pid P)"
	declare -A idx=()
	for w in "${orphans[@]}"; do
		idx[$w]=$(sed -n "s/^kyud\[sup\]: worker \([0-9]*\) started (pid $w)\$/\1/p" "$alog" | tail -1)
		[ -n "${idx[$w]}" ] || fail "no 'worker N started (pid $w)' line in $alog"
	done
	from=$(($(wc -l <"$alog") + 1))
	t_kill=$(now)
	d_kill a >/dev/null
	# d_kill returns once the supervisor is reaped: its sockets are closed
	# by then. Dying can take a while after the signal (an ASan process
	# tears down a huge address space first), and nothing can see it sooner.
	t_dead=$(now)
	CHAOS_ORPHANS+=("${orphans[@]}") # killed on exit if they outlive the test
	say "round $round: SIGKILLed a's supervisor; orphaned workers ${orphans[*]} (running $running_before job(s))"

	# Restart a at once, same ini, own log.
	d_launch a "$T_DIR/a$((round + 1)).log"
	say "a restarted (pid ${D_PID[a]}, log a$((round + 1)).log)"

	# The orphans exit by themselves within the bound.
	exit_at=()
	for w in "${orphans[@]}"; do
		while pid_alive "$w"; do
			if awk -v a="$t_kill" -v b="$(now)" -v m="$bound" 'BEGIN { exit !(b - a > m) }'; then
				problems+=("orphaned worker $w still alive $bound s after its supervisor was killed")
				kill -KILL "$w" 2>/dev/null || true
				break
			fi
			sleep 0.1
		done
		exit_at+=("$(awk -v a="$t_kill" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')")
	done
	say "orphaned workers ${orphans[*]} gone after ${exit_at[*]} s (bound: shutdown_grace $grace + kill_grace $kill_grace + 15 = $bound s)"

	for w in "${orphans[@]}"; do
		i=${idx[$w]}
		tail -n +"$from" "$alog" | grep "^kyud\[worker $i\]: supervisor went away; draining" >/dev/null ||
			problems+=("orphaned worker $i (pid $w) did not log 'supervisor went away; draining'")
		late=$(tail -n +"$from" "$alog" | awk -v p="kyud[worker $i]:" '
			index($0, p) == 1 && /supervisor went away/ { gone = 1; next }
			gone && index($0, p) == 1 && /attempt [0-9]+ started/' | sed -n 1,3p)
		[ -z "$late" ] || problems+=("orphaned worker $i (pid $w) started jobs after it saw the supervisor go: $late")
		# A job forked just before the death writes its S mark only once
		# bash runs, which on a loaded machine can be seconds later: 5 s of
		# slack (the log check above is the exact one). An orphan that
		# missed the death would go on starting jobs (they last 1-3 s) for
		# its whole life, well past that.
		late=$(awk -v w="$w" -v t="$t_dead" '$1 == "S" && $6 == w && $4 > t + 5 { print $2 "#" $3 }' "$CHAOS_MARKS" | sed -n 1,5p | tr '\n' ' ')
		[ -z "$late" ] || problems+=("orphaned worker pid $w started jobs more than 5 s after its supervisor died: $late")
	done
	echo "  orphaned workers' log after the kill:"
	tail -n +"$from" "$alog" | grep -Ev 'job .* (attempt [0-9]+ started|succeeded)' | sed 's/^/    /' | sed -n 1,20p
	unset idx
done

finished=0
chaos_wait_finished 60 && finished=1
n_a=$(cat "$T_DIR"/a[2-9].log | grep -c 'attempt [0-9]* started' || true)
say "all finished: $finished; attempts started by the restarted a: $n_a"
d_term a 60
d_term b 60
chaos_check
for p in "${problems[@]}"; do echo "PROBLEM: $p"; done
[ "${#problems[@]}" = 0 ] || fail "${#problems[@]} problem(s) with the orphaned workers (above)"
[ "$finished" = 1 ] || fail "not every job finished"
[ "$n_a" -gt 0 ] || fail "the restarted kyud a ran nothing"
# The interrupted long jobs were put back and run again, not counted.
interrupted=$(grep -c 'interrupted\|shutdown grace over' "$T_DIR/a.log" || true)
say "lines about interrupted jobs in a.log: $interrupted"
