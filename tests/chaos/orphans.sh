# shellcheck shell=bash
# One scenario of issue 44, item 1, run by tests/integration/chaos/orphans_*.sh
# (sourced after tests/lib.sh and tests/chaos/chaos.sh):
#
#     orphans_run sup|worker|all
#
# kyud a (one worker, 4 slots, lease 6 s, fence_margin 2) runs four jobs
# whose first attempt lasts 30 s and twelve short ones. Once the four long
# ones run, part of kyud is SIGKILLed:
#   sup     the supervisor alone (its worker is orphaned, drains and
#           interrupts them after shutdown_grace);
#   worker  the worker alone (the supervisor restarts it);
#   all     the supervisor and all its children at once (kill -9 of
#           every kyud pid: nothing of kyud is left to stop anything);
# and a is started again at once (sup, all). Then: every job succeeded,
# none lost, every long job ran at least twice, and no attempt started
# while an earlier attempt of its job had a process alive
# (tests/chaos/check.py's overlap: the attempt's flock, held by every
# process of the attempt, here the job's shell and the sleep it forks).

orphans_run() {
	local mode=$1 worker t_kill gone p left n
	# shellcheck disable=SC2034 # read by tests/lib.sh's checks
	WORKER_DEATHS_OK=1 # the worker we kill, in "worker" and "all"
	# No FIFO: job.sh sleeps in a child process (sleep(1)) that inherits
	# the attempt's lock, so the whole process group must go, not only
	# its leader.
	rm -f "$T_DIR/never"
	chaos_watch_start
	d_start a kyud.workers=1 kyud.slots=4 kyud.lease=6 kyud.fence_margin=2 kyud.shutdown_grace=2 \
		job.kill_grace=1 job.max_attempts=5 job.backoff_base=1 job.backoff_cap=2
	chaos_submit long 1 4 100 300 30000
	wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running' AND pid IS NOT NULL" 4 60
	for _ in $(seq 600); do [ "$(grep -c '^S long' "$CHAOS_MARKS")" -ge 4 ] && break; sleep 0.1; done
	[ "$(grep -c '^S long' "$CHAOS_MARKS")" -ge 4 ] || fail "the four long jobs did not all start"
	chaos_submit j 1 12 100 300
	# The worker is the long jobs' parent (the supervisor may have other
	# children than workers).
	worker=$(awk '$1 == "S" && $2 ~ /^long/ { print $6 }' "$CHAOS_MARKS" | sort -u | tr '\n' ' ' | sed 's/ $//')
	[[ $worker =~ ^[0-9]+$ ]] || fail "expected one worker to run the long jobs, found '$worker'"
	sleep 1

	t_kill=$(now)
	case $mode in
	sup)
		CHAOS_ORPHANS+=("$worker")
		d_kill a >/dev/null
		d_launch a "$T_DIR/a2.log"
		say "SIGKILLed a's supervisor (its worker $worker orphaned); a restarted (pid ${D_PID[a]})"
		;;
	worker)
		kill -KILL "$worker"
		say "SIGKILLed a's worker $worker; the supervisor restarts it"
		;;
	all)
		d_kill a all >/dev/null
		d_launch a "$T_DIR/a2.log"
		say "SIGKILLed a's supervisor and its children (worker $worker) at once; a restarted (pid ${D_PID[a]})"
		;;
	*) fail "orphans_run: unknown mode $mode" ;;
	esac

	# For the record (the verdict is the checker's): when the first
	# attempts' leaders were gone, counted from the kill (so including the
	# restart, for sup and all).
	left=4
	while [ "$left" -gt 0 ] && awk -v a="$t_kill" -v b="$(now)" 'BEGIN { exit !(b - a < 40) }'; do
		left=0
		# shellcheck disable=SC2013 # one pid a line
		for p in $(awk '$1 == "S" && $2 ~ /^long/ && $3 == 1 { print $5 }' "$CHAOS_MARKS"); do
			pid_alive "$p" && left=$((left + 1))
		done
		sleep 0.1
	done
	gone=$(awk -v a="$t_kill" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')
	say "first attempts of the long jobs: $left alive $gone s after the kill"

	chaos_wait_finished 45 || true
	[ "$mode" != sup ] || wait_gone "$worker" 30 "a's orphaned worker"
	d_term a 60
	chaos_check
	for p in 1 2 3 4; do
		n=$(awk -v id="long$p" '$1 == "S" && $2 == id' "$CHAOS_MARKS" | wc -l)
		[ "$n" -ge 2 ] || fail "long$p started $n time(s): its first attempt was not cut short"
	done
	say "every long job ran again, never beside its earlier attempt"
}
