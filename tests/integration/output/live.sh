#!/usr/bin/env bash
# Live output ([kyud] live_output): while a job runs, its row's output holds
# the tail of what it wrote so far, under a line naming the attempt, and
# kyu web's job JSON and running list show it; the result at the end
# replaces it with the whole output. What it costs: short jobs and a job
# whose output stopped growing cause no write; one statement carries every
# due job of a worker, at most once per interval; a worker that lost a row
# (another claim's token in it) does not write it; an attempt put back at
# shutdown leaves no tail behind. Each live write is seen by a trigger of
# this test (a running row whose lease did not move while its output
# became a live tail: no other statement of kyud does that).
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

sql "CREATE TABLE live_writes (id VARCHAR(255) NOT NULL, at DATETIME(6) NOT NULL, len INT NOT NULL,
       owner BIGINT UNSIGNED NULL)"
sql "CREATE TRIGGER live_writes_seen AFTER UPDATE ON kyu_jobs FOR EACH ROW
       INSERT INTO live_writes SELECT NEW.id, NOW(6), LENGTH(NEW.output), NEW.owner FROM DUAL
       WHERE OLD.status = 'running' AND NEW.status = 'running' AND NEW.lease_until <=> OLD.lease_until
         AND NEW.output LIKE '[kyu: live output of attempt %'"
writes() { sql "SELECT COUNT(*) FROM live_writes WHERE id = '$1'"; }
# status_output ID: "STATUS OUTPUT", the output's newlines as '|'.
status_output() { sql "SELECT CONCAT(status, ' ', REPLACE(CAST(output AS CHAR), '\n', '|')) FROM kyu_jobs WHERE id = '$1'"; }

use_own_db_user
# shellcheck disable=SC2086
# Heartbeats far apart (every 20 s): a row taken over by another claim is
# noticed late, after several live writes were due. The lease (60 s) never
# runs out under a loaded machine while a part below looks at a row.
start_kyud $T_USER_KV kyud.workers=1 kyud.live_output=1 kyud.shutdown_grace=0 kyud.lease=60 kyud.heartbeat=20
port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL

# A job that goes on only when the test says so: its output at each step
# is known, whatever the machine's speed.
step_job() { # step_job ID: prints a line, waits for $T_DIR/ID.1, another, waits for $T_DIR/ID.2
	echo "echo 'first line'; while [ ! -e $T_DIR/$1.1 ]; do sleep 0.05; done; echo 'second line';
	      while [ ! -e $T_DIR/$1.2 ]; do sleep 0.05; done; echo last"
}

# ---- (a) the tail while it runs, then the whole output
sql "INSERT INTO kyu_jobs (id, command) VALUES ('steps', \"$(step_job steps)\")"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'steps'" running 30
wait_for "SELECT COUNT(*) FROM live_writes WHERE id = 'steps'" 1 30
assert_eq "running [kyu: live output of attempt 1: 11 bytes so far]|first line|" "$(status_output steps)" \
	"steps: status and output after its first line"
assert_eq '200 [true, "[kyu: live output of attempt 1: 11 bytes so far]\nfirst line\n"]' \
	"$(webq "$u/api/job?id=steps" "json.dumps([d['live'], d['job']['output']])")" "kyu web: the job's live tail"
assert_eq '200 ["steps", "first line\n"]' \
	"$(webq "$u/api/running" "json.dumps([d['rows'][0]['id'], d['rows'][0]['output_tail']])")" \
	"kyu web: the running list's tail (without the first line)"
# Its output does not change while it waits: no more writes, however many
# intervals pass (three here).
sleep 3
assert_eq 1 "$(writes steps)" "live writes of a job whose output stopped growing"
touch "$T_DIR/steps.1"
wait_for "SELECT CAST(output AS CHAR) LIKE '%second line%' FROM kyu_jobs WHERE id = 'steps'" 1 30
assert_eq "running [kyu: live output of attempt 1: 23 bytes so far]|first line|second line|" "$(status_output steps)" \
	"steps: status and output after its second line"
