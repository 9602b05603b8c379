# shellcheck shell=bash
# What kyud costs and does, counted on the server: the statements of a
# database user of the test's own (per-user statistics), samples of a table
# every 10 ms, and times between a job's columns by the database clock.
# For the wake-up, polling and queue tests.

SAMPLER_PIDS=

# start_sampler FILE QUERY: run QUERY every 10 ms on one connection, each
# result line appended to FILE, until stop_samplers.
start_sampler() {
	local file=$1 query=$2
	while :; do
		echo "$query;"
		sleep 0.01
	done | root_sql -N -B -n -D "$T_DB" >"$file" 2>&1 &
	SAMPLER_PIDS="$SAMPLER_PIDS $!"
}

stop_samplers() {
	local p
	for p in $SAMPLER_PIDS; do
		# shellcheck disable=SC2046
		kill -TERM $(descendants "$p") "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	SAMPLER_PIDS=
}

# use_own_db_user: create T_USER, a database user of this test's own with
# rights on $T_DB only, and turn on the server's per-user statistics
# (SET GLOBAL userstat = 1: server-wide, costs other tests nothing), so
# that db_statements counts exactly what a kyud started with "$T_USER_KV"
# sends: start_kyud $T_USER_KV kyud.workers=...
use_own_db_user() {
	T_USER=k_${T_DB#t_}
	T_USER=${T_USER:0:80}
	root_sql <<-SQL
		SET GLOBAL userstat = 1;
		DROP USER IF EXISTS '$T_USER'@'localhost';
		CREATE USER '$T_USER'@'localhost' IDENTIFIED BY 'kyu';
		GRANT ALL ON $T_DB.* TO '$T_USER'@'localhost';
	SQL
	# shellcheck disable=SC2034
	T_USER_KV="database.user=$T_USER database.password=kyu"
}

# db_statements: statements T_USER's connections have run so far (SELECT,
# UPDATE and other commands, from information_schema.USER_STATISTICS; a
# user's row survives DROP USER, so compare two readings, never one).
db_statements() {
	root_sql -N -B -e "SELECT COALESCE(SUM(SELECT_COMMANDS + UPDATE_COMMANDS + OTHER_COMMANDS), 0)
		FROM information_schema.USER_STATISTICS WHERE USER = '$T_USER'"
}

# What one refresh of a daemon's row of kyu_daemons costs in those counts
# (worker 1, every 2 x lease within 20 to 600 s: src/common/registry.h):
# the statements (the compound one and its INSERT, and a DELETE when a
# dead daemon's row has expired), and the UPDATEs among them. Tests that
# bound what an idle daemon sends allow for the refreshes that may fall in
# their window.
REGISTRY_STATEMENTS=3
REGISTRY_UPDATES=2

# db_updates: UPDATE statements T_USER's connections have run so far.
db_updates() {
	root_sql -N -B -e "SELECT COALESCE(SUM(UPDATE_COMMANDS), 0)
		FROM information_schema.USER_STATISTICS WHERE USER = '$T_USER'"
}

# count_statements S: sleep S seconds; IDLE_N is then the statements
# T_USER's connections ran meanwhile, IDLE_MS the real length of the window
# in milliseconds, from before the first reading to after the second. A
# loaded machine stretches the window (the readings are client processes):
# a bound must be computed from IDLE_MS, never from S.
count_statements() {
	local t0 s0 s1
	t0=$(date +%s%N)
	s0=$(db_statements)
	sleep "$1"
	s1=$(db_statements)
	# shellcheck disable=SC2034 # read by the tests
	IDLE_MS=$((($(date +%s%N) - t0) / 1000000)) IDLE_N=$((s1 - s0))
}

# max_polls MS POLL: the polls of one poll_interval timer that fit in MS
# milliseconds at the shortest jittered interval (0.9 x POLL), plus one for
# the phase.
max_polls() { echo $(($1 / (900 * $2) + 1)); }

# max_registry MS: the refreshes of a daemon's row of kyu_daemons that fit
# in MS milliseconds (20 s apart at least), plus one for the phase.
max_registry() { echo $(($1 / 20000 + 1)); }

# ms_between FROM_EXPR TO_EXPR ID: milliseconds from one column (or SQL
# expression) to another of job ID, by the database clock.
ms_between() {
	sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, $1, $2) / 1000) FROM kyu_jobs WHERE id = '$3'"
}

# wait_workers_idle N [TIMEOUT_S]: wait until kyud's N workers are connected
# to $T_DB and none has sent a statement for a second, i.e. their start-up
# (connection, session set-up, first claims, retention delete) is over,
# however long a loaded machine took for it. For tests that then count
# statements or expect nothing to be claimed without a wake-up.
wait_workers_idle() {
	local deadline got
	deadline=$(($(date +%s) + ${2:-30} * KYU_TIME_SCALE))
	while :; do
		got=$(root_sql -N -B -e "SELECT COUNT(*), COALESCE(SUM(COMMAND = 'Sleep' AND TIME_MS >= 1000), 0)
			FROM information_schema.PROCESSLIST WHERE DB = '$T_DB' AND ID <> CONNECTION_ID()")
		[ "$got" = "$1	$1" ] && return 0
		[ "$(date +%s)" -lt "$deadline" ] ||
			fail "wait_workers_idle: expected $1 worker connections to $T_DB, idle for 1 s; got (connections, idle) $got"
		sleep 0.2
	done
}
