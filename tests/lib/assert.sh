# shellcheck shell=bash
# Assertions: fail (a test's only way out with an error, showing what kyud
# said), equality, kyud's log, and the checks every stop of kyud makes
# (no sanitizer or valgrind report, no worker that died).

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
	# Other daemons of the test (start_extra_kyud): their own last words.
	for f in "${T_DIR:-/nonexistent}"/*.log; do
		[ -s "$f" ] && [ "$f" != "${KYUD_LOG:-}" ] && grep -q '^kyud\[' "$f" || continue
		echo "---- $f, last lines other than job started/succeeded/acquired:" >&2
		grep -Ev 'job .* (attempt [0-9]+ started|succeeded)|acquired [0-9]+ job' "$f" | tail -n 12 >&2
	done
	fail_dump_jobs
	exit 1
}

# What CI keeps of a failure is this output, not the database: the rows of
# kyu_jobs that had not succeeded, with the columns that tell why a row is
# not claimable (a server that is down, or an old schema, prints nothing).
fail_dump_jobs() {
	[ -n "${T_DB:-}" ] && [ -n "${KYU_DB_SOCKET:-}" ] || return 0
	timeout 10 mariadb --no-defaults -uroot --socket="$KYU_DB_SOCKET" --connect-timeout=3 \
		-D "$T_DB" -t -e "SELECT status, COUNT(*) AS n FROM kyu_jobs GROUP BY status;
		SELECT seq, LEFT(id, 24) AS id, LEFT(queue, 12) AS queue, status, attempts, owner IS NOT NULL AS owned,
		lease_until, run_at, after_left, after_bad, has_downstream, after_seen, after_changed,
		LEFT(error, 60) AS error, NOW(6) AS db_now
		FROM kyu_jobs WHERE status <> 'succeeded' ORDER BY seq LIMIT 25;
		SELECT COUNT(*) AS after_todo_items FROM kyu_after_todo" >&2 2>/dev/null || true
}

assert_eq() { # assert_eq EXPECTED ACTUAL WHAT
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}

# assert_each_ran_once N FILE: every row succeeded at its first attempt, and
# FILE (one line per run, written by the jobs) names N distinct jobs, none twice.
assert_each_ran_once() {
	assert_eq "" "$(sql "SELECT CONCAT(id, ':', status, '/', attempts) FROM kyu_jobs
	                     WHERE status <> 'succeeded' OR attempts <> 1 LIMIT 10" | tr '\n' ' ')" \
		"rows not succeeded at the first attempt (id:status/attempts)"
	assert_eq "$1" "$(sort -u "$2" | wc -l)" "distinct jobs that ran"
	assert_eq "" "$(sort "$2" | uniq -d | sed -n 1,5p | tr '\n' ' ')" "jobs that ran twice"
}

# Extended regular expression, anywhere in kyud's log (all runs of this test).
assert_log_contains() {
	grep -Eq -- "$1" "$KYUD_LOG" 2>/dev/null || fail "kyud log has no line matching /$1/"
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
