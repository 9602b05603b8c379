#!/usr/bin/env bash
# SIGHUP sent to kyud's whole process group (a terminal hang-up, or an
# operator's kill -HUP -PGID) is one reload: the workers get the signal too
# and ignore it, so none dies, a running job is untouched, the supervisor
# reloads once and its workers apply the new file.
. "$KYU_SRC/tests/lib.sh"

# Job control on while starting: kyud becomes the leader of a process group
# of its own, so that the group's signal reaches kyud and its workers but
# not this script.
set -m
start_kyud kyud.workers=2 job.backoff_base=60 job.backoff_cap=60
set +m
pgid=$(ps -o pgid= -p "$KYUD_PID" | tr -d ' ')
assert_eq "$KYUD_PID" "$pgid" "process group of kyud"
workers=$(worker_pids)
assert_eq 2 "$(wc -w <<<"$workers")" "worker processes before the HUP ($workers)"
for w in $workers; do
	assert_eq "$pgid" "$(ps -o pgid= -p "$w" | tr -d ' ')" "process group of worker $w"
done

# A job running across the HUP (jobs run in sessions of their own): it runs
# until the test opens its gate, however long the steps below take.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('across',
     'for i in \$(seq 600); do [ -e $T_DIR/gate ] && exit 0; sleep 0.1; done; exit 1')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'across' AND pid IS NOT NULL" running 30

# The new file makes exit code 7 permanent: a change only workers apply.
write_ini "$KYUD_INI" kyud.workers=2 job.backoff_base=60 job.backoff_cap=60 job.permanent_exit_codes=7
from=$(($(wc -l <"$KYUD_LOG") + 1))
kill -HUP -- "-$pgid"
deadline=$(($(date +%s) + 30))
until tail -n +"$from" "$KYUD_LOG" | grep 'kyud\[sup\]: reloaded' >/dev/null; do
	kill -0 "$KYUD_PID" 2>/dev/null || fail "kyud died of the group's SIGHUP"
	[ "$(date +%s)" -lt "$deadline" ] || fail "no 'reloaded' line 30 s after the group's SIGHUP"
	sleep 0.1
done
sleep 1 # time for a worker killed by the signal to be reaped and reported
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(tail -n +"$from" "$KYUD_LOG" | grep -E 'kyud\[sup\]: (reloaded|reload failed)')" \
	"the supervisor's reload verdicts after one group SIGHUP"
assert_no_worker_death
assert_eq "$workers" "$(worker_pids)" "worker processes after the group SIGHUP"

assert_eq running "$(sql "SELECT status FROM kyu_jobs WHERE id = 'across'")" "the job after the group's SIGHUP"
touch "$T_DIR/gate"
wait_for "SELECT CONCAT_WS(' / ', status, attempts) FROM kyu_jobs WHERE id = 'across'" "succeeded / 1" 30
sql "INSERT INTO kyu_jobs (id, command) VALUES ('seven', 'exit 7')"
wait_for "SELECT finished_at IS NOT NULL FROM kyu_jobs WHERE id = 'seven'" 1 30
assert_eq "failed / 1 / exit code 7 (permanent: not retried)" \
	"$(sql "SELECT CONCAT_WS(' / ', status, attempts, error) FROM kyu_jobs WHERE id = 'seven'")" \
	"exit 7 after the reload"
stop_kyud
