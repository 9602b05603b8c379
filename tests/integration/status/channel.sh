#!/usr/bin/env bash
# The status channel (kyu_jobs(7), "The status channel"): a job writes
# "progress P [NOTE]" and "result JSON" lines to descriptor $KYU_STATUS_FD.
# The row shows the last progress and note while the job runs (with the
# live output writes) and keeps the last ones at the end, with the last
# result, which the server checks is JSON; malformed lines are ignored
# and counted in the error; a job that closes the descriptor at once or
# never uses it ends as before; a retry starts with no progress.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

# Heartbeats far apart: a row's lease never runs out while a part below
# looks at it on a loaded machine.
start_kyud kyud.workers=1 kyud.live_output=1 kyud.lease=60 kyud.result_max=1000 \
	job.backoff_base=1 job.backoff_cap=1
port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
S='>&"$KYU_STATUS_FD"'
row() { sql "SELECT CONCAT_WS(' | ', status, IFNULL(progress, 'NULL'), IFNULL(progress_note, 'NULL'),
                                IFNULL(result, 'NULL'), IFNULL(error, 'NULL')) FROM kyu_jobs WHERE id = '$1'"; }

# ---- progress while it runs, the last one and the result at the end
steps="echo 'progress 10 starting' $S; while [ ! -e $T_DIR/steps.1 ]; do sleep 0.05; done;
       echo 'progress 60 half way' $S; echo 'progress 61 just past half' $S;
       while [ ! -e $T_DIR/steps.2 ]; do sleep 0.05; done;
       echo 'progress 90 almost' $S; echo 'result {\"n\": 3, \"s\": \"x\"}' $S; echo out"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('steps', '$(sed "s/'/''/g" <<<"$steps")')"
wait_for "SELECT CONCAT(status, ' ', IFNULL(progress, 'NULL'), ' ', IFNULL(progress_note, 'NULL'))
          FROM kyu_jobs WHERE id = 'steps'" "running 10 starting" 30
assert_eq NULL "$(sql "SELECT IFNULL(result, 'NULL') FROM kyu_jobs WHERE id = 'steps'")" "steps: no result while it runs"
assert_eq '200 [10, "starting"]' \
	"$(webq "$u/api/running" "json.dumps([[r['progress'], r['progress_note']] for r in d['rows'] if r['id'] == 'steps'][0])")" \
	"kyu web: the running list's progress"
touch "$T_DIR/steps.1"
wait_for "SELECT CONCAT(status, ' ', progress, ' ', progress_note) FROM kyu_jobs WHERE id = 'steps'" \
	"running 61 just past half" 30
touch "$T_DIR/steps.2"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'steps'" succeeded 30
assert_eq 'succeeded | 90 | almost | {"n": 3, "s": "x"} | NULL' "$(row steps)" "steps at the end"
assert_eq 1 "$(sql "SELECT output = 'out\n' FROM kyu_jobs WHERE id = 'steps'")" "steps: its output"
assert_eq 3 "$(sql "SELECT JSON_VALUE(result, '\$.n') FROM kyu_jobs WHERE id = 'steps'")" "steps: the result is JSON"
assert_eq '200 [90, "almost", "{\"n\": 3, \"s\": \"x\"}"]' \
	"$(webq "$u/api/job?id=steps" "json.dumps([d['job']['progress'], d['job']['progress_note'], d['job']['result']])")" \
	"kyu web: the job's progress and result"
# kyu show prints them; not for a job without them.
shown=$("$KYU" -c "$KYUD_INI" show steps) || fail "kyu show steps failed"
assert_eq '    progress: 90% almost|      result: {"n": 3, "s": "x"}' \
	"$(grep -E '^ *(progress|result):' <<<"$shown" | paste -sd '|')" "kyu show: progress and result"

# ---- short jobs: what they said is recorded at the end
# One attempt for 'failing', set in the INSERT: an UPDATE after it could
# come after its first attempt.
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES
       ('badjson', 'echo \"result {not: json\" $S', NULL),
       ('noline', 'printf \"progress 70 no newline\" $S', NULL),
       ('empty', 'echo result $S', NULL),
       ('malformed', 'printf \"hello world\\\\nprogress 101\\\\nprogress 50\\\\nprogress abc\\\\n\\\\nprogress 5 \\\\377\\\\n\" $S', NULL),
       ('long', '{ head -c 2000 /dev/zero | tr \"\\\\0\" x; echo; } | sed \"s/^/result /\" $S; echo \"progress 3\" $S', NULL),
       ('failing', 'echo \"progress 20 tried\" $S; echo \"result [1]\" $S; exit 9', 1),
       ('closed', 'exec 3>&-; echo hi', NULL),
       ('plain', 'true', NULL)"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 9 60
assert_eq 'succeeded | NULL | NULL | NULL | kyu: result on KYU_STATUS_FD is not valid JSON: {not: json' \
	"$(row badjson)" "a result that is not JSON"
assert_eq 'succeeded | 70 | no newline | NULL | NULL' "$(row noline)" "a last line without its newline"
assert_eq 'succeeded | NULL | NULL | NULL | kyu: result on KYU_STATUS_FD is not valid JSON: ' \
	"$(row empty)" "an empty result"
assert_eq "succeeded | 50 | NULL | NULL | kyu: 4 malformed lines on KYU_STATUS_FD ignored; the first: unknown verb 'hello'" \
	"$(row malformed)" "malformed lines"
assert_eq "succeeded | 3 | NULL | NULL | kyu: 1 malformed line on KYU_STATUS_FD ignored; the first: line over 1007 bytes: 'result xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'" \
	"$(row long)" "a line over the bound ([kyud] result_max = 1000)"
assert_eq 'failed | 20 | tried | [1] | exit code 9' "$(row failing)" "a failed job's progress and result"
assert_eq 'succeeded | NULL | NULL | NULL | NULL' "$(row closed)" "a job that closed the descriptor at once"
assert_eq 1 "$(sql "SELECT output = 'hi\n' FROM kyu_jobs WHERE id = 'closed'")" "its output"
assert_eq 'succeeded | NULL | NULL | NULL | NULL' "$(row plain)" "a job that never used it"
shown=$("$KYU" -c "$KYUD_INI" show plain) || fail "kyu show plain failed"
assert_eq "" "$(grep -E '^ *(progress|result):' <<<"$shown")" "kyu show: no progress or result lines for a plain job"

# ---- a retry starts with no progress
retry="if [ \"\$KYU_ATTEMPT\" = 1 ]; then echo 'progress 50 first try' $S; echo 'result {\"try\": 1}' $S; exit 3; fi;
       touch $T_DIR/retry.running; while [ ! -e $T_DIR/retry.go ]; do sleep 0.05; done"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('retry', '$(sed "s/'/''/g" <<<"$retry")')"
wait_until 60 "the second attempt" test -e "$T_DIR/retry.running"
assert_eq 'running | NULL | NULL | NULL' \
	"$(sql "SELECT CONCAT_WS(' | ', status, IFNULL(progress, 'NULL'), IFNULL(progress_note, 'NULL'), IFNULL(result, 'NULL'))
	        FROM kyu_jobs WHERE id = 'retry'")" "the second attempt's progress and result"
touch "$T_DIR/retry.go"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'retry'" succeeded 30
assert_eq 'succeeded | NULL | NULL | NULL | NULL' "$(row retry)" "the retried job at the end"
assert_eq 2 "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'retry'")" "its attempts"
stop_kyud
stop_web
echo ok
