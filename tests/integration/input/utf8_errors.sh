#!/usr/bin/env bash
# An error kyud builds from a row's text is cut on a character boundary,
# so the server (utf8mb4, strict mode) takes it: each of these rows ends
# `failed` with its real error at its first attempt, instead of its result
# being refused, dropped and the job claimed again after every lease
# (issue 25, item 1). Texts of several lengths, so that some cut falls
# inside a two-byte "é" whatever the buffer sizes are.
. "$KYU_SRC/tests/lib.sh"

# The INSERT checks (kyu_jobs_check, schema version 7) would refuse the env
# rows; kyud must still fail the ones an UPDATE or an older schema lets in.
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_check"
start_kyud kyud.workers=1 job.max_attempts=3
sql "SET SESSION sql_mode = 'STRICT_ALL_TABLES';
     INSERT INTO kyu_jobs (id, command, cwd) VALUES
       ('cwd1', 'true', CONCAT('/', REPEAT('é', 299))),
       ('cwd2', 'true', CONCAT('/x', REPEAT('é', 299)));
     INSERT INTO kyu_jobs (id, argv) VALUES
       ('argv1', CONCAT('[\"', REPEAT('é', 300), '\"]')),
       ('argv2', CONCAT('[\"x', REPEAT('é', 300), '\"]'));
     INSERT INTO kyu_jobs (id, command, env) VALUES
       ('env1', 'true', CONCAT('{\"=', REPEAT('é', 40), '\": \"v\"}')),
       ('env2', 'true', CONCAT('{\"A=', REPEAT('é', 40), '\": \"v\"}')),
       ('env3', 'true', CONCAT('{\"', REPEAT('é', 40), '\": 1}'));
     INSERT INTO kyu_jobs (id, command) VALUES ('good', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 8 40

row() { sql "SELECT CONCAT(status, '/', attempts, ': ', LEFT(error, 40)) FROM kyu_jobs WHERE id = '$1'"; }
assert_eq "failed/1: cannot change to directory /éééééééééééé" "$(row cwd1)" cwd1
assert_eq "failed/1: cannot change to directory /xééééééééééé" "$(row cwd2)" cwd2
assert_eq "failed/1: cannot execute ééééééééééééééééééééééééé" "$(row argv1)" argv1
assert_eq "failed/1: cannot execute xéééééééééééééééééééééééé" "$(row argv2)" argv2
assert_eq "failed/1: env: invalid variable name '=ééééééééééé" "$(row env1)" env1
assert_eq "failed/1: env: invalid variable name 'A=éééééééééé" "$(row env2)" env2
assert_eq "failed/1: env: value of éééééééééééééééééééééééééé" "$(row env3)" env3
assert_eq "succeeded/1: " "$(sql "SELECT CONCAT(status, '/', attempts, ': ') FROM kyu_jobs WHERE id = 'good'")" good
# Whole characters only: nothing was replaced on the way in, and no row's
# error ends in a cut character (the server would have refused it).
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE error LIKE '%?%' OR error LIKE '%\xEF\xBF\xBD%'")" "replaced characters"
assert_log_lacks 'dropping it'
assert_log_lacks 'could not record'

# Whatever the server refuses in a result (here a trigger refuses any
# error text naming exit code 3, as strict mode refuses a malformed one),
# the result is not dropped: it is recorded reduced, status and exit code
# with a plain ASCII error, at the first attempt, under its claim.
root_sql -D "$T_DB" --delimiter=// -e "
     CREATE TRIGGER refuse_exit3 BEFORE UPDATE ON kyu_jobs FOR EACH ROW
       IF NEW.error LIKE '%exit code 3%' THEN
         SIGNAL SQLSTATE '22007' SET MYSQL_ERRNO = 1366, MESSAGE_TEXT = 'refused: é';
       END IF //"
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('refused', 'echo some output; exit 3', 1)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'refused'" failed 40
assert_eq "1/3/NULL" "$(sql "SELECT CONCAT(attempts, '/', exit_code, '/', IFNULL(output, 'NULL')) FROM kyu_jobs WHERE id = 'refused'")" "refused: attempts/exit code/output"
assert_eq "kyud could not record this attempt's error text and output (the server said: error 1366: refused: ??)" \
	"$(sql "SELECT error FROM kyu_jobs WHERE id = 'refused'")" "refused: error"
assert_log_contains 'recording the result of row [0-9]+ failed: .*refused.*; recording it with less of it'
assert_log_lacks 'dropping it'
sql "DROP TRIGGER refuse_exit3"
stop_kyud
