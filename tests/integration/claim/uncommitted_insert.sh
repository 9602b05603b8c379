#!/usr/bin/env bash
# A submitter that keeps its INSERT of a due job uncommitted (a transaction
# doing more work after it) holds that row's lock for as long as it likes.
# Claims must go round it: jobs submitted after it run meanwhile, in a
# plain queue and in one with max_running (the claim inside a transaction),
# the leases of a job that runs meanwhile are renewed (lease 10 s: a claim
# that waited for the transaction would leave it unrenewed past the fence;
# a shorter lease could be missed by a merely loaded machine), and the held
# jobs run once, after their transaction commits. The transaction lasts
# until the test has seen all that, however long a loaded machine takes.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_queues (name, max_running) VALUES ('lim', 3)"
start_kyud kyud.workers=1 kyud.slots=4 kyud.lease=10
# Runs across the whole lock, until the test opens its gate.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('long',
     'for i in \$(seq 3000); do [ -e $T_DIR/gate ] && exit 0; sleep 0.1; done; exit 1')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" running 30

# The open transaction: two due rows, locked until the test ends the
# SLEEP (KILL QUERY: SLEEP returns 1, no error) and so lets it COMMIT.
root_sql -D "$T_DB" -e "BEGIN;
	INSERT INTO kyu_jobs (id, queue, command) VALUES ('held', 'default', 'true'), ('held-lim', 'lim', 'true');
	DO SLEEP(600); COMMIT" &
holder=$!
EXTRA_PIDS="$EXTRA_PIDS $holder" # killed, with its client, if the test fails
wait_for "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED;
	SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'held%'" 2 30

# Due after the held rows, so a claim scanning by due time meets those first.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES
	('after-1', 'default', 'true'), ('after-2', 'default', 'true'), ('after-3', 'default', 'true'),
	('lim-1', 'lim', 'true'), ('lim-2', 'lim', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE (id LIKE 'after-%' OR id LIKE 'lim-%')
	AND status = 'succeeded'" 5 60
# The uncommitted rows were still uncommitted then: the jobs ran round them,
# not after the COMMIT.
kill -0 "$holder" 2>/dev/null || fail "the transaction held open ended before the later jobs ran"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'held%'")" \
	"held rows visible while their transaction is open"
assert_log_contains 'claims skip locked rows for the next 30 s'

holder_id=$(root_sql -N -B -e "SELECT ID FROM information_schema.PROCESSLIST
                               WHERE DB = '$T_DB' AND INFO = 'DO SLEEP(600)'")
[ -n "$holder_id" ] || fail "the session of the transaction held open is not in the process list"
root_sql -e "KILL QUERY $holder_id"
wait "$holder" || fail "the transaction held open failed"
EXTRA_PIDS=${EXTRA_PIDS% *}
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'held%' AND status = 'succeeded'" 2 30
touch "$T_DIR/gate"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" succeeded 30
assert_eq "long	1
held	1
held-lim	1" "$(sql "SELECT id, attempts FROM kyu_jobs WHERE id = 'long' OR id LIKE 'held%' ORDER BY seq")" \
	"attempts of the job that ran across the lock and of the held jobs"
assert_log_lacks 'lease not renewed'
assert_log_lacks 'connection abandoned'
stop_kyud
