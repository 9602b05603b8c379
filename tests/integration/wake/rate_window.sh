#!/usr/bin/env bash
# A rate-limited queue starts its next job when its window opens
# (issue 29), not one emission interval after the claim that came back
# short: rate_limit 1 per 4 s, poll_interval 3600. Job a starts; b is
# submitted a second later, its claim finds the window full, and it must
# start when a's start leaves the window (4 s after it), not at the claim
# + 4 s (5 s after a), which is where the bounded poll of before put it.
# Starts are compared on the database's clock (kyu_queue_starts).
. "$KYU_SRC/tests/lib.sh"

port=$(free_udp_port)
sql "INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('r', 1, 4)"
start_kyud kyud.workers=1 kyud.poll_interval=3600 kyud.listen=127.0.0.1:$port
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a', 'r', 'true')"
"$KYU" -c "$KYUD_INI" wake r || fail "kyu wake"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'a'" succeeded 60
sleep 1
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('b', 'r', 'true')"
"$KYU" -c "$KYUD_INI" wake r || fail "kyu wake"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'b'" succeeded 60
assert_eq 2 "$(sql "SELECT SUM(n) FROM kyu_queue_starts WHERE queue = 'r'")" "starts counted"
gap=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(at), MAX(at)) FROM kyu_queue_starts WHERE queue = 'r'")
echo "b started $((gap / 1000)) ms after a (window 4,000 ms)"
[ "$gap" -ge 4000000 ] || fail "b started $gap us after a: inside a's window"
[ "$gap" -le 4700000 ] || fail "b started $gap us after a: later than the window's opening"
stop_kyud
