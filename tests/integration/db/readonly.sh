#!/usr/bin/env bash
# The server goes read-only for a few seconds (SET GLOBAL read_only = 1:
# the kyu user has neither SUPER nor READ ONLY ADMIN, so its claims,
# heartbeats and results fail with error 1290) while jobs run, end, and are
# submitted. kyud logs the failures, never crashes or exits, keeps the
# results of the jobs that ended meanwhile, and records them once the server
# is writable again; every job ends succeeded at its first attempt and ran
# exactly once (marker lines). The log lines kyud wrote while the server
# was read-only are printed for the notes.
. "$KYU_SRC/tests/lib.sh"

private_db_start
# lease 30 s: the read-only spell (a few seconds) stays far from the point
# where a worker would fence its jobs (lease - fence_margin = 30 - 7 = 23 s
# without a renewal) or where another claim could take a row whose result
# waits in memory.
start_kyud kyud.workers=2 kyud.lease=30 kyud.fence_margin=7 kyud.poll_interval=1
marks=$T_DIR/marks

# Six jobs that run until the test opens their gate, so that they end while
# the server is read-only.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('gated-', seq),
     'while [ ! -e $T_DIR/gate ]; do sleep 0.05; done; echo \$KYU_JOB_ID >> $marks; echo out-\$KYU_JOB_ID'
     FROM seq_1_to_6"
# Two that keep running across the whole spell (heartbeats fail meanwhile).
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('long-', seq),
     'while [ ! -e $T_DIR/gate2 ]; do sleep 0.05; done; echo \$KYU_JOB_ID >> $marks'
     FROM seq_1_to_2"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'" 8 30

from=$(($(wc -l <"$KYUD_LOG") + 1))
root_sql -e "SET GLOBAL read_only = 1"
# The kyu user's writes now fail (checked, so that the test means something).
if out=$(mariadb --no-defaults -ukyu -pkyu --socket="$KYU_DB_SOCKET" -D "$T_DB" \
	-e "UPDATE kyu_jobs SET priority = priority WHERE id = 'gated-1'" 2>&1); then
	fail "the kyu user can still write with read_only = 1"
fi
case $out in *"ERROR 1290"*) ;; *) fail "kyu's UPDATE under read_only: expected ERROR 1290, got: $out" ;; esac

touch "$T_DIR/gate"
# Submitted while read-only (root may write): claimed once it is writable.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('during-', seq), 'echo \$KYU_JOB_ID >> $marks' FROM seq_1_to_4"
# The gated jobs end (their shells exit) while nothing can be recorded.
for _ in $(seq 100); do
	[ "$(grep -c '^gated-' "$marks" 2>/dev/null || true)" = 6 ] && break
	sleep 0.1
done
assert_eq 6 "$(grep -c '^gated-' "$marks")" "gated jobs that ended under read_only"
# A few seconds read-only: polls (every second), a heartbeat (every 7.5 s,
# so perhaps none), result flushes.
sleep 5
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud exited while the server was read-only"
assert_eq 6 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'gated-%' AND status = 'running'")" \
	"gated rows still running while read-only (nothing could be recorded)"
assert_eq 4 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'during-%' AND status = 'waiting'")" \
	"jobs submitted while read-only, still waiting"
ro_lines=$(tail -n +"$from" "$KYUD_LOG")
root_sql -e "SET GLOBAL read_only = 0"
echo "---- what kyud logged while the server was read-only (lines, count):"
# Row numbers vary: fold them so that repeated lines count together.
printf '%s\n' "$ro_lines" | grep -Ev 'attempt [0-9]+ started|succeeded$|acquired [0-9]+ job' |
	sed -E 's/row [0-9]+/row N/g' | sort | uniq -c | sort -rn
echo "----"

sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('after-', seq), 'echo \$KYU_JOB_ID >> $marks' FROM seq_1_to_4"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded' AND id NOT LIKE 'long-%'" 14 60
touch "$T_DIR/gate2"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 16 30

# Each ran once, at its first attempt, and the results kept in memory
# were recorded with their output.
assert_each_ran_once 16 "$marks"
assert_eq 6 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'gated-%' AND output = CONCAT('out-', id, '\n')")" \
	"gated rows recorded with their output"
# The failures were logged, and as what they are.
printf '%s\n' "$ro_lines" | grep -Eq '1290|read[-_ ]only' ||
	fail "nothing in kyud's log mentions the read-only refusals (error 1290)"
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud exited"
stop_kyud
