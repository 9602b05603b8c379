# shellcheck shell=bash
# Helpers of the fault suite (tests/integration/chaos/*.sh,
# lease/chaos_orphan_jobs.sh, lease/stopped_worker.sh), sourced after
# tests/lib.sh:
#
#     . "$KYU_SRC/tests/lib.sh"
#     . "$KYU_SRC/tests/chaos/chaos.sh"
#     d_start a kyud.workers=2             # kyud "a": $T_DIR/a.ini, a.log
#     chaos_submit j 1 1000 0 400          # jobs j1..j1000 of tests/chaos/job.sh
#     chaos_wait_finished 60
#     d_term a
#     chaos_check                          # tests/chaos/check.py: the verdict
#
# Any number of daemons by name (D_PID[name], D_LOG[name], D_INI[name],
# D_T0[name]: when it was last launched);
# every exit status is written to $T_DIR/exits with what the test expected,
# and the checker counts the differences as crashes. On exit every daemon,
# worker and job still alive is killed, and background helpers stopped.
#
# SOAK=1 (or CHAOS_JOBS=N) makes a test run its long version: minutes, not
# for CI. Each test documents what it scales.

CHAOS_LIB=$KYU_SRC/tests/chaos
CHAOS_JOB=$CHAOS_LIB/job.sh
CHAOS_MARKS=$T_DIR/marks
CHAOS_DEATHS=$T_DIR/deaths
declare -A D_PID=() D_LOG=() D_INI=() D_T0=()
CHAOS_BG=()      # background helpers (kill loops) to stop on exit; bg_done when reaped
CHAOS_ORPHANS=() # workers whose supervisor was killed, in case they outlive the test
WATCH_PID=
mkdir -p "$T_DIR/locks"
mkfifo "$T_DIR/never" # the jobs sleep on it (tests/chaos/job.sh)
: >"$CHAOS_MARKS"
: >"$CHAOS_DEATHS"
: >"$T_DIR/ids"
: >"$T_DIR/exits"

now() { echo "${EPOCHREALTIME/,/.}"; }
# What a test may spend before its verdict (budget_left).
if [ "${SOAK:-0}" = 1 ]; then BUDGET=${BUDGET:-86400}; else BUDGET=${BUDGET:-270}; fi
# say MSG: progress line with seconds since the test started.
CHAOS_T0=$(now)
say() { awk -v a="$CHAOS_T0" -v b="$(now)" -v m="$*" 'BEGIN { printf "[%6.1f s] %s\n", b - a, m }'; }

chaos_exit() {
	local rc=$? n p
	set +e
	for p in "${CHAOS_BG[@]}"; do kill -KILL "$p" 2>/dev/null; done
	for p in "${CHAOS_ORPHANS[@]}"; do
		# only if the pid is still a kyud worker of this test
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -F -- "--worker" >/dev/null &&
			tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -F "$T_DIR/" >/dev/null &&
			kill -KILL "$p" 2>/dev/null
	done
	for n in "${!D_PID[@]}"; do
		p=${D_PID[$n]}
		[ -n "$p" ] || continue
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$p") "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	chaos_kill_orphans
	if [ -n "$WATCH_PID" ]; then
		kill -TERM "$WATCH_PID" 2>/dev/null
		wait "$WATCH_PID" 2>/dev/null
	fi
	# CHAOS_KEEP=1: keep the run's directory (logs, marks, table) even when
	# it passed, as $T_DIR.kept, for the figures.
	if [ "${CHAOS_KEEP:-0}" = 1 ]; then
		rm -rf "$T_DIR.kept"
		cp -a "$T_DIR" "$T_DIR.kept" 2>/dev/null
	fi
	if [ "$rc" != 0 ]; then
		for n in "${!D_LOG[@]}"; do
			echo "---- ${D_LOG[$n]} (kyud $n), last lines other than job started/succeeded/acquired:" >&2
			grep -Ev 'job .* (attempt [0-9]+ started|succeeded)|acquired [0-9]+ job' "${D_LOG[$n]}" | tail -n 12 >&2
		done
	fi
	if [ -n "$PRIVATE_DB_PORT" ]; then
		(exit "$rc")
		private_db_exit
	else
		(exit "$rc")
		cleanup
	fi
}
trap chaos_exit EXIT

# bg_done PID: a background helper was reaped (its pid may be reused).
bg_done() {
	local i
	for i in "${!CHAOS_BG[@]}"; do [ "${CHAOS_BG[$i]}" != "$1" ] || unset "CHAOS_BG[$i]"; done
}

# chaos_kill_orphans: kill (process group and all) every attempt of this
# test's jobs still alive -- orphans of SIGKILLed workers keep running in
# their own sessions. By pid, from the S marks, checked against the command
# line so that a recycled pid is left alone.
chaos_kill_orphans() {
	local p
	# shellcheck disable=SC2013 # one pid a line
	for p in $(awk '$1 == "S" { print $5 }' "$CHAOS_MARKS" 2>/dev/null | sort -un); do
		[ -r "/proc/$p/cmdline" ] || continue
		tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -F "$CHAOS_JOB $T_DIR " >/dev/null || continue
		kill -KILL -- "-$p" "$p" 2>/dev/null
	done
	return 0
}

