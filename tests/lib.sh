# shellcheck shell=bash
# Helpers for the integration tests, and the ctest fixture that owns the one
# private mariadbd shared by a whole test run.
#
# A test is a bash script that sources this file, then drives a real kyud:
#
#     . "$KYU_SRC/tests/lib.sh"
#     start_kyud kyud.workers=1 job.max_attempts=1
#     sql "INSERT INTO kyu_jobs (id, command) VALUES ('a', 'true')"
#     wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 1 10
#     stop_kyud
#
# ctest provides KYUD, KYU (the built binaries), KYU_SRC (source tree) and
# KYU_TEST_DIR (the build's tests dir, where the fixture wrote db.env).
# Run one test with its fixture:
#     ctest --test-dir build -R claim.batch_succeed -V
# A script tests/integration/FEATURE/NAME.sh is test integration.FEATURE.NAME.
#
# Every test gets its own database t_<feature>_<name>, its own directory
# $KYU_TEST_DIR/run/<feature>.<name> ($T_DIR) and its own kyud, so tests run in
# parallel. The directory and database are kept when a test fails.
#
# The shared server's data directory (about 270 MB) is made by mktemp -d
# under ${TMPDIR:-/tmp}, outside the source and build trees, and removed by
# db-stop; when a test failed it is kept (stopped) until the next db-start
# in the same build dir, so that its database can be looked at:
#   scripts/sandbox-db start DIR; mariadb --no-defaults -uroot --socket=DIR/mysqld.sock
#
# Fixture mode (executed, not sourced): bash tests/lib.sh db-start|db-stop

# ---------------------------------------------------------------- fixture

# True when something accepts TCP connections on 127.0.0.1:$1.
port_in_use() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# rm_db_dir DIR: remove a data directory made by this file's mktemp calls,
# and nothing else.
rm_db_dir() {
	case ${1##*/} in
	kyu-test-db.* | kyu-private-db.*) rm -rf "$1" ;;
	esac
}

db_stop() {
	local env=$KYU_TEST_DIR/db.env
	[ -f "$env" ] || return 0
	# shellcheck source=/dev/null
	. "$env"
	"$KYU_SRC/scripts/sandbox-db" stop "$KYU_DB_DIR"
	if [ -e "$KYU_DB_DIR/failed-tests" ]; then
		echo "kept for inspection until the next run: $KYU_DB_DIR (databases of:" \
			"$(sort -u "$KYU_DB_DIR/failed-tests" | tr '\n' ' '))" >&2
		echo "$KYU_DB_DIR" >>"$KYU_TEST_DIR/db.kept"
	else
		rm_db_dir "$KYU_DB_DIR"
	fi
	rm -f "$env"
}

