#!/usr/bin/env bash
# Jobs that misbehave, all at once on one worker:
# - one closes stdout and stderr at once and runs on: kyud does not take the
#   end of its output for its end; it succeeds when it exits;
# - one closes stdout only and writes to stderr later: that is captured;
# - two fork 1,000 sleeping children: one (subshells blocked opening a
#   FIFO nobody writes: a fork without an exec, the cheapest child) waits
#   for them and its 5 s time limit strikes while it forks or waits (1,000
#   forks take 1-25 s on a loaded VM: then the group is signalled mid-fork),
#   one (sleep 300 &) exits as soon as all are started; when either attempt
#   ends, none of its children survives (their pids, their process group,
#   and any process whose environment carries the job's KYU_JOB_ID);
# - two write without end (stdout, stderr) with a time limit: killed at the
#   limit, recorded failed / timed out, output capped at output_limit, and
#   the worker's memory (VmRSS) stays flat meanwhile;
# - one ignores SIGTERM (trap '' TERM; sleep 600) with time_limit 2 and
#   kill_grace 1: SIGKILL ends it, recorded as signal 9, timed out.
# No worker dies; a job submitted afterwards still runs.
. "$KYU_SRC/tests/lib.sh"

LIMIT=65536
start_kyud kyud.workers=1 job.max_attempts=1 job.kill_grace=1 job.output_limit=$LIMIT
worker=$(worker_pids | tr -d ' ')
mkfifo "$T_DIR/fifo"
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
rss0=$(rss_kb "$worker")
sup_rss0=$(rss_kb "$KYUD_PID")

