#!/usr/bin/env bash
# kyu_minutes: kyud counts the jobs that end, per minute, queue and worker,
# in the round trips that record them, and kyu web's overview reads the
# last hour from there. Jobs that succeed (plain, and with output), fail
# for good, retry and then succeed or fail, a running job the user
# cancels, and a result rejected because its row passed to another claim:
# the table's sums and the overview's figures equal the rows' outcomes.
# Rows outside the hour are not shown; retention deletes those older than
# 7 days. A count that fails (the table gone) leaves jobs running and is
# logged once; without the table the overview counts kyu_jobs' rows.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

# No heartbeat before the gated job's end (first one 100 s after its claim:
# the gate below opens by itself after 60 s of sleeps at most, and a heartbeat
# that came first would kill the attempt instead of letting its result be
# rejected).
start_kyud kyud.workers=2 kyud.lease=120 kyud.heartbeat=100 kyud.cleanup_every=1 \
	job.backoff_base=1 job.backoff_cap=1
gate="for i in \$(seq 600); do [ -e $T_DIR/gate ] && break; sleep 0.1; done"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('stolen', 'm1', '$gate'), ('c1', 'm1', 'sleep 2')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running'" 2 30
# Another claim's takeover, which ran and recorded the job (as lease/late_write.sh
# makes it, to the end); and the user's cancel.
sql "UPDATE kyu_jobs SET owner = 12345, attempts = attempts + 1, status = 'succeeded', lease_until = NULL,
     finished_at = NOW(6) WHERE id = 'stolen'; UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'c1'"
sql "INSERT INTO kyu_jobs (id, queue, command, max_attempts) VALUES
     ('ok1', 'm1', 'true', NULL), ('ok2', 'm1', 'true', NULL), ('ok3', 'm1', 'true', NULL),
     ('ok4', 'm1', 'true', NULL), ('ok5', 'm1', 'true', NULL), ('out', 'm1', 'echo hi', NULL),
     ('f1', 'm1', 'exit 3', 1), ('f2', 'm1', 'exit 3', 1),
     ('r1', 'm1', '[ \$KYU_ATTEMPT -ge 2 ] || exit 3', 2),
     ('t1', 'm1', '[ \$KYU_ATTEMPT -ge 2 ] || exit 75', 1),
     ('q1', 'm2', 'true', NULL), ('q2', 'm2', 'true', NULL), ('q3', 'm2', 'true', NULL),
     ('r2', 'm2', 'exit 4', 2)"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id NOT IN ('stolen', 'c1') AND status IN ('succeeded', 'failed')" 14 40
wait_for "SELECT status FROM kyu_jobs WHERE id = 'c1' AND finished_at IS NOT NULL" cancelled 20
touch "$T_DIR/gate"
wait_for_log 'result\(s\) rejected' 60
assert_eq "succeeded 12345" "$(sql "SELECT CONCAT(status, ' ', owner) FROM kyu_jobs WHERE id = 'stolen'")" \
	"the stolen row after the late result"

