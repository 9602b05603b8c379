# shellcheck shell=bash
# Waiting for an event: a query's value, a count's progress, a log line, a
# process's end. A timeout only bounds a failure (scaled by KYU_TIME_SCALE
# under valgrind); the wait ends as soon as the event comes.

# wait_for "SELECT returning one value" EXPECTED TIMEOUT_S
# Polls until the value is EXPECTED; fails with the last value seen.
wait_for() {
	local query=$1 want=$2 deadline got
	deadline=$(($(date +%s) + $3 * KYU_TIME_SCALE))
	while :; do
		got=$(sql "$query" 2>&1) || fail "wait_for: query failed: $got"
		[ "$got" = "$want" ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] || break
		sleep 0.2
	done
	fail "waited $(($3 * KYU_TIME_SCALE)) s for [$query] = '$want', last value '$got'"
}

# wait_until TIMEOUT_S WHAT COMMAND [ARG...]: run COMMAND every 0.1 s until
# it succeeds; fails naming WHAT after TIMEOUT_S. For waits on the host
# (a pid file written, a process gone): give a generous TIMEOUT_S, it costs
# nothing when the event comes early, and a loaded machine needs it.
wait_until() {
	local limit=$(($1 * KYU_TIME_SCALE)) what=$2 deadline
	shift 2
	deadline=$(($(date +%s) + limit))
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "waited $limit s for $what"
		sleep 0.1
	done
}

# wait_progress "SELECT returning a count" TARGET STALL_S
# For bulk tests whose duration is the machine's throughput, not the point:
# polls until the count is TARGET; fails only when it has not moved for
# STALL_S seconds (a stall), however long the whole takes.
wait_progress() {
	local query=$1 want=$2 got last='' since
	since=$(date +%s)
	while :; do
		got=$(sql "$query" 2>&1) || fail "wait_progress: query failed: $got"
		[ "$got" = "$want" ] && return 0
		if [ "$got" != "$last" ]; then
			last=$got
			since=$(date +%s)
		fi
		[ $(($(date +%s) - since)) -lt $(($3 * KYU_TIME_SCALE)) ] ||
			fail "no progress for $(($3 * KYU_TIME_SCALE)) s towards [$query] = '$want', stuck at '$got'"
		sleep 0.5
	done
}

# wait_for_log ERE TIMEOUT_S: until kyud's log has a line matching ERE.
wait_for_log() {
	local deadline=$(($(date +%s) + $2 * KYU_TIME_SCALE))
	until grep -E -- "$1" "$KYUD_LOG" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no kyud log line matching /$1/ after $(($2 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# wait_for_log_count ERE N TIMEOUT_S: until kyud's log has N lines matching
# ERE (a thing that happens again: a reconnect).
wait_for_log_count() {
	local deadline=$(($(date +%s) + $3 * KYU_TIME_SCALE))
	until [ "$(grep -c -E -- "$1" "$KYUD_LOG" 2>/dev/null)" -ge "$2" ]; do
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "fewer than $2 kyud log lines matching /$1/ after $(($3 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# True while PID runs (a zombie whose parent has not reaped it yet is dead).
pid_alive() {
	local state
	state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${state%% *}" != Z ]
}
pid_gone() { ! pid_alive "$1"; }

# wait_gone PID TIMEOUT_S WHAT: until PID has ended; the timeout only
# bounds a failure, which shows what the process was.
wait_gone() {
	local deadline=$(($(date +%s) + $2 * KYU_TIME_SCALE))
	while pid_alive "$1"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			ps -o pid,ppid,pgid,sid,stat,args -p "$1" >&2 || true
			fail "$3 (pid $1) still running after $(($2 * KYU_TIME_SCALE)) s"
		fi
		sleep 0.1
	done
}

# Print PID's descendants, deepest first (workers, then their jobs).
descendants() {
	local c
	for c in $(pgrep -P "$1" || true); do
		descendants "$c"
		echo "$c"
	done
}