db_start() {
	local dir base port kept link
	# A run that was interrupted may have left its server behind.
	db_stop
	# What the previous runs kept for inspection goes now: the shared data
	# directory and the private ones of failed tests (run/NAME/db links).
	if [ -f "$KYU_TEST_DIR/db.kept" ]; then
		while read -r kept; do rm_db_dir "$kept"; done <"$KYU_TEST_DIR/db.kept"
		rm -f "$KYU_TEST_DIR/db.kept"
	fi
	for link in "$KYU_TEST_DIR"/run/*/db; do
		[ -L "$link" ] || continue
		rm_db_dir "$(readlink "$link")"
		rm -f "$link"
	done
	# A new data directory every run (no state leaks between runs), outside
	# the checkout. A Unix socket path must fit in 108 bytes: a long TMPDIR
	# does not do.
	dir=$(mktemp -d "${TMPDIR:-/tmp}/kyu-test-db.XXXXXX")
	if [ ${#dir} -gt 90 ]; then
		rmdir "$dir"
		dir=$(mktemp -d /tmp/kyu-test-db.XXXXXX)
	fi
	# Several suites may share the machine: start at a random port and move
	# on when it is taken (probed first, or mariadbd fails to bind it).
	base=$((20000 + RANDOM % 30000))
	for port in $(seq "$base" $((base + 40))); do
		port_in_use "$port" && continue
		# Check that the server answering on the socket is the one started
		# on this port, not a leftover that sandbox-db found "already running".
		if "$KYU_SRC/scripts/sandbox-db" start "$dir" "$port" &&
			[ "$(mariadb --no-defaults -uroot --socket="$dir/mysqld.sock" -N -e 'SELECT @@port')" = "$port" ]; then
			printf 'KYU_DB_DIR=%q\nKYU_DB_SOCKET=%q\nKYU_DB_PORT=%q\n' \
				"$dir" "$dir/mysqld.sock" "$port" >"$KYU_TEST_DIR/db.env"
			return 0
		fi
		# A server that started but did not answer in time would be taken
		# for ours on the next try.
		"$KYU_SRC/scripts/sandbox-db" stop "$dir" || true
	done
	echo "db-start: could not start mariadbd on any port from $base" >&2
	rm_db_dir "$dir"
	return 1
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -euo pipefail
	: "${KYU_SRC:?}" "${KYU_TEST_DIR:?}"
	case ${1:-} in
	db-start) db_start ;;
	db-stop) db_stop ;;
	*) echo "usage: $0 db-start|db-stop" >&2; exit 2 ;;
	esac
	exit
fi

# ---------------------------------------------------------------- assertions

set -euo pipefail

# fail MSG: the test's only way out with an error; shows what kyud said.
fail() {
	echo "FAIL: $T_NAME: $*" >&2
	if [ -s "${KYUD_LOG:-}" ]; then
		# In a busy log the cause scrolled away long ago: show the last
		# lines that are not per-job routine, then the plain tail.
		echo "---- $KYUD_LOG, last lines other than job started/succeeded/acquired:" >&2
		grep -Ev 'job .* (attempt [0-9]+ started|succeeded)|acquired [0-9]+ job' "$KYUD_LOG" | tail -n 25 >&2
		echo "---- last lines:" >&2
		tail -n 15 "$KYUD_LOG" >&2
		echo "----" >&2
	fi
	exit 1
}

assert_eq() { # assert_eq EXPECTED ACTUAL WHAT
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# Extended regular expression, anywhere in kyud's log (all runs of this test).
# assert_each_ran_once N FILE: every row succeeded at its first attempt, and
# FILE (one line per run, written by the jobs) names N distinct jobs, none twice.
assert_each_ran_once() {
	assert_eq "" "$(sql "SELECT CONCAT(id, ':', status, '/', attempts) FROM kyu_jobs
	                     WHERE status <> 'succeeded' OR attempts <> 1 LIMIT 10" | tr '\n' ' ')" \
		"rows not succeeded at the first attempt (id:status/attempts)"
	assert_eq "$1" "$(sort -u "$2" | wc -l)" "distinct jobs that ran"
	assert_eq "" "$(sort "$2" | uniq -d | sed -n 1,5p | tr '\n' ' ')" "jobs that ran twice"
}

assert_log_contains() {
	grep -Eq -- "$1" "$KYUD_LOG" 2>/dev/null || fail "kyud log has no line matching /$1/"
}

# wait_for_log ERE TIMEOUT_S: until kyud's log has a line matching ERE.
wait_for_log() {
	local deadline=$(($(date +%s) + $2 * KYU_TIME_SCALE))
	until grep -E -- "$1" "$KYUD_LOG" >/dev/null 2>&1; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no kyud log line matching /$1/ after $(($2 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

assert_log_lacks() {
	local hit
	if hit=$(grep -E -m1 -- "$1" "$KYUD_LOG" 2>/dev/null); then
		fail "kyud log has an unexpected line: $hit"
	fi
}

# A sanitizer report means a bug even when the outcome looked right (a
# worker that died of it is simply restarted by the supervisor).
assert_no_sanitizer_report() {
	assert_log_lacks 'ERROR: (Address|Leak)Sanitizer|runtime error:|Sanitizer:DEADLYSIGNAL'
}

# Under KYU_VALGRIND=1: every error memcheck found in kyud or a worker.
# With -q a log holds only errors, and the descriptors open at exit
# (--track-fds; listed for inspection, not errors), which are left out
# here: blocks end at an empty "==PID==" line.
assert_no_valgrind_report() {
	[ "${KYU_VALGRIND:-0}" = 1 ] || return 0
	local errors
	# Each job leaves an empty log: valgrind opens it at the fork, before
	# the exec it was told to skip.
	find "$T_DIR" -maxdepth 1 -name 'valgrind.*.log' -empty -delete
	errors=$(awk '
		function flush() { if (block != "" && !benign) printf "%s", block; block = "" }
		FNR == 1 { flush() }
		/^==[0-9]+== *$/ { flush(); next }
		/^==[0-9]+== / {
			line = $0; sub(/^==[0-9]+== /, "", line)
			if (block == "") benign = line ~ /^(FILE DESCRIPTORS:|Open (file descriptor|AF_[A-Z0-9]+ socket)|Warning: )/
			block = block FILENAME ": " line "\n"
		}
		END { flush() }' "$T_DIR"/valgrind.*.log 2>/dev/null)
	[ -z "$errors" ] || fail "valgrind reported errors:
$(printf '%s\n' "$errors" | sed -n 1,60p)"
}

# The supervisor restarts a crashed worker, so a crash can hide behind a
# correct outcome. A test that kills a worker itself sets WORKER_DEATHS_OK=1.
assert_no_worker_death() {
	[ "${WORKER_DEATHS_OK:-0}" = 1 ] ||
		assert_log_lacks 'kyud\[sup\]: worker [0-9]+ \(pid [0-9]+\) (killed by signal|exited with status [1-9])'
}

# ---------------------------------------------------------------- database

root_sql() { mariadb --no-defaults -uroot --socket="$KYU_DB_SOCKET" "$@"; }

# sql "STATEMENT": run in the test's database; tab-separated, no headers.
sql() { root_sql -N -B -D "$T_DB" -e "$1"; }

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

# ---------------------------------------------------------------- kyud

# write_ini FILE [section.key=value ...]: the test defaults with overrides.
# Small timings keep tests short; listen is off so parallel tests never
# compete for a UDP port (a test that wants it passes kyud.listen=...).
write_ini() {
	local file=$1 kv key section i
	shift
	local -a keys=() vals=()
	set_key() {
		local i
		for i in "${!keys[@]}"; do
			if [ "${keys[$i]}" = "$1" ]; then vals[i]=$2; return; fi
		done
		keys+=("$1"); vals+=("$2")
	}
	set_key database.socket "$KYU_DB_SOCKET"
	set_key database.user kyu
	set_key database.password kyu
	set_key database.database "$T_DB"
	set_key kyud.workers 2
	set_key kyud.lease 6
	set_key kyud.poll_interval 1
	set_key kyud.listen ""
	set_key kyud.shutdown_grace 10
	set_key kyud.log_level debug
	# Tests run as root in CI: kyud refuses to run jobs as root unless a
	# section says so (a test of that rule passes queue.*.user= to drop it).
	[ "$(id -u)" != 0 ] || set_key 'queue.*.user' root
	for kv in "$@"; do
		key=${kv%%=*}
		key=${key%"${key##*[![:space:]]}"}
		kv=${kv#*=}
		set_key "$key" "${kv#"${kv%%[![:space:]]*}"}"
	done
	# A key's section is what comes before its last dot ("queue.mail.user"
	# is user in [queue.mail]); an empty value drops the key.
	local -a sections=(database kyud job)
	for i in "${!keys[@]}"; do
		section=${keys[$i]%.*}
		[[ " ${sections[*]} " == *" $section "* ]] || sections+=("$section")
	done
	{
		for section in "${sections[@]}"; do
			echo "[$section]"
			for i in "${!keys[@]}"; do
				[ "${keys[$i]%.*}" = "$section" ] || continue
				case $section in queue.*) [ -n "${vals[$i]}" ] || continue ;; esac
				echo "${keys[$i]##*.} = ${vals[$i]}"
			done
			echo
		done
	} >"$file"
}

# start_kyud [section.key=value ...]: write $T_DIR/kyud.ini, start kyud in
# the background (stderr appended to $KYUD_LOG), return once it is ready.
start_kyud() {
	[ -z "$KYUD_PID" ] || fail "start_kyud: kyud already running"
	KYUD_INI=$T_DIR/kyud.ini
	write_ini "$KYUD_INI" "$@"
	local from deadline
	from=$(($(wc -l <"$KYUD_LOG") + 1))
	# Background jobs of a script start with INT and QUIT ignored; env resets
	# every signal so kyud starts as it would under systemd, and what its
	# jobs see is kyud's own doing.
	# KYU_VALGRIND=1: kyud and its workers (not the jobs: their programs
	# are skipped) under memcheck, one log per process in $T_DIR.
	env --default-signal "${VALGRIND[@]}" "$KYUD" -c "$KYUD_INI" 2>>"$KYUD_LOG" &
	KYUD_PID=$!
	# A bound for a hang, not a figure: a loaded machine can take 10 s or more.
	deadline=$(($(date +%s) + 60 * KYU_TIME_SCALE))
	until tail -n +"$from" "$KYUD_LOG" | grep 'kyud\[sup\]: ready:' >/dev/null; do
		if ! kill -0 "$KYUD_PID" 2>/dev/null; then
			local rc=0
			wait "$KYUD_PID" || rc=$?
			KYUD_PID=
			fail "kyud exited with status $rc before it was ready"
		fi
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud not ready after $((60 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# wait_kyud_exit TIMEOUT_S: reap kyud; its status lands in KYUD_STATUS.
wait_kyud_exit() {
	local deadline=$(($(date +%s) + $1 * KYU_TIME_SCALE))
	while kill -0 "$KYUD_PID" 2>/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud (pid $KYUD_PID) still running after $(($1 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
	KYUD_STATUS=0
	wait "$KYUD_PID" || KYUD_STATUS=$?
	KYUD_PID=
}

# signal_kyud SIG: send SIG to the supervisor; failing if it already died
# says so, instead of a bare "no such process".
signal_kyud() {
	[ -n "$KYUD_PID" ] || fail "signal_kyud: kyud was not started"
	if ! kill -"$1" "$KYUD_PID" 2>/dev/null; then
		local rc=0
		wait "$KYUD_PID" || rc=$?
		KYUD_PID=
		fail "kyud died before it was sent $1 (exit status $rc)"
	fi
}

# stop_kyud [TIMEOUT_S]: TERM, wait for the drain, demand exit status 0.
stop_kyud() {
	signal_kyud TERM
	wait_kyud_exit "${1:-30}"
	assert_eq 0 "$KYUD_STATUS" "kyud exit status after TERM"
	assert_no_sanitizer_report
	assert_no_valgrind_report
	assert_no_worker_death
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

# On any exit: never leave a kyud, a worker or a job behind. A passing test
# also removes its directory and database; a failing one keeps them, and
# marks the shared server's data directory to be kept by db-stop.
# EXIT_HOOKS: commands a test adds (EXIT_HOOKS+=("userdel x")) to undo what
# it changed outside its own directory and database; run first, whatever
# the outcome, without changing it.
EXIT_HOOKS=()
cleanup() {
	local rc=$? p h
	for h in "${EXIT_HOOKS[@]}"; do
		eval "$h" || true
	done
	for p in ${EXTRA_PIDS:-} ${SAMPLER_PIDS:-}; do
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$p") "$p" 2>/dev/null || true
	done
	if [ -n "${KYUD_PID:-}" ]; then
		# shellcheck disable=SC2046
		kill -KILL $(descendants "$KYUD_PID") "$KYUD_PID" 2>/dev/null || true
		wait "$KYUD_PID" 2>/dev/null || true
	fi
	if [ "$rc" = 0 ]; then
		rm -rf "$T_DIR"
		root_sql -e "DROP DATABASE IF EXISTS $T_DB" || true
	else
		echo "kept for inspection: $T_DIR, database $T_DB (in $KYU_DB_DIR)" >&2
		echo "$T_NAME" >>"$KYU_DB_DIR/failed-tests" || true
	fi
	exit "$rc"
}

# ---------------------------------------------------------------- set-up

: "${KYUD:?set by ctest}" "${KYU_SRC:?set by ctest}" "${KYU_TEST_DIR:?set by ctest}"
# FEATURE.NAME (tests/integration/FEATURE/NAME.sh), as in the test's ctest
# name: two features may each have a test of the same NAME.
T_NAME=$(basename "$(dirname "$0")").$(basename "$0" .sh)
T_DB=t_${T_NAME//[^A-Za-z0-9_]/_}
T_DIR=$KYU_TEST_DIR/run/$T_NAME
KYUD_PID=
KYUD_LOG=$T_DIR/kyud.log
VALGRIND=()
# The wait helpers' timeouts are multiplied by this: memcheck makes kyud
# start and answer several times slower. Timing assertions of the tests
# themselves (within 2 s of a cancel...) are not scaled, and fail.
KYU_TIME_SCALE=1
if [ "${KYU_VALGRIND:-0}" = 1 ]; then
	KYU_TIME_SCALE=5
	# 99: an exit status kyud never uses itself. Only definite leaks count
	# ("possibly lost" is a pointer into a block, which libraries keep on
	# purpose); the ASan run's LeakSanitizer checks leaks too.
	VALGRIND=(valgrind -q --error-exitcode=99 --trace-children=yes
		--trace-children-skip="/bin/*,/sbin/*,/usr/*,/tmp/*,$T_DIR/*"
		--track-fds=yes --leak-check=full --show-leak-kinds=definite
		--errors-for-leak-kinds=definite --log-file="$T_DIR/valgrind.%p.log")
fi
[ -f "$KYU_TEST_DIR/db.env" ] || { echo "no $KYU_TEST_DIR/db.env: run through ctest (fixture db)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$KYU_TEST_DIR/db.env"

# A private server kept by an earlier failure of this test (see below).
if [ -L "$T_DIR/db" ]; then rm_db_dir "$(readlink "$T_DIR/db")"; fi
rm -rf "$T_DIR"
mkdir -p "$T_DIR"
: >"$KYUD_LOG"
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

root_sql <<-SQL
	DROP DATABASE IF EXISTS $T_DB;
	CREATE DATABASE $T_DB;
	GRANT ALL ON $T_DB.* TO 'kyu'@'localhost';
	GRANT ALL ON $T_DB.* TO 'kyu'@'127.0.0.1';
SQL
root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql"

# ---------------------------------------------------------------- private database
# For tests that stop and restart the database server (db/restart,
# lease/self_fence): a mariadbd of the test's own, so that the shared one keeps
# serving the other tests.
#
#     private_db_start       # first call: create it, load the schema; from
#                            # now on sql, root_sql and start_kyud use it
#     private_db_stop        # stop it (clean shutdown)
#     private_db_start       # again: same directory and port, data kept
#
# Its data directory is made by mktemp -d under ${TMPDIR:-/tmp} (not in
# the build tree: it is about 270 MB), linked from $T_DIR/db. It is stopped
# when the test exits and removed when the test passes; when the test fails
# it is kept, like $T_DIR, until the next db-start or run of this test.

PRIVATE_DB_DIR=
PRIVATE_DB_PORT=
SHARED_DB_SOCKET=$KYU_DB_SOCKET

# private_db_try PORT: start the server in $PRIVATE_DB_DIR on PORT, and check
# that the server answering on its socket is really the one on PORT.
private_db_try() {
	"$KYU_SRC/scripts/sandbox-db" start "$PRIVATE_DB_DIR" "$1" >>"$T_DIR/private-db.log" 2>&1 &&
		[ "$(mariadb --no-defaults -uroot --socket="$PRIVATE_DB_DIR/mysqld.sock" -N -e 'SELECT @@port')" = "$1" ]
}

private_db_start() {
	local base port
	if [ -n "$PRIVATE_DB_PORT" ]; then
		# The same port: kyud's config (the socket) and the data stay valid.
		private_db_try "$PRIVATE_DB_PORT" ||
			fail "private_db_start: could not restart mariadbd on port $PRIVATE_DB_PORT (see $T_DIR/private-db.log)"
		return
	fi
	PRIVATE_DB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/kyu-private-db.XXXXXX")
	# A Unix socket path must fit in 108 bytes: a long TMPDIR does not do.
	if [ ${#PRIVATE_DB_DIR} -gt 90 ]; then
		rmdir "$PRIVATE_DB_DIR"
		PRIVATE_DB_DIR=$(mktemp -d /tmp/kyu-private-db.XXXXXX)
	fi
	ln -s "$PRIVATE_DB_DIR" "$T_DIR/db"
	trap private_db_exit EXIT
	base=$((20000 + RANDOM % 30000))
	for port in $(seq "$base" $((base + 40))); do
		port_in_use "$port" && continue
		if private_db_try "$port"; then
			PRIVATE_DB_PORT=$port
			break
		fi
		"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1 || true
	done
	[ -n "$PRIVATE_DB_PORT" ] || fail "private_db_start: could not start mariadbd (see $T_DIR/private-db.log)"
	KYU_DB_SOCKET=$PRIVATE_DB_DIR/mysqld.sock
	root_sql <<-SQL
		CREATE DATABASE $T_DB;
		GRANT ALL ON $T_DB.* TO 'kyu'@'localhost';
		GRANT ALL ON $T_DB.* TO 'kyu'@'127.0.0.1';
	SQL
	root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql"
}

private_db_stop() {
	[ -n "$PRIVATE_DB_PORT" ] || fail "private_db_stop: no private database was started"
	"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1
}

# EXIT trap once a private server exists: stop it, then the usual cleanup
# (which drops the test's database on the shared server, made at set-up).
private_db_exit() {
	local rc=$?
	set +e
	"$KYU_SRC/scripts/sandbox-db" stop "$PRIVATE_DB_DIR" >>"$T_DIR/private-db.log" 2>&1
	if [ "$rc" = 0 ]; then
		rm_db_dir "$PRIVATE_DB_DIR"
	else
		echo "kept: private database $PRIVATE_DB_DIR ($T_DIR/db)" >&2
	fi
	KYU_DB_SOCKET=$SHARED_DB_SOCKET
	(exit "$rc")
	cleanup
}
# ---------------------------------------------------------------- end of private database

# ---------------------------------------------------------------- more daemons, sampling
# (for the tests of several daemons on one table: queue/*.sh)

EXTRA_PIDS=
SAMPLER_PIDS=

# start_extra_kyud NAME [section.key=value ...]: another kyud on the same
# database, config $T_DIR/NAME.ini, log $T_DIR/NAME.log; returns once ready.
start_extra_kyud() {
	local name=$1 pid
	shift
	write_ini "$T_DIR/$name.ini" "$@"
	env --default-signal "$KYUD" -c "$T_DIR/$name.ini" 2>>"$T_DIR/$name.log" &
	pid=$!
	EXTRA_PIDS="$EXTRA_PIDS $pid"
	local deadline=$(($(date +%s) + 60 * KYU_TIME_SCALE))
	until grep -q 'kyud\[sup\]: ready:' "$T_DIR/$name.log" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || fail "kyud $name exited before it was ready"
		[ "$(date +%s)" -lt "$deadline" ] || fail "kyud $name not ready after $((60 * KYU_TIME_SCALE)) s"
		sleep 0.1
	done
}

# stop_extra_kyuds: TERM every extra kyud and wait; fail on a bad status.
stop_extra_kyuds() {
	local p rc
	for p in $EXTRA_PIDS; do kill -TERM "$p" 2>/dev/null || true; done
	for p in $EXTRA_PIDS; do
		rc=0
		wait "$p" || rc=$?
		[ "$rc" = 0 ] || fail "an extra kyud (pid $p) exited with status $rc"
	done
	EXTRA_PIDS=
}

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


# ---------------------------------------------------------------- wake-ups, statement counts
# (for the wake-up and polling tests: wake/*.sh)

# free_udp_port: print a UDP port on 127.0.0.1 that nothing is bound to
# right now (the kernel's choice, so parallel tests do not collide).
free_udp_port() {
	python3 -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# free_tcp_port: print a TCP port on 127.0.0.1 that nothing listens on
# right now (the kernel's choice).
free_tcp_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# http_get URL [METHOD]: print "STATUS" on the first line, then the body;
# status 000 when nothing answers. No curl in CI: python's client.
http_get() {
	python3 - "$1" "${2:-GET}" <<'PY'
import sys, urllib.request, urllib.error
req = urllib.request.Request(sys.argv[1], method=sys.argv[2], data=b"x" if sys.argv[2] == "POST" else None)
try:
    with urllib.request.urlopen(req, timeout=20) as r:
        body, status = r.read(), r.status
except urllib.error.HTTPError as e:
    body, status = e.read(), e.code
except OSError:
    body, status = b"", 0
print("%03d" % status)
sys.stdout.write(body.decode("utf-8", "replace"))
PY
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
# (worker 1, every lease / 3 within 20 to 60 s: src/common/registry.h): the
# statements, and the UPDATEs among them. Tests that bound what an idle
# daemon sends allow for the refreshes that may fall in their window.
REGISTRY_STATEMENTS=8
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

# worker_pids: the supervisor's children, sorted, on one line.
worker_pids() {
	pgrep -P "$KYUD_PID" | sort -n | tr '\n' ' '
}
# ---------------------------------------------------------------- end of wake-ups, statement counts

# ---------------------------------------------------------------- schedules
# cron_instants NAME [AFTER]: the instants (seconds since the epoch, UTC) of
# the jobs schedule NAME enqueued (ids cron:NAME:<instant>), in order; with
# AFTER, only the later ones. run-now jobs (cron:NAME:now:...) are left out.
cron_instants() {
	sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', STR_TO_DATE(RIGHT(id, 20), '%Y-%m-%dT%H:%i:%sZ')) AS t
		FROM kyu_jobs WHERE id LIKE 'cron:$1:2%' HAVING t > ${2:--1} ORDER BY t"
}

# assert_cron_contiguous NAME [WHAT]: NAME's instants run from the first to
# the last without a gap; sets CRON_N, CRON_FIRST, CRON_LAST.
assert_cron_contiguous() {
	local all
	all=$(cron_instants "$1")
	CRON_N=$(echo "$all" | grep -c . || true)
	CRON_FIRST=$(echo "$all" | sed -n 1p)
	CRON_LAST=$(echo "$all" | tail -n 1)
	[ "$CRON_N" -gt 0 ] || fail "schedule $1 enqueued no job"
	assert_eq $((CRON_LAST - CRON_FIRST + 1)) "$CRON_N" \
		"${2:-$1}: instants from the first ($CRON_FIRST) to the last ($CRON_LAST), no gap"
}

# ensure_test_users: the accounts the protection-domain tests run jobs as,
# created once per machine (root only: otherwise the test is skipped, 77).
#   kyut_a    (home /var/tmp/kyut_a, also in group kyut_extra)
#   kyut_b    (home /nonexistent)
#   kyut_c    (home /nonexistent; only queue/domain_config.sh runs jobs as
#             it, so that it can count that user's processes)
#   group kyut_extra
# Tests running at once may race to create them: losing is fine.
ensure_test_users() {
	if [ "$(id -u)" != 0 ]; then
		echo "SKIP: $T_NAME: needs root to create test users and switch to them"
		exit 77
	fi
	getent group kyut_extra >/dev/null || groupadd --system kyut_extra 2>/dev/null ||
		getent group kyut_extra >/dev/null || fail "cannot create group kyut_extra"
	id -u kyut_a >/dev/null 2>&1 || useradd --system --home-dir /var/tmp/kyut_a --no-create-home \
		--shell /bin/sh --groups kyut_extra kyut_a 2>/dev/null || id -u kyut_a >/dev/null ||
		fail "cannot create user kyut_a"
	id -u kyut_b >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin kyut_b 2>/dev/null || id -u kyut_b >/dev/null ||
		fail "cannot create user kyut_b"
	id -u kyut_c >/dev/null 2>&1 || useradd --system --home-dir /nonexistent --no-create-home \
		--shell /usr/sbin/nologin kyut_c 2>/dev/null || id -u kyut_c >/dev/null ||
		fail "cannot create user kyut_c"
	mkdir -p /var/tmp/kyut_a
	chown kyut_a: /var/tmp/kyut_a
	chmod 0700 /var/tmp/kyut_a
}

# assert_config_refused INI LINE TEXT: kyud --check-config and a plain start
# both exit 78 (EX_CONFIG) without starting, and say INI:LINE: TEXT (INI:
# TEXT when LINE is -) on stderr.
assert_config_refused() {
	local ini=$1 line=$2 text=$3 rc mode where
	where="$ini:$line: "
	[ "$line" != - ] || where="$ini: "
	for mode in --check-config start; do
		rc=0
		if [ $mode = start ]; then
			timeout 10 "$KYUD" -c "$ini" 2>"$T_DIR/err" >/dev/null || rc=$?
		else
			timeout 10 "$KYUD" -c "$ini" --check-config 2>"$T_DIR/err" >/dev/null || rc=$?
		fi
		cat "$T_DIR/err" >>"$KYUD_LOG"
		assert_eq 78 "$rc" "exit status of kyud ($mode) with $(basename "$ini") ($(cat "$T_DIR/err"))"
		grep -qF -- "$where$text" "$T_DIR/err" ||
			fail "kyud ($mode) stderr lacks '$where$text'; it said: $(cat "$T_DIR/err")"
		! grep -q 'ready:' "$T_DIR/err" || fail "kyud ($mode) started with a bad config"
	done
}

# hup_verdict: SIGHUP kyud, wait for the supervisor's verdict on the reload
# and print it ("kyud[sup]: reloaded FILE" or "... reload failed, ...").
hup_verdict() {
	local from deadline
	from=$(($(wc -l <"$KYUD_LOG") + 1))
	signal_kyud HUP
	deadline=$(($(date +%s) + 30))
	until tail -n +"$from" "$KYUD_LOG" | grep -E 'kyud\[sup\]: (reloaded|reload failed)' >/dev/null; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "no reload verdict in the log 30 s after SIGHUP"
		sleep 0.1
	done
	tail -n +"$from" "$KYUD_LOG" | grep -E 'kyud\[sup\]: (reloaded|reload failed)'
}
