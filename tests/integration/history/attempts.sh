#!/usr/bin/env bash
# kyu_attempts (kyu_jobs(7), "Attempts"): one row per attempt that ended,
# written by kyud with the result.
# - a job that fails twice (a counter file), then succeeds: three rows,
#   retried, retried, succeeded, numbered 1 2 3, with the exit codes, the
#   errors, finished_at increasing, and the daemon's id, host and pid;
# - a job past its time limit: timeout; one killed by a signal: failed,
#   with signal; a running job cancelled: cancelled;
# - output_tail is the end of the output, at most [kyud] attempt_output
#   bytes; a job that wrote nothing has none;
# - kyu show prints the attempts as a table after the job;
# - a plain DELETE of a job removes its rows, and so does retention's.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1 kyud.history=all kyud.lease=8 job.backoff_base=1 job.backoff_cap=1 job.kill_grace=1 \
	kyud.attempt_output=100
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES
     ('flaky', 'n=\$(cat $T_DIR/count 2>/dev/null || echo 0); n=\$((n + 1)); echo \$n > $T_DIR/count
      printf %500s | tr \" \" x; echo \" end of try \$n\"
      [ \$n -ge 3 ] && exit 0; exit \$((n + 3))', 3);
     INSERT INTO kyu_jobs (id, command, max_attempts, time_limit) VALUES ('slow', 'sleep 60', 1, 1);
     INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('killed', 'kill -9 \$\$', 1);
     INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('quiet', 'true', 1)"
wait_for "SELECT GROUP_CONCAT(id, ' ', status ORDER BY id) FROM kyu_jobs" \
	"flaky succeeded,killed failed,quiet succeeded,slow failed" 60

# A running job, cancelled: its attempt ends at the next heartbeat.
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('busy', 'echo started; sleep 60', 1)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'busy'" running 30
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'busy' AND status = 'running'"
wait_for "SELECT COUNT(*) FROM kyu_attempts WHERE job_id = 'busy'" 1 60

attempts() { # attempts ID: "attempt outcome exit_code signal" of each row, in order
	sql "SELECT GROUP_CONCAT(CONCAT_WS(' ', attempt, outcome, IFNULL(exit_code, '-'), IFNULL(\`signal\`, '-'))
	     ORDER BY seq SEPARATOR ',') FROM kyu_attempts WHERE job_id = '$1'"
}
assert_eq "1 retried 4 -,2 retried 5 -,3 succeeded 0 -" "$(attempts flaky)" "flaky's attempts"
assert_eq "exit code 4,exit code 5,-" \
	"$(sql "SELECT GROUP_CONCAT(IFNULL(SUBSTRING_INDEX(error, ':', 1), '-') ORDER BY seq) FROM kyu_attempts
	        WHERE job_id = 'flaky'")" "flaky's errors"
assert_eq 1 "$(sql "SELECT MIN(b.finished_at > a.finished_at AND b.started_at >= a.finished_at)
	FROM kyu_attempts AS a JOIN kyu_attempts AS b ON b.job_seq = a.job_seq AND b.attempt = a.attempt + 1
	WHERE a.job_id = 'flaky'")" "flaky's attempts: each starts after the one before ended, and ends later"
assert_eq 2 "$(sql "SELECT COUNT(*) FROM kyu_attempts AS a JOIN kyu_attempts AS b ON b.job_seq = a.job_seq
	AND b.attempt = a.attempt + 1 WHERE a.job_id = 'flaky'")" "flaky's attempts follow each other"
assert_eq "flaky 3 $(hostname) 1 1" \
	"$(sql "SELECT CONCAT_WS(' ', a.job_id, COUNT(*), MIN(a.host), MIN(a.daemon = d.id), MIN(a.pid > 0
	          AND a.queue = 'default' AND a.job_seq = j.seq AND a.started_at <= a.finished_at
	          AND a.cpu_user IS NOT NULL AND a.max_rss > 0))
	        FROM kyu_attempts AS a JOIN kyu_jobs AS j ON j.id = a.job_id, kyu_daemons AS d
	        WHERE a.job_id = 'flaky' GROUP BY a.job_id")" \
	"flaky's rows: host, the daemon's id in kyu_daemons, pid, seq, times, cost"