touch "$T_DIR/steps.2"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'steps'" succeeded 30
assert_eq "succeeded first line|second line|last|" "$(status_output steps)" "steps: the whole output at the end"
assert_eq '200 [false, "succeeded", "first line\nsecond line\nlast\n"]' \
	"$(webq "$u/api/job?id=steps" "json.dumps([d['live'], d['job']['status'], d['job']['output']])")" \
	"kyu web: the job once it ended"

# ---- (b) short jobs that print cost no live write (each runs a third of
# the interval after its output: without the threshold, some would be
# written). What kyud promises is "not before the attempt has run an
# interval": a job that a loaded machine stretched past the interval may
# be written, so only the rows whose duration (claim to result, which
# covers spawn to exit) stayed under it must have none.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('short-', seq), 'echo out; echo err >&2; sleep 0.3' FROM seq_1_to_20"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'short-%' AND status = 'succeeded'" 20 60
read -r n_short n_long <<<"$(sql "SELECT SUM(duration < 1), SUM(duration >= 1) FROM kyu_jobs WHERE id LIKE 'short-%'")"
echo "short jobs: $n_short ran under the 1 s interval, $n_long over it (a loaded machine)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM live_writes w JOIN kyu_jobs j ON j.id = w.id
                    WHERE w.id LIKE 'short-%' AND j.duration < 1")" "live writes of jobs shorter than the interval"
[ "$n_short" -gt 0 ] || fail "none of the 20 short jobs ran under the 1 s interval: nothing was tested"
assert_eq 20 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'short-%' AND output = 'out\nerr\n'")" \
	"short jobs' output"

# ---- (c) two chatty jobs: one statement for both, at most one per interval
# Both print a line every 0.05 s for as long as the test lets them.
chatty() { echo "i=0; while [ ! -e $T_DIR/$1.stop ]; do i=\$((i+1)); echo \"line \$i\"; sleep 0.05; done"; }
sql "INSERT INTO kyu_jobs (id, command) VALUES ('chatty-a', '$(chatty chatty)'), ('chatty-b', '$(chatty chatty)')"
wait_for "SELECT COUNT(DISTINCT id) FROM live_writes WHERE id LIKE 'chatty-%'" 2 30
u0=$(db_updates)
t0=$(sql "SELECT NOW(6)")
# Four statements at least, however long a loaded machine takes for them;
# the bound is then taken from the window's real length (database clock).
wait_for "SELECT COUNT(DISTINCT at) >= 4 FROM live_writes WHERE id LIKE 'chatty-%' AND at > '$t0'" 1 60
IFS=$'\t' read -r t1 window <<<"$(sql "SELECT NOW(6), TIMESTAMPDIFF(MICROSECOND, '$t0', NOW(6)) / 1e6")"
u1=$(db_updates)
read -r rows stmts <<<"$(sql "SELECT COUNT(*), COUNT(DISTINCT at) FROM live_writes
                              WHERE id LIKE 'chatty-%' AND at > '$t0' AND at <= '$t1'")"
echo "chatty jobs, $window s at live_output = 1: $rows row writes in $stmts statements; $((u1 - u0)) UPDATEs in all"
# One write per second, one more for the phase, one more for a statement
# that reached the server late and the next in time.
max_stmts=$(awk -v w="$window" 'BEGIN { printf "%d", w + 2 }')
[ "$stmts" -le "$max_stmts" ] || fail "live write statements in $window s: $stmts (at most $max_stmts)"
[ "$rows" -gt "$stmts" ] || fail "$rows row writes in $stmts statements: never both jobs in one"
max_len=$(sql "SELECT MAX(len) FROM live_writes WHERE id LIKE 'chatty-%'")
[ "$max_len" -le 4200 ] || fail "a live tail of $max_len bytes (at most 4 KiB and its first line)"
touch "$T_DIR/chatty.stop"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'chatty-%' AND status = 'succeeded'" 2 30
assert_eq 2 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'chatty-%' AND output LIKE 'line 1\nline 2\n%'
                    AND output NOT LIKE '%[kyu: live%'")" "chatty jobs' whole output at the end"

