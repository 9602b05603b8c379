#!/usr/bin/env bash
# End to end with the kyu_notify UDF and the triggers of sql/notify.sql: an
# idle kyud with poll_interval = 60 starts a job at once after its INSERT
# (well before any poll), and a manual retry (an UPDATE that makes a job
# due) too. The UDF
# must be in the server's plugin directory, so this test runs its own
# mariadbd (private_db_start) rather than touching the shared one.
# Skipped (77) when the plugin is not built.
. "$KYU_SRC/tests/lib.sh"

udf_require

# A woken job starts within WAKE_MAX_MS. A poll could not start it that
# soon (poll_interval 60: none comes within 54 s of the last claim), so a
# start within the bound is the wake-up's doing. It is no latency target:
# a 2-core machine at load average 40 took 1.1 s at most.
WAKE_MAX_MS=10000

# The server loads the UDF from its plugin directory, which holds a copy
# as an installation would.
# kyu_notify sends only to 127.0.0.1:7711 and to what kyu_notify.allow
# lists: this test's kyud listens elsewhere.
port=$(free_udp_port)
udf_db_start "127.0.0.1:$port" "127.0.0.1:$port"
assert_eq 2 "$(sql "SELECT COUNT(*) FROM information_schema.TRIGGERS
	WHERE EVENT_OBJECT_SCHEMA = DATABASE() AND TRIGGER_NAME LIKE 'kyu\\_jobs\\_notify%'")" "triggers installed"

start_kyud kyud.workers=2 kyud.poll_interval=60 kyud.listen="127.0.0.1:$port"
wait_workers_idle 2 # the start-up claims are done: kyud sleeps for ~60 s

# A plain INSERT wakes it.
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('u1', 'exit 3', 1)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'u1' AND attempts = 1" failed 30
ms=$(ms_between created_at started_at u1)
echo "INSERT with the trigger: job started $ms ms after its INSERT"
[ "$ms" -ge 0 ] && [ "$ms" -lt "$WAKE_MAX_MS" ] ||
	fail "INSERT with the trigger: job started $ms ms after its INSERT (expected 0 to $WAKE_MAX_MS)"

# A manual retry (the UPDATE trigger) wakes it too.
sleep 0.5
t0=$(sql "SELECT NOW(6)")
sql "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, command = 'true'
     WHERE id = 'u1' AND status = 'failed'"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'u1'" succeeded 30
ms=$(ms_between "'$t0'" started_at u1)
echo "manual retry with the trigger: job started $ms ms after the UPDATE"
[ "$ms" -ge 0 ] && [ "$ms" -lt "$WAKE_MAX_MS" ] ||
	fail "manual retry: job started $ms ms after the UPDATE (expected 0 to $WAKE_MAX_MS)"

# A multi-row INSERT: one datagram per row, coalesced; all start at once.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('m', seq), 'true' FROM seq_1_to_20"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'm%' AND status = 'succeeded'" 20 30
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, MIN(created_at), MAX(started_at)) / 1000)
          FROM kyu_jobs WHERE id LIKE 'm%'")
echo "20-row INSERT with the trigger: all started within $ms ms"
[ "$ms" -lt "$WAKE_MAX_MS" ] ||
	fail "20-row INSERT with the trigger: the last job started $ms ms after the INSERT (at most $WAKE_MAX_MS)"

# Resuming a queue in plain SQL (the kyu_queues trigger) wakes it too.
sql "INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('h1', 'held', 'true')"
sleep 1
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'h1'")" "a job of a paused queue"
resumed=$(sql "UPDATE kyu_queues SET paused = 0 WHERE name = 'held'; SELECT NOW(6)")
wait_for "SELECT status FROM kyu_jobs WHERE id = 'h1'" succeeded 30
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$resumed', started_at) / 1000) FROM kyu_jobs WHERE id = 'h1'")
echo "UPDATE kyu_queues SET paused = 0 with the trigger: job started $ms ms after it"
[ "$ms" -lt "$WAKE_MAX_MS" ] ||
	fail "resume in SQL with the trigger: job started $ms ms after it (at most $WAKE_MAX_MS)"

# Schedules (the kyu_schedules triggers): kyud read kyu_schedules at its
# start and next reads it 60 s later. A schedule INSERTed in plain SQL, and
# one whose expression is changed, fire within the bound all the same.
t0=$(sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('s1', '* * * * * *', 'true'); SELECT NOW(6)")
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:s1:%' AND status = 'succeeded'" 1 30
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$t0', MIN(created_at)) / 1000) FROM kyu_jobs WHERE id LIKE 'cron:s1:%'")
echo "INSERT INTO kyu_schedules with the trigger: its first job enqueued $ms ms after it"
[ "$ms" -lt "$WAKE_MAX_MS" ] || fail "a new schedule fired $ms ms after its INSERT (at most $WAKE_MAX_MS)"
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('s2', '0 0 1 1 *', 'true')"
sleep 1
t0=$(sql "UPDATE kyu_schedules SET cron = '* * * * * *' WHERE name = 's2'; SELECT NOW(6)")
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:s2:%'" 1 30
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$t0', MIN(created_at)) / 1000) FROM kyu_jobs WHERE id LIKE 'cron:s2:%'")
echo "UPDATE kyu_schedules SET cron with the trigger: its first job enqueued $ms ms after it"
[ "$ms" -lt "$WAKE_MAX_MS" ] || fail "a changed schedule fired $ms ms after the UPDATE (at most $WAKE_MAX_MS)"
sql "UPDATE kyu_schedules SET enabled = 0"
stop_kyud
