#!/usr/bin/env bash
# A retry starts at the end of its backoff, not at the next poll
# (poll_interval 3600, nothing woken): the worker that recorded it claims
# once more, that claim reads the retry's run_at as the next due time, and
# the supervisor wakes the workers then. Attempts 1 to 3 exit 75 (backoff
# base 2 s, cap 3 s), attempt 4 succeeds; each retry started within 2 s
# of its run_at (database clock; it takes milliseconds; a poll could not
# start it before 3,240 s, and nothing else is due to claim meanwhile).
. "$KYU_SRC/tests/lib.sh"

port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.poll_interval=3600 kyud.listen=127.0.0.1:$port \
	job.backoff_base=2 job.backoff_cap=3
sql "INSERT INTO kyu_jobs (id, command) VALUES ('again', '
  echo \$KYU_ATTEMPT >> $T_DIR/starts
  [ \$KYU_ATTEMPT -ge 4 ] && exit 0
  exit 75')"
"$KYU" -c "$KYUD_INI" wake || fail "kyu wake"
# run_at of each retry, read while it waits: attempt N's retry is due then.
due=()
for a in 1 2 3; do
	wait_for "SELECT attempts = $a AND status = 'waiting' FROM kyu_jobs WHERE id = 'again'" 1 60
	due+=("$(sql "SELECT run_at FROM kyu_jobs WHERE id = 'again'")")
	wait_for "SELECT attempts > $a FROM kyu_jobs WHERE id = 'again'" 1 60
	late=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, '${due[-1]}', started_at) FROM kyu_jobs WHERE id = 'again'")
	echo "retry $a: started $((late / 1000)) ms after its run_at"
	[ "$late" -ge 0 ] || fail "retry $a started $late us before its run_at"
	[ "$late" -le 2000000 ] || fail "retry $a started $late us after its run_at: it waited for something else"
done
wait_for "SELECT status FROM kyu_jobs WHERE id = 'again'" succeeded 60
assert_eq $'1\n2\n3\n4' "$(cat "$T_DIR/starts")" "attempts started"
stop_kyud
