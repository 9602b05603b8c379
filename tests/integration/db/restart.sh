#!/usr/bin/env bash
# The database restarts while a job runs: kyud logs the lost connection once
# (not at every reconnect attempt), reconnects by itself when the server is
# back, records the job's result (it ran once, under its lease), stays up,
# and runs jobs submitted afterwards.
. "$KYU_SRC/tests/lib.sh"

private_db_start
# lease 40 s, fence_margin 5 s: the job may go 35 s without a heartbeat
# before the worker would kill it; the outage (stop, 3 s, start: several
# seconds each on a loaded machine) is well shorter than that.
start_kyud kyud.workers=2 kyud.lease=40 kyud.fence_margin=5
# The job runs until the test opens its gate, once the server is back: it
# runs across the whole outage however long that takes.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('slow', 'echo \$KYU_ATTEMPT >> $T_DIR/starts
     for i in \$(seq 900); do [ -e $T_DIR/gate ] && break; sleep 0.1; done; echo done')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'slow'" running 30

private_db_stop
# Down for ~3 s: the workers notice (their next poll fails) and retry.
sleep 3
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died while the database was down"
private_db_start
touch "$T_DIR/gate"

wait_for "SELECT status FROM kyu_jobs WHERE id = 'slow'" succeeded 60
assert_eq "1	0	1	NULL" \
	"$(sql "SELECT attempts, exit_code, output = 'done\n', IFNULL(lease_until, 'NULL') FROM kyu_jobs WHERE id = 'slow'")" \
	"slow: attempts, exit_code, output, lease_until"
assert_eq 1 "$(cat "$T_DIR/starts")" "starts of the slow job"

sql "INSERT INTO kyu_jobs (id, command) VALUES ('after', 'echo after')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'after'" succeeded 30
kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died"

# One line per change of state and worker: lost once, restored once, and no
# line per failed reconnect attempt.
assert_log_contains 'kyud\[worker [0-9]+\]: database connection lost: '
assert_log_contains 'kyud\[worker [0-9]+\]: database connection restored'
for w in 1 2; do
	for what in 'database connection lost' 'database connection restored' 'cannot connect to the database'; do
		n=$(grep -c "kyud\[worker $w\]: $what" "$KYUD_LOG" || true)
		[ "$n" -le 1 ] || fail "worker $w logged '$what' $n times: $(grep "kyud\[worker $w\]: $what" "$KYUD_LOG" | sed -n 1,5p)"
	done
	# Whoever lost the connection has it back: an idle worker retries on
	# its backoff (at most 10 s apart), so it may come back after 'after'.
	lost=$(grep -c "kyud\[worker $w\]: database connection lost" "$KYUD_LOG" || true)
	for _ in $(seq 300); do
		[ "$lost" -le "$(grep -c "kyud\[worker $w\]: database connection restored" "$KYUD_LOG" || true)" ] && break
		sleep 0.1
	done
	[ "$lost" -le "$(grep -c "kyud\[worker $w\]: database connection restored" "$KYUD_LOG" || true)" ] ||
		fail "worker $w lost the database and did not log it restored within 30 s"
done
stop_kyud
