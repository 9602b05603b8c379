#!/usr/bin/env bash
# No value a row can hold stops the claim of other rows: each bad row ends
# `failed`, unrun, with an error naming the column and value; the log names
# its id (escaped, so that an id with a newline cannot forge a log line);
# the good rows inserted around them all succeed.
. "$KYU_SRC/tests/lib.sh"

# The INSERT checks (kyu_jobs_check, schema version 7) would refuse these
# rows; kyud must still fail the ones an UPDATE or an older schema lets in.
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_check"
start_kyud kyud.workers=1 job.max_attempts=2
sql "SET SESSION check_constraint_checks = 0;
     INSERT INTO kyu_jobs (id, command, attempts) VALUES ('big-attempts', 'true', 4294967295);
     INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('zero-max', 'true', 0);
     INSERT INTO kyu_jobs (id, command, tempfails) VALUES ('big-tempfails', 'true', 4294967295);
     INSERT INTO kyu_jobs (id, command) VALUES ('nul', CONCAT('touch $T_DIR/nul-ran', CHAR(0), '; rm -rf /nonexistent'));
     INSERT INTO kyu_jobs (id, argv) VALUES ('nul-argv', CONCAT('[\"/bin/touch\", \"$T_DIR/x', CHAR(0), '\"]'));
     INSERT INTO kyu_jobs (id, command, cwd) VALUES ('cwd-file', 'true', '/etc/passwd');
     INSERT INTO kyu_jobs (id, command) VALUES (CONCAT('evil', CHAR(10), 'kyud[sup]: forged'), 'exit 3');
     INSERT INTO kyu_jobs (id, command) SELECT CONCAT('good', seq), 'true' FROM seq_1_to_20"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 27 30

assert_eq 20 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'good%' AND status = 'succeeded'")" "good rows succeeded"
err() { sql "SELECT CONCAT(status, ': ', error) FROM kyu_jobs WHERE id = '$1'"; }
assert_eq "failed: attempts = 4294967295: at the column's limit, cannot count another" "$(err big-attempts)" big-attempts
assert_eq "failed: max_attempts = 0: must be at least 1 (or NULL for the default)" "$(err zero-max)" zero-max
assert_eq "failed: tempfails = 4294967295: must be below attempts (1 after this claim)" "$(err big-tempfails)" big-tempfails
assert_eq "failed: command contains a NUL byte (at byte $((${#T_DIR} + 14))): refused" "$(err nul)" nul
[ ! -e "$T_DIR/nul-ran" ] || fail "the command with a NUL byte ran (cut short)"
assert_eq "failed: argv contains a NUL byte (at byte $((${#T_DIR} + 18))): refused" "$(err nul-argv)" nul-argv
assert_eq "failed: cannot change to directory /etc/passwd: not a directory" "$(err cwd-file)" cwd-file
# The user can cancel (and so delete) such rows like any other.
assert_eq 1 "$(sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'zero-max'; SELECT ROW_COUNT()")" "cancel of zero-max"

# The id with a newline is logged escaped, on one line; nothing forged.
assert_log_contains 'job evil\\x0akyud\[sup\]: forged (failed|will retry): exit code 3'
assert_log_lacks '^kyud\[sup\]: forged'
assert_log_contains 'job big-attempts failed: attempts = 4294967295'
stop_kyud