# chaos_private_db: private_db_start (tests/lib.sh) keeping this file's exit trap.
chaos_private_db() {
	private_db_start
	trap chaos_exit EXIT
}

# private_db_pid: the private mariadbd's pid (from its pid file).
private_db_pid() { cat "$PRIVATE_DB_DIR/mysqld.pid"; }

# ---------------------------------------------------------------- daemons

# d_start NAME [section.key=value ...]: write $T_DIR/NAME.ini (tests/lib.sh
# defaults + overrides) and launch it.
d_start() {
	local name=$1
	shift
	D_INI[$name]=$T_DIR/$name.ini
	write_ini "${D_INI[$name]}" "$@"
	d_launch "$name"
}

# d_launch NAME [LOG]: start kyud NAME with its ini (again), stderr appended
# to LOG (default $T_DIR/NAME.log); return once it says ready, or, when its
# database cannot be reached, that it waits for it (kyud reports ready to
# systemd only with a database).
d_launch() {
	local name=$1 from deadline
	D_LOG[$name]=${2:-${D_LOG[$name]:-$T_DIR/$name.log}}
	touch "${D_LOG[$name]}"
	from=$(($(wc -l <"${D_LOG[$name]}") + 1))
	# shellcheck disable=SC2034 # read by the tests
	D_T0[$name]=$(now)
	env --default-signal "${VALGRIND[@]}" "$KYUD" -c "${D_INI[$name]}" 2>>"${D_LOG[$name]}" &
	D_PID[$name]=$!
	# A bound for a hang, not a figure: a loaded machine takes 10 s or more.
	deadline=$(($(date +%s) + 60 * KYU_TIME_SCALE))
	until tail -n +"$from" "${D_LOG[$name]}" |
		grep -E 'kyud\[sup\]: (ready:|.*waiting for the database)' >/dev/null; do
		if ! kill -0 "${D_PID[$name]}" 2>/dev/null; then
			local rc=0
			wait "${D_PID[$name]}" || rc=$?
			D_PID[$name]=
			echo "$name $rc ready" >>"$T_DIR/exits"
			fail "kyud $name exited with status $rc before it was ready"
		fi
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud $name not ready after $((60 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# children PID: PID's children, from /proc without a fork (pgrep scans all of
# /proc and can take seconds on a loaded machine).
children() {
	local c=''
	{ read -r c <"/proc/$1/task/$1/children"; } 2>/dev/null || true
	echo "$c"
}

# d_workers NAME: the workers of kyud NAME (its supervisor's children).
d_workers() { children "${D_PID[$1]}"; }

# d_reap NAME TIMEOUT EXPECTED: wait for kyud NAME to exit; record its status.
d_reap() {
	local name=$1 deadline=$(($(date +%s) + $2)) rc=0
	while kill -0 "${D_PID[$name]}" 2>/dev/null; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "$name still-running $3" >>"$T_DIR/exits"
			fail "kyud $name (pid ${D_PID[$name]}) still running $2 s after it was told to stop"
		fi
		sleep 0.1
	done
	{ wait "${D_PID[$name]}"; } 2>/dev/null || rc=$?
	D_PID[$name]=
	echo "$name $rc $3" >>"$T_DIR/exits"
	[ "$rc" = "$3" ] || say "kyud $name exited with status $rc, expected $3"
}

# d_term NAME [TIMEOUT]: SIGTERM (drain), expect exit status 0.
d_term() {
	kill -TERM "${D_PID[$1]}" 2>/dev/null || true
	d_reap "$1" "${2:-60}" 0
}

# d_kill NAME [all]: SIGKILL the supervisor (and its workers with "all", at
# once: a host crash, except that the jobs live on in their own sessions).
# Prints the workers it saw.
d_kill() {
	local name=$1 ws rc=0
	ws=$(d_workers "$name")
	if [ "${2:-}" = all ]; then
		# shellcheck disable=SC2086
		kill -KILL "${D_PID[$name]}" $ws 2>/dev/null || true
	else
		kill -KILL "${D_PID[$name]}" 2>/dev/null || true
	fi
	# SIGKILL cannot be ignored: it is gone at once (the braces keep bash's
	# "Killed" notice out of the output).
	{ wait "${D_PID[$name]}"; } 2>/dev/null || rc=$?
	D_PID[$name]=
	echo "$name $rc 137" >>"$T_DIR/exits"
	echo "$ws"
}

# ---------------------------------------------------------------- jobs

# chaos_submit PREFIX FROM TO MIN_MS MAX_MS [FIRST_MS]: insert jobs
# PREFIXFROM..PREFIXTO running tests/chaos/job.sh (argv, no shell).
chaos_submit() {
	local p=$1 from=$2 to=$3 min=$4 max=$5 first=${6:-}
	local extra=""
	[ -z "$first" ] || extra=", '$first'"
	sql "INSERT INTO kyu_jobs (id, argv)
	     SELECT CONCAT('$p', seq), JSON_ARRAY('/bin/bash', '$CHAOS_JOB', '$T_DIR', '$min', '$max'$extra)
	     FROM seq_${from}_to_${to}"
	seq "$from" "$to" | sed "s/^/$p/" >>"$T_DIR/ids"
}

# chaos_unfinished: rows not finished yet.
chaos_unfinished() {
	sql "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')"
}

# budget_left: seconds left of BUDGET (default 270: ctest stops a test at
# 300 s, tests/CMakeLists.txt, and the verdict must still get to run; SOAK=1:
# a day), at least 10.
budget_left() {
	awk -v a="$CHAOS_T0" -v b="$(now)" -v B="$BUDGET" 'BEGIN { l = B - (b - a); print (l < 10 ? 10 : int(l)) }'
}

# chaos_wait_finished [STALL_S]: until every row is finished. How long that
# takes is the machine's throughput, not the point, so it gives up only when
# the count of unfinished rows has not moved for STALL_S seconds (default
# 45: longer than a lease, a retry backoff and a worker restart backoff of
# a few kills), or when the test's budget is spent; then it returns 1, so
# that the checker still runs and names what is stuck.
chaos_wait_finished() {
	local stall=${1:-45} left last="" since=$SECONDS cap
	cap=$((SECONDS + $(budget_left)))
	while :; do
		left=$(chaos_unfinished 2>/dev/null) || left="?"
		[ "$left" = 0 ] && return 0
		if [ "$left" != "$last" ]; then
			last=$left
			since=$SECONDS
		fi
		if [ $((SECONDS - since)) -ge "$stall" ]; then
			say "no progress for $stall s: still $left row(s) unfinished"
			return 1
		fi
		if [ "$SECONDS" -ge "$cap" ]; then
			say "test budget ($BUDGET s) spent: still $left row(s) unfinished"
			return 1
		fi
		sleep 0.5
	done
}

# ---------------------------------------------------------------- watching

chaos_watch_start() {
	python3 "$CHAOS_LIB/watch.py" "$CHAOS_MARKS" "$CHAOS_DEATHS" 1800 &
	WATCH_PID=$!
}

chaos_watch_stop() {
	[ -n "$WATCH_PID" ] || return 0
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); printf "liveness watcher used %.1f s of CPU\n", ($12 + $13) / hz }' \
		"/proc/$WATCH_PID/stat" 2>/dev/null || true
	kill -TERM "$WATCH_PID" 2>/dev/null || true
	wait "$WATCH_PID" 2>/dev/null || true
	WATCH_PID=
}

# proc_sample PID: "RSS_KIB FDS" of a process.
proc_sample() {
	local rss fds
	rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	fds=$(find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l)
	echo "${rss:-0} $fds"
}

# zombies_under PID: the pid of every zombie among PID's descendants.
zombies_under() {
	local p
	for p in $(descendants "$1"); do
		[ "$(ps -o stat= -p "$p" 2>/dev/null | cut -c1)" = Z ] && echo "$p"
	done
	return 0
}

# ---------------------------------------------------------------- verdict

# chaos_dump_table: kyu_jobs as the checker reads it (a test whose jobs live
# in several databases redefines it).
CHAOS_COLUMNS="id, status, attempts, tempfails, exit_code, \`signal\`, owner, pid, started_at,
	finished_at, REPLACE(REPLACE(error, '\t', ' '), '\n', ' ') AS error"
chaos_dump_table() {
	root_sql -B -D "$T_DB" -e "SELECT $CHAOS_COLUMNS FROM kyu_jobs ORDER BY seq"
}

# chaos_check [check.py options]: dump the table, run the checker on every
# log of this test; fails the test on any violation.
# shellcheck disable=SC2120 # options are optional
chaos_check() {
	local logs=() n rc=0
	chaos_watch_stop
	chaos_dump_table >"$T_DIR/table.tsv"
	# Every kyud log of the test, the ones of earlier runs of a daemon too
	# (a restarted kyud may log elsewhere): all *.log but the servers' own.
	for n in "$T_DIR"/*.log; do
		case ${n##*/} in private-db.log | relay*.log) ;; *) logs+=(--log "$n") ;; esac
	done
	python3 "$CHAOS_LIB/check.py" --marks "$CHAOS_MARKS" --deaths "$CHAOS_DEATHS" \
		--table "$T_DIR/table.tsv" --locks "$T_DIR/locks" --ids "$T_DIR/ids" \
		--exits "$T_DIR/exits" "${logs[@]}" "$@" | tee "$T_DIR/check.out" || rc=$?
	[ "$rc" = 0 ] || fail "chaos check found violations (above; table in $T_DIR/table.tsv)"
}

# submit_some COUNT: the next COUNT of jobs j$next..j$N (short, 0-400 ms);
# the caller sets N and next=1.
submit_some() {
	local to=$((next + $1 - 1))
	[ "$to" -le "$N" ] || to=$N
	[ "$next" -le "$to" ] || return 0
	chaos_submit j "$next" "$to" 0 400
	next=$((to + 1))
}
