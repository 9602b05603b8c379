#!/usr/bin/env bash
# Retention: at start-up kyud deletes succeeded rows last updated longer ago
# than `retention`, failed and cancelled rows (and their attempts) longer
# ago than `retention_failed`, and nothing else:
# - rows of each status older than retention but younger than
#   retention_failed: only the succeeded one goes; the attempts of the kept
#   ones stay;
# - older than both: all go, with their attempts;
# - retention_failed below retention: failures are still kept retention
#   (an id is held at least that long, whatever the end of its job).
. "$KYU_SRC/tests/lib.sh"

# finished PREFIX AGE: a succeeded, a failed and a cancelled row last
# updated AGE ago (an SQL interval), each with one attempt.
finished() {
	local at="NOW(6) - INTERVAL $2"
	sql "INSERT INTO kyu_jobs (id, command, status, exit_code, finished_at, updated_at) VALUES
	     ('$1-succeeded', 'true', 'succeeded', 0, $at, $at),
	     ('$1-failed', 'false', 'failed', 1, $at, $at),
	     ('$1-cancelled', 'true', 'cancelled', NULL, $at, $at);
	     INSERT INTO kyu_attempts (job_seq, job_id, attempt, queue, finished_at, outcome)
	     SELECT seq, id, 1, queue, updated_at, IF(status = 'failed', 'failed', status)
	       FROM kyu_jobs WHERE id LIKE '$1-%'"
}
ids() { sql "SELECT id FROM kyu_jobs ORDER BY id" | tr '\n' ' ' | sed 's/ $//'; }
attempts() { sql "SELECT job_id FROM kyu_attempts ORDER BY job_id" | tr '\n' ' ' | sed 's/ $//'; }

finished mid '2 HOUR'
finished old '2 DAY'
finished fresh '20 SECOND'
# Old, but not finished: a waiting job due tomorrow and a running one whose
# lease (held by some other daemon) runs until tomorrow.
old="NOW(6) - INTERVAL 3 DAY"
future="NOW(6) + INTERVAL 1 DAY"
sql "INSERT INTO kyu_jobs (id, command, status, run_at, created_at, updated_at) VALUES
     ('old-waiting', 'true', 'waiting', $future, $old, $old)"
sql "INSERT INTO kyu_jobs (id, command, status, attempts, owner, lease_until, created_at, updated_at) VALUES
     ('old-running', 'true', 'running', 1, 424242, $future, $old, $old)"
assert_eq 11 "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows inserted"
assert_eq 9 "$(sql "SELECT COUNT(*) FROM kyu_attempts")" "attempts inserted"

# retention 1 hour, retention_failed 1 day: mid-succeeded and every old-
# finished row go (waiting for the last of them is waiting for the delete).
start_kyud kyud.retention=3600 kyud.retention_failed=86400 kyud.cleanup_every=1
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('mid-succeeded', 'old-succeeded', 'old-failed', 'old-cancelled')" 0 30
stop_kyud
assert_eq "fresh-cancelled fresh-failed fresh-succeeded mid-cancelled mid-failed old-running old-waiting" \
	"$(ids)" "rows left by retention 1 h, retention_failed 1 day"
assert_eq "fresh-cancelled fresh-failed fresh-succeeded mid-cancelled mid-failed" "$(attempts)" \
	"attempts left: those of the kept rows"
assert_eq "waiting running" "$(sql "SELECT status FROM kyu_jobs WHERE id IN ('old-waiting', 'old-running') ORDER BY id DESC" | tr '\n' ' ' | sed 's/ $//')" \
	"status of the unfinished rows"
assert_log_contains 'retention: deleted 4 finished jobs'

# retention_failed shorter than retention: retention holds the failures
# too. A succeeded row older than retention shows the delete has run.
finished late '5 HOUR'
start_kyud kyud.retention=10800 kyud.retention_failed=60 kyud.cleanup_every=1
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'late-succeeded'" 0 30
stop_kyud
assert_eq "fresh-cancelled fresh-failed fresh-succeeded mid-cancelled mid-failed old-running old-waiting" \
	"$(ids)" "rows left by retention 3 h, retention_failed 60 s (failures older than 3 h only)"
assert_eq "fresh-cancelled fresh-failed fresh-succeeded mid-cancelled mid-failed" "$(attempts)" \
	"attempts left the second time"
