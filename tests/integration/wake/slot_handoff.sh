#!/usr/bin/env bash
# A limited slot freed on one daemon is handed to another at once
# (issue 29). poll_interval 3600 and lease 60: neither a poll nor a lease
# could start the next job within the bounds below.
#
# Daemon A (queues one, keyed, ka) runs the first job of a queue with
# max_running = 1 (m1), the first of a concurrency key (k1) and x1, of
# queue ka with key X; daemon B (those queues and kb) starts after, so its
# claims find the next ones (m2, k2, and x2 of queue kb with key X)
# blocked. First x1 ends: A's next claim takes nothing of ka, so A tells
# the daemons of ka, and B must start x2. Then A is stopped (TERM: it
# drains and takes no new job), and m1 and k1 end: B must start m2 and k2.
# Each within seconds of the end, told by A's datagrams (worker/peers.c);
# without them B would look again a lease (60 s) later. Meanwhile B waits quietly:
# a handful of statements in 3 s, not a claim after claim (before, its two
# blocked queues took turns, each claim's directory read releasing the
# other).
. "$KYU_SRC/tests/lib.sh"

use_own_db_user
pa=$(free_udp_port)
pb=$(free_udp_port)
[ "$pa" != "$pb" ] || pb=$(free_udp_port)
exec {gate}>"$T_DIR/gate"
flock -x "$gate"
exec {gate1}>"$T_DIR/gate1"
flock -x "$gate1"
sql "INSERT INTO kyu_queues (name, max_running) VALUES ('one', 1);
     INSERT INTO kyu_jobs (id, queue, command, priority) VALUES
       ('m1', 'one', 'flock -s $T_DIR/gate true', 0), ('m2', 'one', 'true', 1);
     INSERT INTO kyu_jobs (id, queue, concurrency_key, command, priority) VALUES
       ('k1', 'keyed', 'K', 'flock -s $T_DIR/gate true', 0), ('k2', 'keyed', 'K', 'true', 1),
       ('x1', 'ka', 'X', 'flock -s $T_DIR/gate1 true', 0), ('x2', 'kb', 'X', 'true', 1)"
start_kyud kyud.workers=1 kyud.poll_interval=3600 kyud.lease=60 kyud.listen=127.0.0.1:$pa \
	kyud.queues=one,keyed,ka
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('m1', 'k1', 'x1') AND pid IS NOT NULL" 3 60
# shellcheck disable=SC2086
start_extra_kyud b $T_USER_KV kyud.workers=1 kyud.poll_interval=3600 kyud.lease=60 \
	kyud.listen=127.0.0.1:$pb kyud.queues=one,keyed,ka,kb
wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr IS NOT NULL" 2 60
# B's first claims (at its connect) find m2 and k2 blocked.
sleep 2
count_statements 3
echo "B, blocked: $IDLE_N statement(s) in $IDLE_MS ms"
[ "$IDLE_N" -le 12 ] || fail "B sent $IDLE_N statements in $IDLE_MS ms while its queues were blocked"
assert_eq "waiting waiting waiting" "$(sql "SELECT GROUP_CONCAT(status ORDER BY id SEPARATOR ' ') FROM kyu_jobs WHERE id IN ('m2', 'k2', 'x2')")" \
	"m2, k2 and x2 before the handoffs"

flock -u "$gate1"
exec {gate1}>&-
wait_for "SELECT status FROM kyu_jobs WHERE id = 'x2'" succeeded 40

signal_kyud TERM
sleep 1
flock -u "$gate"
exec {gate}>&-
wait_kyud_exit 60
assert_eq 0 "$KYUD_STATUS" "A's exit status after TERM"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('m2', 'k2') AND status = 'succeeded'" 2 40
for p in x1:x2 m1:m2 k1:k2; do
	gap=$(sql "SELECT TIMESTAMPDIFF(MICROSECOND, a.finished_at, b.started_at) FROM kyu_jobs a, kyu_jobs b
	           WHERE a.id = '${p%:*}' AND b.id = '${p#*:}'")
	echo "${p#*:} started $((gap / 1000)) ms after ${p%:*} ended"
	[ "$gap" -le 10000000 ] || fail "${p#*:} started $gap us after ${p%:*} ended: it waited for a poll or a lease"
	grep -q "job ${p#*:} attempt 1 started" "$T_DIR/b.log" || fail "${p#*:} did not start on daemon B"
done
stop_extra_kyuds
