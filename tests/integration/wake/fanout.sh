#!/usr/bin/env bash
# Wake-ups that reach every daemon (kyu_daemons and the triggers of
# sql/notify.sql): three kyud on 127.0.0.2, .3 and .4, each serving a queue
# of its own, with poll_interval 300 so that no poll can explain a start.
# An INSERT into each queue starts on its own daemon within the bound;
# `kyu daemons` lists three live rows; a 1,000-row INSERT sends a bounded
# number of datagrams (coalescing); an INSERT whose transaction commits a
# second later still starts long before any poll (the worker looks again);
# `kyu submit` and `kyu wake` reach the daemon of the queue; a daemon
# that stops removes its row. The UDF must be in the server's plugin
# directory: this test runs its own mariadbd. Skipped (77) when the plugin
# or the CLI is not built, or 127.0.0.2-5 cannot be bound.
. "$KYU_SRC/tests/lib.sh"

udf_require
if [ -z "${KYU:-}" ] || [ ! -x "$KYU" ]; then
	echo "SKIP: the kyu CLI is not built"
	exit 77
fi
recv=${KYU_UDP_RECV:-$(dirname "$KYU_UDF")/kyu_udp_recv}
[ -x "$recv" ] || { echo "SKIP: kyu_udp_recv not built"; exit 77; }

# udp_port ADDR: a UDP port free on ADDR right now (the kernel's choice).
udp_port() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
print(s.getsockname()[1])' "$1"
}
for n in 2 3 4 5; do
	udp_port "127.0.0.$n" >/dev/null 2>&1 || { echo "SKIP: cannot bind 127.0.0.$n"; exit 77; }
done

# A woken job starts within WAKE_MAX_MS; a poll could not start it before
# 270 s (poll_interval 300, jitter 10 %). No latency target: the bound is
# for a loaded 2-core machine.
WAKE_MAX_MS=10000

# Without the fallback address: whatever wakes a daemon here, the
# registry told the trigger where it listens.
udf_db_start ''