minutes() { sql "SELECT queue, SUM(succeeded), SUM(failed), SUM(retried) FROM kyu_minutes GROUP BY queue ORDER BY queue"; }
assert_eq "m1	8	2	2
m2	3	1	1" "$(minutes)" "kyu_minutes per queue: succeeded, failed, retried"
# The same as the rows this daemon ended say (retries leave no trace but
# attempts there).
assert_eq "m1	8	2
m2	3	1" "$(sql "SELECT queue, SUM(status = 'succeeded'), SUM(status = 'failed') FROM kyu_jobs
                 WHERE id <> 'stolen' GROUP BY queue ORDER BY queue")" "kyu_jobs per queue: succeeded, failed"
assert_eq 3 "$(sql "SELECT SUM(attempts - 1) FROM kyu_jobs WHERE id IN ('r1', 't1', 'r2')")" "retries in kyu_jobs"
# Each worker writes rows of its own, under the daemon's registered token.
assert_eq "1 0" "$(sql "SELECT CONCAT(COUNT(DISTINCT daemon), ' ', SUM(daemon NOT IN (SELECT id FROM kyu_daemons)))
                       FROM kyu_minutes")" "writers: one daemon, the registered one"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_minutes WHERE worker NOT IN (1, 2) OR SECOND(minute) <> 0
                    OR minute > UTC_TIMESTAMP() OR minute < UTC_TIMESTAMP() - INTERVAL 5 MINUTE")" \
	"rows of workers 1 and 2, whole minutes of the last few, UTC"

port=$(free_tcp_port)
start_web "$port"
ov() { webq "$WEB_URL/api/overview" "$1"; }
assert_eq "200 kyu_minutes None True" "$(ov "' '.join(str(d[k]) for k in ('hour_source', 'hour_age', 'per_queue_hour'))")" \
	"the overview's source"
assert_eq "200 [8, 2, 2, 10, 60]" "$(ov "[q('m1')[k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h')] + [sum(q('m1')['per_minute']), len(q('m1')['per_minute'])]")" \
	"m1 in the overview: succeeded, failed, retried, ended per minute"
assert_eq "200 [3, 1, 1, 4]" "$(ov "[q('m2')[k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h')] + [sum(q('m2')['per_minute'])]")" \
	"m2 in the overview"
assert_eq "200 [11, 3, 3, 14]" "$(ov "[d['all'][k] for k in ('succeeded_1h', 'failed_1h', 'retried_1h')] + [sum(d['all']['per_minute'])]")" \
	"all queues in the overview"

# The hour is the current minute and the 59 before it; retention keeps 7 days.
sql "INSERT INTO kyu_minutes (minute, queue, daemon, worker, succeeded, failed, retried) VALUES
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 30 MINUTE, 'm2', 'old', 1, 7, 0, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 90 MINUTE, 'm2', 'old', 1, 100, 0, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 6 DAY, 'm2', 'old', 1, 100, 0, 0),
     (UTC_TIMESTAMP() - INTERVAL SECOND(UTC_TIMESTAMP()) SECOND - INTERVAL 8 DAY, 'm2', 'old', 1, 100, 0, 0)"
assert_eq "200 [10, 11, 7]" "$(ov "[q('m2')['succeeded_1h'], sum(q('m2')['per_minute']), max(q('m2')['per_minute'][28:31])]")" \
	"m2 with a minute 30 minutes back (and one 90 minutes back, not shown)"
# Each claim (cleanup_every = 1) is followed by the retention delete.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('after', 'm2', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_minutes WHERE daemon = 'old'" 3 30
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_minutes WHERE minute < UTC_TIMESTAMP() - INTERVAL 7 DAY")" \
	"minutes older than 7 days"

# The table gone: jobs still run, the failure is logged once.
sql "RENAME TABLE kyu_minutes TO kyu_minutes_away"
EXIT_HOOKS+=("sql 'RENAME TABLE kyu_minutes_away TO kyu_minutes' 2>/dev/null || true")
sql "INSERT INTO kyu_jobs (id, queue, command, max_attempts) VALUES ('away1', 'm1', 'true', NULL),
     ('away2', 'm1', 'echo x', NULL), ('away3', 'm1', 'exit 3', 1)"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'away%' AND status IN ('succeeded', 'failed')" 3 30
wait_for_log "counting ended jobs in kyu_minutes failed: .*kyu_minutes' doesn't exist" 30
stop_kyud
n=$(grep -c 'counting ended jobs in kyu_minutes failed' "$KYUD_LOG")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || fail "failure lines: $n (one per worker at most)"
# Without the table (a schema older than version 4), the overview counts
# the rows of kyu_jobs that ended in the hour.
assert_eq "200 kyu_jobs 15 4" "$(ov "' '.join(str(x) for x in (d['hour_source'], d['all']['succeeded_1h'], d['all']['failed_1h']))")" \
	"the overview from kyu_jobs"
sql "RENAME TABLE kyu_minutes_away TO kyu_minutes"
stop_web

