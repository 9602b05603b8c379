#!/usr/bin/env bash
# A chain moves on by itself (no sql/notify.sql, poll_interval 3600; the
# two INSERTs announced with kyu wake, as a submitter does): the worker
# that ends a step settles and claims the next, also when the step got its
# dependent after its own claim (the first one: its claim said it had
# none; its results then ask whether items wait). 30 steps, each started
# after its upstream finished, each once.
. "$KYU_SRC/tests/lib.sh"

port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.poll_interval=3600 kyud.listen=127.0.0.1:$port
n=30
# The first step runs until the test lets it end: the rest of the chain is
# inserted while it runs, so its claim did not know it would have a
# dependent (a fixed sleep was missed on a loaded machine).
gate=$T_DIR/s1.go
sql "INSERT INTO kyu_jobs (id, command) VALUES ('s1', 'while [ ! -e $gate ]; do sleep 0.1; done')"
"$KYU" -c "$KYUD_INI" wake || fail "kyu wake"
wait_for "SELECT status FROM kyu_jobs WHERE id = 's1'" running 60
{
	for i in $(seq 2 $n); do
		echo "INSERT INTO kyu_jobs (id, command, after) VALUES ('s$i', 'true', '[\"s$((i - 1))\"]');"
	done
} | root_sql -D "$T_DB" || fail "inserting the chain"
# The chain's INSERT is announced as a submitter would (kyu wake): the
# claims it causes find the items and count the new steps. Nothing after
# it is woken.
"$KYU" -c "$KYUD_INI" wake || fail "kyu wake"
wait_for "SELECT after_left FROM kyu_jobs WHERE id = 's2'" 1 60
: >"$gate"
# A bound for a loaded machine: a poll could not move a step before 3,240 s.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" $n 120
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
                    JOIN kyu_jobs AS u ON u.seq = e.up_seq WHERE d.started_at < u.finished_at")" \
	"steps that started before their upstream finished"
assert_eq "$n" "$(sql "SELECT SUM(attempts) FROM kyu_jobs")" "attempts (one per step)"
echo "mean step-to-step: $(sql "SELECT ROUND(AVG(TIMESTAMPDIFF(MICROSECOND, u.finished_at, d.started_at)) / 1000, 2)
	FROM kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq JOIN kyu_jobs AS u ON u.seq = e.up_seq") ms"
stop_kyud
