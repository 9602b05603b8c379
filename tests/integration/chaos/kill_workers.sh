#!/usr/bin/env bash
# Fault suite (issue 12), scenario 1: workers SIGKILLed at random.
#
# 3,000 short jobs (0-400 ms, tests/chaos/job.sh) through two kyud (3 workers
# each, lease 6 s), while a loop SIGKILLs a random worker of a random daemon
# every 200-500 ms for the first part of the run (until 60 % of the jobs are
# done, at most KILL_SECONDS). The supervisors restart them (with their
# crash-loop backoff); the jobs and held claims of a killed worker come back
# when their lease expires. Then: every job succeeded, none lost, none ran
# twice at once (tests/chaos/check.py), no worker died of anything but our
# SIGKILLs, both daemons drain and exit 0 on TERM.
#
# SOAK=1: 100,000 jobs, kills for up to 10 minutes (CHAOS_JOBS=N,
# KILL_SECONDS=S override either).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/chaos/chaos.sh"

WORKER_DEATHS_OK=1 # the ones we kill
if [ "${SOAK:-0}" = 1 ]; then
	N=${CHAOS_JOBS:-100000} KILL_SECONDS=${KILL_SECONDS:-600}
else
	N=${CHAOS_JOBS:-3000} KILL_SECONDS=${KILL_SECONDS:-20}
fi
lease=6
common=(kyud.workers=3 kyud.slots=8 kyud.lease="$lease" kyud.fence_margin=2
	job.max_attempts=50 job.backoff_base=1 job.backoff_cap=2 kyud.log_level=info)

chaos_watch_start
d_start a "${common[@]}"
d_start b "${common[@]}"
say "kyud a (pid ${D_PID[a]}: workers $(d_workers a)) and b (pid ${D_PID[b]}: workers $(d_workers b)) ready"

# A stream: 100 rows per INSERT, the first half before the kills start.
chunk=100
next=1
submit_some $((N / 2))

# The kill loop: K lines "EPOCH DAEMON WORKER_PID" in $T_DIR/kills.
: >"$T_DIR/kills"
(
	trap - EXIT
	set +e
	sups=("${D_PID[a]}" "${D_PID[b]}") names=(a b)
	end=$((SECONDS + KILL_SECONDS))
	while [ ! -e "$T_DIR/stop-kills" ] && [ "$SECONDS" -lt "$end" ]; do
		i=$((RANDOM % 2))
		ws=()
		{ read -r -a ws <"/proc/${sups[$i]}/task/${sups[$i]}/children"; } 2>/dev/null
		if [ "${#ws[@]}" -gt 0 ]; then
			w=${ws[RANDOM % ${#ws[@]}]}
			kill -KILL "$w" 2>/dev/null && echo "K $(now) ${names[$i]} $w" >>"$T_DIR/kills"
		fi
		sleep "0.$((200 + RANDOM % 300))"
	done
) &
CHAOS_BG+=($!)
kill_loop=$!
say "kill loop started (every 200-500 ms, up to $KILL_SECONDS s)"

# Keep submitting while the kills go on; stop them at 60 % done.
while kill -0 "$kill_loop" 2>/dev/null; do
	submit_some "$chunk"
	done_=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'")
	if [ "$done_" -ge $((N * 6 / 10)) ] && [ "$next" -gt "$N" ]; then
		touch "$T_DIR/stop-kills"
	fi
	sleep 0.5
done
wait "$kill_loop" 2>/dev/null || true
bg_done "$kill_loop"
kills=$(wc -l <"$T_DIR/kills")
say "kill loop ended: $kills worker(s) SIGKILLed ($(grep -c ' a ' "$T_DIR/kills" || true) of a, $(grep -c ' b ' "$T_DIR/kills" || true) of b), $(sql "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'") job(s) done"
submit_some "$N"

finished=0
chaos_wait_finished 45 && finished=1
say "all finished: $finished; workers a: $(d_workers a), b: $(d_workers b)"
kill -0 "${D_PID[a]}" 2>/dev/null || fail "kyud a died"
kill -0 "${D_PID[b]}" 2>/dev/null || fail "kyud b died"
d_term a 60
d_term b 60
# Orphaned jobs of killed workers ran on by themselves; give the last ones
# (at most 400 ms of sleep) time to end before the verdict looks for them.
sleep 1
logged=$(cat "$T_DIR"/a.log "$T_DIR"/b.log | grep -Ec 'kyud\[sup\]: worker [0-9]+ \(pid [0-9]+\) killed by signal 9' || true)
say "restarts logged: $logged SIGKILL deaths; longest restart backoff: $(grep -ho 'restarting in [0-9]* s' "$T_DIR"/a.log "$T_DIR"/b.log | sort -k3n | tail -1)"
chaos_check --worker-kills "$kills"
assert_eq "$kills" "$logged" "worker SIGKILL deaths in the logs (sent $kills)"
[ "$kills" -ge 5 ] || fail "only $kills kills were done"
[ "$finished" = 1 ] || fail "not every job finished (stalled, or the budget was spent)"
