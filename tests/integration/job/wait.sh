#!/usr/bin/env bash
# CALL kyu_wait(id, timeout) (schema version 8, kyu_jobs(7) "Waiting for a
# job"): returns the row of a job once it has ended (one that runs about a
# second: succeeded, with its exit code and result), or as it stands when
# the timeout has passed (a job of a paused queue, a job due tomorrow:
# still waiting, after the timeout and not long before); refused in an
# open transaction (31011, KYU11), whose snapshot would never show the end,
# and for an id no job has (31012, KYU12). With autocommit off and no
# transaction open it works, and leaves none open.
. "$KYU_SRC/tests/lib.sh"

start_kyud
sql "INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"

# A job that runs about a second and says its result: the CALL, made with
# the INSERT, returns once it has ended.
assert_eq "w1	succeeded	0	NULL	NULL	{\"n\": 1}	1" \
	"$(sql "INSERT INTO kyu_jobs (id, command) VALUES ('w1', 'sleep 1; echo ''result {\"n\": 1}'' >&3');
		CALL kyu_wait('w1', 60)" | cut -f 1-7)" "kyu_wait's row of a job that ran a second"
sql "SELECT CONCAT_WS(' ', status, finished_at IS NOT NULL) FROM kyu_jobs WHERE id = 'w1'" >"$T_DIR/w1"
assert_eq "succeeded 1" "$(cat "$T_DIR/w1")" "the job after the wait"

# Jobs that cannot end meanwhile: the row as it stands, after the timeout.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('h1', 'held', 'true');
     INSERT INTO kyu_jobs (id, command, run_at) VALUES ('f1', 'true', NOW(6) + INTERVAL 1 DAY)"
for id in h1 f1; do
	t0=$(date +%s%N)
	row=$(sql "CALL kyu_wait('$id', 1.5)" | cut -f 1-2)
	ms=$((($(date +%s%N) - t0) / 1000000))
	assert_eq "$id	waiting" "$row" "kyu_wait's row of $id after its timeout"
	[ "$ms" -ge 1400 ] || fail "kyu_wait('$id', 1.5) returned after $ms ms, before its timeout"
done
assert_eq "f1	waiting" "$(sql "CALL kyu_wait('f1', 0)" | cut -f 1-2)" "a timeout of 0: one read"

# In an open transaction: refused, naming the way out.
out=$(sql "BEGIN; SELECT COUNT(*) INTO @n FROM kyu_jobs; CALL kyu_wait('w1', 5)" 2>&1) &&
	fail "kyu_wait ran in an open transaction: $out"
[[ $out == *"ERROR 31011 (KYU11)"*"kyu: kyu_wait called in an open transaction"*"autocommit"* ]] ||
	fail "the refusal in a transaction: $out"
# autocommit off and an INSERT not committed: the PEP 249 default.
out=$(sql "SET autocommit = 0; INSERT INTO kyu_jobs (id, command) VALUES ('nc', 'true'); CALL kyu_wait('nc', 5)" 2>&1) &&
	fail "kyu_wait ran after an INSERT not committed: $out"
[[ $out == *"ERROR 31011 (KYU11)"* ]] || fail "the refusal after an INSERT not committed: $out"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'nc'")" "the job not committed"
# autocommit off, nothing open: it waits, and leaves no transaction open.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('w2', 'sleep 0.5')"
assert_eq "w2	succeeded
0" "$(sql "SET autocommit = 0; CALL kyu_wait('w2', 60); SELECT @@in_transaction" | cut -f 1-2)" \
	"kyu_wait with autocommit off, then @@in_transaction"

# An id no job has.
out=$(sql "CALL kyu_wait('no-such-job', 5)" 2>&1) && fail "kyu_wait of an unknown id: $out"
[[ $out == *"ERROR 31012 (KYU12)"*"kyu: kyu_wait: no job has id no-such-job"* ]] || fail "the unknown id: $out"

stop_kyud
assert_log_lacks 'failed:'