declare -A port log
for n in 2 3 4; do port[$n]=$(udp_port "127.0.0.$n"); done
# kyu_notify sends only to 127.0.0.1:7711 and the targets listed here.
for n in 2 3 4; do echo "127.0.0.$n:${port[$n]}"; done >"$T_DIR/plugin/kyu_notify.allow"
common=(kyud.workers=2 kyud.poll_interval=300)
start_kyud "${common[@]}" kyud.listen="127.0.0.2:${port[2]}" kyud.queues=q2
log[2]=$KYUD_LOG
start_extra_kyud d3 "${common[@]}" kyud.listen="127.0.0.3:${port[3]}" kyud.queues=q3
log[3]=$T_DIR/d3.log
start_extra_kyud d4 "${common[@]}" kyud.listen="127.0.0.4:${port[4]}" kyud.queues="q4, q4b"
log[4]=$T_DIR/d4.log
d4_pid=${EXTRA_PIDS##* }

wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE live_until > NOW(6)" 3 30
"$KYU" -c "$KYUD_INI" daemons >"$T_DIR/daemons" || fail "kyu daemons failed"
cat "$T_DIR/daemons"
assert_eq "host	pid	wake_addr	queues	version	slots	running	free	draining	started	last_seen	seen	live	id" \
	"$(sed -n 1p "$T_DIR/daemons")" "kyu daemons: header"
assert_eq "127.0.0.2:${port[2]} q2 yes,127.0.0.3:${port[3]} q3 yes,127.0.0.4:${port[4]} q4,q4b yes" \
	"$(sed -n '2,$p' "$T_DIR/daemons" | awk -F'\t' '{print $3, $4, $13}' | sort | paste -sd, -)" \
	"kyu daemons: addresses, queues, live"
assert_eq "$KYUD_PID" "$(sql "SELECT pid FROM kyu_daemons WHERE wake_addr LIKE '127.0.0.2:%'")" \
	"the registered pid is the supervisor's"
wait_workers_idle 6 # the start-up claims are over: from now on only wake-ups start jobs

# started_on ID N WHAT: job ID succeeds, started within WAKE_MAX_MS of its
# INSERT, on daemon N and on no other.
started_on() {
	local ms k
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" succeeded 30
	ms=$(ms_between created_at started_at "$1")
	echo "$3: job $1 started $ms ms after its INSERT"
	[ "$ms" -ge 0 ] && [ "$ms" -lt "$WAKE_MAX_MS" ] ||
		fail "$3: job $1 started $ms ms after its INSERT (expected 0 to $WAKE_MAX_MS)"
	for k in 2 3 4; do
		if grep "job $1 attempt 1 started" "${log[$k]}" >/dev/null; then
			[ "$k" = "$2" ] || fail "$3: job $1 ran on the daemon of 127.0.0.$k, not 127.0.0.$2"
		elif [ "$k" = "$2" ]; then
			fail "$3: job $1 is not in the log of the daemon of 127.0.0.$2"
		fi
	done
}

# ---- an INSERT into each queue wakes its own daemon.
for n in 4 2 3; do
	sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('j$n', 'q$n', 'true')"
	started_on "j$n" "$n" "INSERT into q$n"
done
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('j4b', 'q4b', 'true')"
started_on j4b 4 "INSERT into q4b (second queue of a list)"

# ---- coalescing: a receiver registered as a fourth daemon of q3 counts
# what one 1,000-row INSERT sends it.
rport=$(udp_port 127.0.0.5)
echo "127.0.0.5:$rport" >>"$T_DIR/plugin/kyu_notify.allow"
sleep 1.1 # kyu_notify reads the list again within a second of a change
"$recv" -b 127.0.0.5 -p "$rport" -t 120 >"$T_DIR/recv.out" 2>"$T_DIR/recv.err" &
recv_pid=$!
EXIT_HOOKS+=("kill $recv_pid 2>/dev/null")
wait_until 30 "kyu_udp_recv to start" test -s "$T_DIR/recv.out"
sql "INSERT INTO kyu_daemons (id, host, pid, wake_addr, queues, version, started, last_seen, live_until)
     VALUES ('counter', 'test', 1, '127.0.0.5:$rport', 'q3', 'test', NOW(6), NOW(6), NOW(6) + INTERVAL 1 HOUR)"
# q3 is paused meanwhile (its triggers send all the same): the daemon of q3
# takes none of the 1,000 jobs until the count is over, so none is given
# back (a loaded machine's worker gives back what it cannot start within a
# second, and each give-back is a due job again: a datagram of its own).
sql "INSERT INTO kyu_queues (name, paused) VALUES ('q3', 1)"
t0=$(date +%s.%N)
sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('c', seq), 'q3', 'true' FROM seq_1_to_1000"
took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
# Loopback keeps the order of one sender's datagrams to one socket, but
# the trigger's and ours come from two senders: wait for ours, then a
# little, then count.
printf 'kyu:@mark' >"/dev/udp/127.0.0.5/$rport"
wait_until 30 "the marker datagram" grep -q -x 'kyu:@mark' "$T_DIR/recv.out"
sleep 0.5
got=$(grep -c -x 'kyu:q3' "$T_DIR/recv.out" || true)
echo "a 1,000-row INSERT into q3 sent $got datagram(s) to one daemon of q3"
# One per (daemon, queue) and statement, plus one more each half second a
# statement runs (kyu_notify's time bound): a few on a quiet machine, more
# where a loaded one took seconds for the INSERT; the bound follows the
# INSERT's own time (as the client saw it, so a little more than the
# server's), and stays far below one per row.
max=$(awk -v t="$took" 'BEGIN { printf "%d", 4 + 2 * t }')
echo "(the INSERT took $took s: at most $max datagrams)"
[ "$got" -ge 1 ] && [ "$got" -le "$max" ] && [ "$got" -le 200 ] ||
	fail "a 1,000-row INSERT of $took s sent $got datagrams to one daemon (expected 1 to $max, and far fewer than 1,000)"
assert_eq 0 "$(grep -c -v -x -e 'kyu:q3' -e 'kyu:@mark' -e 'port [0-9]*' "$T_DIR/recv.out" || true)" \
	"datagrams for other queues than q3 at a daemon of q3"
sql "DELETE FROM kyu_daemons WHERE id = 'counter'; UPDATE kyu_queues SET paused = 0 WHERE name = 'q3'"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'c%' AND status = 'succeeded'" 1000 60
assert_eq 0 "$(grep -c 'job c[0-9]* attempt 1 started' "${log[2]}" "${log[4]}" | awk -F: '{s += $2} END {print s}')" \
	"jobs of q3 run elsewhere"

# ---- the datagram leaves at the INSERT, the commit comes a second later:
# the woken claim finds nothing, the worker looks again.
wait_workers_idle 6
root_sql -D "$T_DB" -e "BEGIN; INSERT INTO kyu_jobs (id, queue, command) VALUES ('late', 'q2', 'true');
	DO SLEEP(1); COMMIT"
started_on late 2 "INSERT committed 1 s later"
assert_log_contains "job late attempt 1 started"

# The same for a schedule: kyud reads kyu_schedules at its start and then
# only every poll_interval (at least 60 s) or when woken; the wake-up of this INSERT arrives before
# the commit, and the scheduler reads the table once more a second later.
t0=$(sql "SELECT NOW(6)")
root_sql -D "$T_DB" -e "BEGIN; INSERT INTO kyu_schedules (name, cron, command, queue)
	VALUES ('sc', '* * * * * *', 'true', 'q2'); DO SLEEP(0.5); COMMIT"
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:sc:%'" 1 30
ms=$(sql "SELECT ROUND(TIMESTAMPDIFF(MICROSECOND, '$t0', MIN(created_at)) / 1000) FROM kyu_jobs WHERE id LIKE 'cron:sc:%'")
echo "schedule INSERTed in a transaction committed 0.5 s later: first job enqueued $ms ms after the INSERT"
[ "$ms" -lt "$WAKE_MAX_MS" ] || fail "a schedule committed 0.5 s after its INSERT fired $ms ms after it (at most $WAKE_MAX_MS)"
sql "DELETE FROM kyu_schedules"
# Whichever daemon fired the schedule last claims its own queues after
# it: let that settle before a job must wait for a wake-up.
wait_workers_idle 6

# ---- the triggers' read of kyu_daemons keeps shared locks on its rows
# until the submitter commits. A transaction held open across a registry
# refresh (every 2 x lease, at least 20 s) makes the refresh skip, never wait: the leases of a
# job that runs meanwhile are renewed (it runs once, unfenced), and the
# row is written again once the transaction is gone.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('long', 'q3', 'sleep 12')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" running 30
# The open transaction takes the shared locks the triggers' read takes, by
# reading kyu_daemons itself (claim/uncommitted_insert tests what an uncommitted due
# job does to claims).
root_sql -D "$T_DB" -e "BEGIN; SELECT COUNT(*) FROM kyu_daemons LOCK IN SHARE MODE;
	DO SLEEP(25); COMMIT" >/dev/null || fail "the transaction held open failed"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('held', 'q2', 'true')"
committed=$(sql "SELECT NOW(6)")
locked=0
for n in 2 3 4; do
	if grep 'kyu_daemons: row locked' "${log[$n]}" >/dev/null; then
		locked=$((locked + 1))
		wait_for "SELECT last_seen > '$committed' FROM kyu_daemons WHERE wake_addr LIKE '127.0.0.$n:%'" 1 30
	fi
done
echo "daemons whose registry refresh met the open transaction's lock: $locked of 3"
[ "$locked" -ge 1 ] || fail "no registry refresh met the lock of a transaction held open for 25 s"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'long'" succeeded 30
assert_eq "1" "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'long'")" "attempts of the job that ran meanwhile"
if grep -E 'lease not renewed|lease lost' "${log[3]}"; then
	fail "a lease was lost while the registry rows were locked"