# with_env ID: pids of processes whose environment has KYU_JOB_ID=ID.
with_env() { grep -lzx "KYU_JOB_ID=$1" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
# alive PIDFILE: how many of the pids listed in PIDFILE still run
# (zombies are dead).
alive() { ps -o stat= -p "$(paste -sd, "$1")" | grep -vc '^Z' || true; }
# On a failure, the test's cleanup kills kyud's descendants, but a job
# shell that is still forking goes on (re-parented to init): kill the
# process groups of the children the jobs listed, then clean up as usual.
abuse_exit() {
	local rc=$? g
	for g in $(cat "$T_DIR"/*.pids 2>/dev/null | xargs -r ps -o pgid= -p 2>/dev/null | sort -u); do
		[ "$g" -gt 1 ] && kill -KILL -- "-$g" 2>/dev/null
	done
	(exit "$rc")
	cleanup
}
trap abuse_exit EXIT

sql "INSERT INTO kyu_jobs (id, command, time_limit) VALUES
     ('closed', 'exec >&- 2>&-; sleep 2; touch $T_DIR/closed.done; exit 0', 80),
     ('stdout-closed', 'exec >&-; sleep 1; echo late >&2', 60),
     ('fork-wait', 'for i in \$(seq 1000); do { read x < $T_DIR/fifo; } & echo \$! >> $T_DIR/fork-wait.pids; done; wait', 5),
     ('fork-exit', 'for i in \$(seq 1000); do sleep 300 & echo \$! >> $T_DIR/fork-exit.pids; done; exit 0', 80),
     ('write-out', 'cat /dev/zero', 4),
     ('write-err', 'cat /dev/zero >&2', 4),
     ('ignore-term', 'trap \"\" TERM; echo \$\$ > $T_DIR/ignore-term.pid; sleep 600', 2)"

# Memory while the writers run (they end at their 4 s limit).
rss_max=$rss0
since=$SECONDS
until [ "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'write-%' AND status IN ('succeeded', 'failed')")" = 2 ]; do
	r=$(rss_kb "$worker") || fail "the worker (pid $worker) is gone"
	[ "$r" -gt "$rss_max" ] && rss_max=$r
	# Their limit is 4 s; the bound is for a hang (measured from their
	# INSERT, not from the test's start, which a loaded machine makes slow).
	[ $((SECONDS - since)) -lt 120 ] || fail "the writers did not end within 120 s"
	sleep 0.2
done

echo "${SECONDS}s: the writers ended"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 7 75
echo "${SECONDS}s: all ended"

touch "$T_DIR/fork-wait.pids"
spawned=$(sort -u "$T_DIR/fork-wait.pids" | wc -l)
echo "fork-wait forked $spawned children before its 5 s limit"
[ "$spawned" -gt 0 ] || fail "fork-wait forked nothing"
assert_eq 1000 "$(sort -u "$T_DIR/fork-exit.pids" | wc -l)" "children fork-exit spawned"
for id in fork-wait fork-exit; do
	pgid=$(sql "SELECT pid FROM kyu_jobs WHERE id = '$id'")
	case $pgid in '' | NULL) fail "$id: no pid recorded" ;; esac
	# The kill follows the end at once; allow for the reaping: a dead
	# child stays in the group as a zombie until the worker (its
	# subreaper) reaps it, later on a loaded machine.
	for _ in $(seq 150); do
		n=$(alive "$T_DIR/$id.pids")
		e=$(with_env "$id" | wc -l)
		left=$(ps -e -o pgid= | awk -v g="$pgid" '$1 == g' | wc -l)
		[ "$n" = 0 ] && [ "$e" = 0 ] && [ "$left" = 0 ] && break
		sleep 0.2
	done
	[ "$n" = 0 ] || fail "$n of the 1,000 children of $id still run after its attempt ended"
	[ "$e" = 0 ] || fail "processes with KYU_JOB_ID=$id still run: $(with_env "$id" | sed -n 1,5p | tr '\n' ' ')"
	assert_eq 0 "$left" "processes left in the process group $pgid of $id"
done
p=$(cat "$T_DIR/ignore-term.pid")
pid_alive "$p" && fail "the shell of ignore-term (pid $p) still runs"
assert_eq 0 "$(with_env ignore-term | wc -l)" "processes of ignore-term left"

echo "${SECONDS}s: no process left"
# ---- the rows
row() { sql "SELECT CONCAT_WS(' | ', status, attempts, IFNULL(exit_code, 'NULL'), IFNULL(\`signal\`, 'NULL'), IFNULL(error, 'NULL'))
             FROM kyu_jobs WHERE id = '$1'"; }
assert_eq "succeeded | 1 | 0 | NULL | NULL" "$(row closed)" "closed"
[ -e "$T_DIR/closed.done" ] || fail "closed: ran on after closing its output, but not to its end"
assert_eq "1	1" "$(sql "SELECT output IS NULL, duration >= 1.5 FROM kyu_jobs WHERE id = 'closed'")" \
	"closed: no output, lasted its 2 s (duration $(sql "SELECT duration FROM kyu_jobs WHERE id = 'closed'"))"
assert_eq "succeeded | 1 | 0 | NULL | NULL" "$(row stdout-closed)" "stdout-closed"
assert_eq 1 "$(sql "SELECT output = 'late\n' FROM kyu_jobs WHERE id = 'stdout-closed'")" "stdout-closed: output 'late\\n'"
# SIGTERM to the group ends the shell's wait, the sleeps, the shell.
assert_eq "failed | 1 | NULL | 15 | timed out after 5 s" "$(row fork-wait)" "fork-wait"
assert_eq "succeeded | 1 | 0 | NULL | NULL" "$(row fork-exit)" "fork-exit"
for id in write-out write-err; do
	assert_eq "failed | 1 | NULL | 15 | timed out after 4 s" "$(row "$id")" "$id"
	assert_eq "1	1" "$(sql "SELECT LENGTH(output) BETWEEN $LIMIT - 64 AND $LIMIT, output LIKE '%[kyu: % bytes omitted]%'
	                  FROM kyu_jobs WHERE id = '$id'")" "$id: output capped at $LIMIT bytes, with the marker"
done
assert_eq "failed | 1 | NULL | 9 | timed out after 2 s" "$(row ignore-term)" "ignore-term"

rss1=$(rss_kb "$worker")
sup_rss1=$(rss_kb "$KYUD_PID")
echo "worker VmRSS: $rss0 kB before, at most $rss_max kB while two jobs wrote without end, $rss1 kB after"
echo "supervisor VmRSS: $sup_rss0 kB before, $sup_rss1 kB after"
[ "$rss_max" -le $((rss0 + 16384)) ] ||
	fail "the worker grew from $rss0 kB to $rss_max kB while jobs wrote without end (output_limit $LIMIT)"

assert_log_contains 'job write-out: time limit of 4 s reached; terminating'
sql "INSERT INTO kyu_jobs (id, command) VALUES ('after', 'true')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'after'" succeeded 20
assert_eq "$worker" "$(worker_pids | tr -d ' ')" "worker pid (not restarted)"
stop_kyud