# ---- (d) a row taken over by another claim is not written
sql "INSERT INTO kyu_jobs (id, command) VALUES ('taken', '$(chatty taken)')"
wait_for "SELECT COUNT(*) > 0 FROM live_writes WHERE id = 'taken'" 1 30
# Another claim's token, as a daemon that took the expired row would leave.
# Until its next heartbeat the worker still runs the job and sends its
# live writes (the log counts each sent), and the row is not changed by
# any. Taken over right after a heartbeat (the row's lease_until moves),
# so that the next one is 20 s away: taken at a random moment, the next
# heartbeat was once 2 s away on a loaded machine, and only two writes
# went out before it.
lease0=$(sql "SELECT lease_until FROM kyu_jobs WHERE id = 'taken'")
wait_for "SELECT lease_until > '$lease0' FROM kyu_jobs WHERE id = 'taken'" 1 60
n0=$(grep -c 'wrote the output tail' "$KYUD_LOG")
# Its lease too, as that claim would set it: the row is not due again
# however long a loaded machine takes for the rest of this part.
taken_at=$(sql "UPDATE kyu_jobs SET owner = 1, lease_until = NOW(6) + INTERVAL 1 HOUR, output = 'the other claim'
                WHERE id = 'taken'; SELECT NOW(6)")
three_more() { [ "$(grep -c 'wrote the output tail' "$KYUD_LOG")" -ge $((n0 + 3)) ]; }
wait_until 60 "three live writes sent after the takeover" three_more
wait_for_log "job taken: lease lost to another claim" 60
assert_eq 0 "$(sql "SELECT COUNT(*) FROM live_writes WHERE id = 'taken' AND at > '$taken_at' AND owner = 1")" \
	"live writes after the row passed to another claim"
assert_eq "the other claim" "$(sql "SELECT CAST(output AS CHAR) FROM kyu_jobs WHERE id = 'taken'")" \
	"output of the row another claim holds"
sql "DELETE FROM kyu_jobs WHERE id = 'taken'"

# ---- (e) kyu web and an earlier attempt's output: not shown as live
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, owner, lease_until, host, started_at, output)
     VALUES ('other', 'elsewhere', 'true', 'running', 2, 7, NOW(6) + INTERVAL 1 HOUR, 'host-b',
             NOW(6), '[kyu: live output of attempt 1: 3 bytes so far]\nold')"
assert_eq '200 [false, "[kyu: live output of attempt 1: 3 bytes so far]\nold"]' \
	"$(webq "$u/api/job?id=other" "json.dumps([d['live'], d['job']['output']])")" \
	"kyu web: an earlier attempt's tail is not this attempt's"
assert_eq '200 [null]' "$(webq "$u/api/running" "json.dumps([r['output_tail'] for r in d['rows'] if r['id'] == 'other'])")" \
	"kyu web: the running list leaves an earlier attempt's tail out"
sql "UPDATE kyu_jobs SET output = '[kyu: live output of attempt 2: 4 bytes so far]\n<b>\n' WHERE id = 'other'"
assert_eq '200 ["<b>\n"]' \
	"$(webq "$u/api/running" "json.dumps([r['output_tail'] for r in d['rows'] if r['id'] == 'other'])")" \
	"kyu web: the running list's tail, as text"
assert_eq '200 true' "$(webq "$u/api/job?id=other" "json.dumps(d['live'])")" "kyu web: this attempt's tail"
sql "DELETE FROM kyu_jobs WHERE id = 'other'"

# ---- (f) an attempt put back at shutdown leaves no tail
sql "INSERT INTO kyu_jobs (id, command) VALUES ('interrupted', \"$(step_job interrupted)\")"
wait_for "SELECT COUNT(*) FROM live_writes WHERE id = 'interrupted'" 1 30
stop_kyud
assert_eq "waiting	0	NULL" "$(sql "SELECT status, attempts, IFNULL(output, 'NULL') FROM kyu_jobs WHERE id = 'interrupted'")" \
	"the interrupted job: status, attempts, output"
stop_web
echo "ok"