fi
wait_for "SELECT status FROM kyu_jobs WHERE id = 'held'" succeeded 30
grep "job held attempt 1 started" "${log[2]}" >/dev/null || fail "job held did not run on the daemon of q2"

# ---- kyu submit and kyu wake reach the daemon of the queue.
"$KYU" -c "$KYUD_INI" submit -i s3 -q q3 -s true >/dev/null || fail "kyu submit failed"
started_on s3 3 "kyu submit -q q3"
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_notify_insert"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('w4', 'q4', 'true')"
sleep 1
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'w4'")" "a job without the trigger, 1 s later"
t0=$(sql "SELECT NOW(6)")
"$KYU" -c "$KYUD_INI" wake q4 || fail "kyu wake q4 failed"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'w4'" succeeded 30
ms=$(ms_between "'$t0'" started_at w4)
echo "kyu wake q4: job w4 started $ms ms after it"
[ "$ms" -ge 0 ] && [ "$ms" -lt "$WAKE_MAX_MS" ] || fail "kyu wake q4: job started $ms ms after it"
grep "job w4 attempt 1 started" "${log[4]}" >/dev/null || fail "kyu wake q4: w4 did not run on the daemon of q4"

# ---- a daemon that stops removes its row; the others stay.
kill -TERM "$d4_pid"
wait "$d4_pid" || fail "the daemon of q4 exited with status $?"
EXTRA_PIDS=${EXTRA_PIDS% *}
assert_eq "127.0.0.2:${port[2]},127.0.0.3:${port[3]}" \
	"$(sql "SELECT GROUP_CONCAT(wake_addr ORDER BY wake_addr) FROM kyu_daemons")" "rows after the daemon of q4 stopped"

stop_extra_kyuds
stop_kyud
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_daemons")" "rows after every daemon stopped"