assert_eq "1 timeout - 15" "$(attempts slow)" "the job past its time limit"
assert_eq "timed out after 1 s" "$(sql "SELECT error FROM kyu_attempts WHERE job_id = 'slow'")" "its error"
assert_eq "1 failed - 9" "$(attempts killed)" "the job killed by a signal"
assert_eq "1 cancelled - 15" "$(attempts busy)" "the running job cancelled"
assert_eq "1 succeeded 0 -" "$(attempts quiet)" "the job that wrote nothing"

# The output's end, at most attempt_output (100) bytes.
assert_eq "100 100 100 1" "$(sql "SELECT CONCAT_WS(' ', GROUP_CONCAT(LENGTH(output_tail) ORDER BY seq SEPARATOR ' '),
	MIN(output_tail LIKE '%x end of try _\n'))
	FROM kyu_attempts WHERE job_id = 'flaky'")" "flaky's output tails: 100 bytes each, its end"
assert_eq "x end of try 2" "$(sql "SELECT TRIM(TRAILING '\n' FROM RIGHT(output_tail, 15)) FROM kyu_attempts
	WHERE job_id = 'flaky' AND attempt = 2")" "the second attempt's own tail"
assert_eq NULL "$(sql "SELECT IFNULL(output_tail, 'NULL') FROM kyu_attempts WHERE job_id = 'quiet'")" \
	"no output, no tail"

# kyu show: the job, then its attempts as a table.
"$KYU" -c "$KYUD_INI" show flaky >"$T_DIR/show" || fail "kyu show flaky failed"
grep -qxF "    attempts: 3" "$T_DIR/show" || fail "kyu show flaky: no attempts line: $(cat "$T_DIR/show")"
head_line=$(grep -n "^attempt	outcome	started_at	finished_at	duration	exit_code	signal	host	pid	cpu	max_rss	error$" \
	"$T_DIR/show" | cut -d: -f1) || fail "kyu show flaky: no table header: $(cat -A "$T_DIR/show")"
assert_eq "1 retried 4 exit code 4|2 retried 5 exit code 5|3 succeeded 0 NULL" \
	"$(tail -n +$((head_line + 1)) "$T_DIR/show" | awk -F'\t' '{ printf "%s%s %s %s %s", (NR > 1 ? "|" : ""), $1, $2, $6, substr($12, 1, 11) }')" \
	"kyu show flaky: the rows of its table (attempt, outcome, exit code, error)"
tail -n +$((head_line + 1)) "$T_DIR/show" | awk -F'\t' -v h="$(hostname)" \
	'$8 != h || $9 !~ /^[0-9]+$/ || $3 !~ /^20[0-9-]+ [0-9:.]+ / || $5 !~ /^[0-9.]+$/ { bad = 1 } END { exit bad }' ||
	fail "kyu show flaky: host, pid, times or duration: $(cat -A "$T_DIR/show")"
"$KYU" -c "$KYUD_INI" show killed >"$T_DIR/show" || fail "kyu show killed failed"
grep -q "^1	failed	.*	NULL	9	$(hostname)	" "$T_DIR/show" || fail "kyu show killed: no signal 9: $(cat -A "$T_DIR/show")"

# A plain DELETE removes the job's rows (the trigger), and only its.
sql "DELETE FROM kyu_jobs WHERE id = 'killed'"
assert_eq "0 6" "$(sql "SELECT CONCAT_WS(' ', SUM(job_id = 'killed'), SUM(job_id <> 'killed')) FROM kyu_attempts")" \
	"attempts after a plain DELETE of one job"
stop_kyud

# Retention: a kyud that keeps finished rows 1 s deletes them at start-up,
# and their attempts with them.
sleep 1.1
start_kyud kyud.workers=1 kyud.history=all kyud.retention=1 kyud.retention_failed=1 kyud.cleanup_every=1
wait_for "SELECT COUNT(*) FROM kyu_jobs" 0 60
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_attempts")" "attempts after retention deleted their jobs"
stop_kyud
assert_log_lacks 'kyu_attempts failed'
