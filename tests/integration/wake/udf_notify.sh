#!/usr/bin/env bash
# The kyu_notify UDF and the triggers of sql/notify.sql, in a throwaway
# mariadbd: a due INSERT sends "kyu:QUEUE", a future one sends nothing, an
# UPDATE that makes a job due sends one, a multi-row INSERT one per queue
# (coalesced by the statement's stamp), a live row of kyu_daemons gets the
# wake-ups of its queues instead of the fallback address (due and live by
# the server's clock from a session of another time zone too), and INSERTs
# succeed whether or not anyone listens or the send fails.
#
# Environment (all optional):
#   KYU_UDF        path of the built kyu_notify.so (else looked for next to
#                  $KYUD, $KYU, or under $KYU_SRC/build)
#   KYU_UDP_RECV   path of kyu_udp_recv (else next to kyu_notify.so)
#   KYU_SRC        source tree (else three levels above this script)
#   KYU_TEST_DIR   the build's tests dir: a scratch directory kept after a
#                  failure is linked from run/udf_notify/db there, and
#                  removed by the next run (as tests/lib.sh does)
# Exit 0 pass, 1 fail, 77 skipped (plugin not built, no mariadbd).
set -euo pipefail

src=${KYU_SRC:-$(cd "$(dirname "$0")/../../.." && pwd)}
me=udf_notify

skip() { echo "$me: SKIP: $*"; exit 77; }
fail() { echo "$me: FAIL: $*" >&2; exit 1; }
say() { echo "$me: $*"; }

find_udf() {
	local d
	[ -n "${KYU_UDF:-}" ] && { echo "$KYU_UDF"; return; }
	for d in ${KYUD:+"$(dirname "$KYUD")"} ${KYU:+"$(dirname "$KYU")"} "$src/build"; do
		[ -f "$d/src/udf/kyu_notify.so" ] && { echo "$d/src/udf/kyu_notify.so"; return; }
		[ -f "$d/kyu_notify.so" ] && { echo "$d/kyu_notify.so"; return; }
	done
	echo ""
}
udf=$(find_udf)
if [ -z "$udf" ] || [ ! -f "$udf" ]; then skip "kyu_notify.so not found (set KYU_UDF)"; fi
recv=${KYU_UDP_RECV:-$(dirname "$udf")/kyu_udp_recv}
[ -x "$recv" ] || skip "kyu_udp_recv not found next to $udf (set KYU_UDP_RECV)"
client=$(command -v mariadb || command -v mysql || true)
[ -n "$client" ] || skip "no mariadb client"
command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ] || command -v mysqld >/dev/null ||
	[ -x /usr/sbin/mysqld ] || skip "no mariadbd"

# kyu_notify sends only to 127.0.0.1:7711 and to what kyu_notify.allow,
# beside the plugin, lists; the file is read again within a second of a
# change. allow_add ADDR:PORT lists one more and waits that second out.
allow_add() {
	echo "$1" >>"$work/plugin/kyu_notify.allow"
	sleep 1.1
}

# The scratch directory holds a data directory of about 270 MB: under
# $TMPDIR, not in the build tree. Its name is one tests/lib.sh's db-start
# removes, through the link a failed run leaves in $KYU_TEST_DIR.
link=${KYU_TEST_DIR:+$KYU_TEST_DIR/run/$me/db}
if [ -n "$link" ] && [ -L "$link" ]; then
	old=$(readlink "$link")
	case ${old##*/} in kyu-private-db.*) rm -rf "$old" ;; esac
	rm -f "$link"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/kyu-private-db.$me.XXXXXX")
# mariadbd's socket path must fit in 108 bytes: a long TMPDIR does not do.
if [ ${#work} -gt 80 ]; then rmdir "$work"; work=$(mktemp -d "/tmp/kyu-private-db.$me.XXXXXX"); fi
pids=()
ok=0
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$src/scripts/sandbox-db" stop "$work/db" >/dev/null 2>&1 || true
	if [ "$ok" = 1 ]; then
		rm -rf "$work"
	else
		echo "$me: scratch directory kept until the next run: $work" >&2
		if [ -n "$link" ]; then mkdir -p "${link%/*}" && ln -sfn "$work" "$link"; fi
		[ -f "$work/db/mysqld.err" ] && tail -n 20 "$work/db/mysqld.err" >&2
	fi
}
trap cleanup EXIT

# The plugin directory holds a copy, as an installation would.
mkdir -p "$work/plugin"
cp "$udf" "$work/plugin/kyu_notify.so"

# A free TCP port for mariadbd (it also listens on its own socket, which is
# what we use); retry on the rare collision.
started=0
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 30000))
	(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && continue
	if KYU_PLUGIN_DIR="$work/plugin" "$src/scripts/sandbox-db" start "$work/db" "$port" \
		>>"$work/sandbox.log" 2>&1; then
		started=1
		break
	fi
	# Start again from nothing: a failed attempt (port taken, or a
	# mariadb-install-db that failed under load) may leave a server or a
	# half-made data directory behind.
	"$src/scripts/sandbox-db" stop "$work/db" >/dev/null 2>&1 || true
	if [ -d "$work/db" ]; then mv "$work/db" "$work/db.failed.$port"; fi
done
[ "$started" = 1 ] || { cat "$work/sandbox.log" >&2; fail "could not start mariadbd"; }
sock=$work/db/mysqld.sock

sql() { "$client" --no-defaults -uroot --socket="$sock" -N -B kyu "$@"; }
# sql_err STATEMENT: the statement must fail; prints the error.
sql_err() {
	local out
	if out=$(sql -e "$1" 2>&1); then fail "expected an error from: $1"; fi
	echo "$out"
}

sql <"$src/sql/schema.sql"

# A listener on a port of its own choosing. start_recv ADDR FILE sets
# recv_port (empty if ADDR cannot be bound) and recv_pid.
start_recv() {
	recv_port=
	"$recv" -b "$1" -t 300 >"$2" 2>"$2.err" &
	recv_pid=$!
	pids+=("$recv_pid")
	# A bound for a hang: starting a process takes a loaded machine a while.
	local deadline=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		if [ -s "$2" ]; then recv_port=$(sed -n '1s/^port //p' "$2"); return 0; fi
		kill -0 "$recv_pid" 2>/dev/null || return 0
		sleep 0.01
	done
	fail "kyu_udp_recv did not start"
}
start_recv 127.0.0.1 "$work/recv.out"
[ -n "$recv_port" ] || fail "kyu_udp_recv could not bind 127.0.0.1: $(cat "$work/recv.out.err")"
rport=$recv_port
recv_file=$work/recv.out
main_recv_pid=$recv_pid
target=127.0.0.1:$rport
echo "$target" >"$work/plugin/kyu_notify.allow" # before the library is loaded

# received: sets got to the datagrams that arrived since the previous call,
# one per line. It sends a marker datagram of its own and waits for it:
# loopback delivery to one socket keeps order, so whatever a statement sent
# before the marker is in by then.
seen=1
marks=0
received() {
	local mark line
	marks=$((marks + 1))
	mark="kyu:@mark$marks"
	# A call inside its pair's 10 ms window is sent by kyu_notify's sender
	# thread once the window has passed: let that come in first.
	sleep 0.1
	printf '%s' "$mark" >"/dev/udp/127.0.0.1/$rport"
	line=
	local deadline=$(($(date +%s) + 30))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		line=$(grep -n -x -F "$mark" "$recv_file" | cut -d: -f1 || true)
		[ -n "$line" ] && break
		sleep 0.01
	done
	[ -n "$line" ] || fail "marker $mark never arrived"
	got=
	# (sed prints the first line of a range whose end is before its start.)
	[ "$line" -gt $((seen + 1)) ] && got=$(sed -n "$((seen + 1)),$((line - 1))p" "$recv_file")
	seen=$line
}
expect() { # WHAT EXPECTED-LINES (newline separated; empty = nothing)
	received
	[ "$got" = "$2" ] || fail "$1: expected [$2], received [$got]"
	say "ok: $1"
}

# --- install, with the target set the documented way, twice (idempotent)
for _ in 1 2; do
	{ echo "SET @kyu_notify_target = '$target';"; cat "$src/sql/notify.sql"; } | sql
done
expect "install checks the target (one any-queue wake-up per run)" "kyu:
kyu:"
[ "$(sql -e "SELECT COUNT(*) FROM information_schema.TRIGGERS
	WHERE EVENT_OBJECT_TABLE = 'kyu_jobs' AND ACTION_STATEMENT LIKE '%$target%'")" = 2 ] ||
	fail "the two triggers with target $target are not installed"

# A bad target stops the install before the triggers are replaced.
if { echo "SET @kyu_notify_target = 'localhost:7711';"; cat "$src/sql/notify.sql"; } |
	sql >"$work/bad.out" 2>&1; then
	fail "notify.sql accepted the target localhost:7711"
fi
grep -q "bad target" "$work/bad.out" || fail "no 'bad target' message: $(cat "$work/bad.out")"
[ "$(sql -e "SELECT COUNT(*) FROM information_schema.TRIGGERS
	WHERE ACTION_STATEMENT LIKE '%$target%'")" = 7 ] || fail "a failed install changed the triggers"
say "ok: a bad target is refused and changes nothing"

# --- the function itself
err=$(sql_err "SELECT kyu_notify()")
[[ $err == *"1 to 3 arguments"* ]] || fail "arity message: $err"
err=$(sql_err "SELECT kyu_notify('q', '$target', 's', 4)")
[[ $err == *"1 to 3 arguments"* ]] || fail "arity message (4): $err"
err=$(sql_err "SELECT kyu_notify('q', 7711)")
[[ $err == *"must be a string"* ]] || fail "type message: $err"
err=$(sql_err "SELECT kyu_notify('q', '::1:7711')")
[[ $err == *"bad target"* ]] || fail "bad target message: $err"
say "ok: argument errors are reported by init"

[ "$(sql -e "SELECT kyu_notify('direct', '$target')")" = 1 ] || fail "kyu_notify did not return 1"
[ "$(sql -e "SELECT kyu_notify(NULL, '$target')")" = 1 ] || fail "kyu_notify(NULL) did not return 1"
[ "$(sql -e "SELECT kyu_notify(42, '$target')")" = 1 ] || fail "kyu_notify(42) did not return 1"
q64=$(printf 'x%.0s' $(seq 1 64))
long=$(printf '\xc3\xa9%.0s' $(seq 1 40)) # 40 characters, 80 bytes: fits the column and a datagram
[ "$(sql -e "SELECT kyu_notify('$q64', '$target'), kyu_notify('$long', '$target')")" = "1	1" ] ||
	fail "long queue names"
expect "payloads: queue, NULL, number, 64 bytes, 80 bytes" "kyu:direct
kyu:
kyu:42
kyu:$q64
kyu:$(printf '\\xc3\\xa9%.0s' $(seq 1 40))"

# A target that varies per row is parsed per row; a bad one returns 0, no error.
sql -e "CREATE TABLE t_targets (n INT PRIMARY KEY, t VARCHAR(300));
	INSERT INTO t_targets VALUES (1, '$target'), (2, 'nonsense'), (3, REPEAT('1', 200)), (4, '$target')"
[ "$(sql -e "SELECT GROUP_CONCAT(kyu_notify(CONCAT('row', n), t) ORDER BY n) FROM t_targets")" = "1,0,0,1" ] ||
	fail "per-row targets"
expect "per-row targets" "kyu:row1
kyu:row4"

# Only what kyud takes for a wake-up is sent: a queue name of at most 256
# bytes of valid UTF-8 without control characters, nothing (any queue), or
# the cancel hint. Anything else returns 0 and sends nothing.
[ "$(sql -e "SELECT kyu_notify(CONCAT('a', CHAR(10), 'b'), '$target'), kyu_notify(UNHEX('61FF62'), '$target'),
	kyu_notify(REPEAT('y', 257), '$target'), kyu_notify(UNHEX('610062'), '$target'),
	kyu_notify(UNHEX('C0AF'), '$target'), kyu_notify(UNHEX('EDA080'), '$target'),
	kyu_notify(CONCAT('<13>', CHAR(9), 'fake'), '$target')")" = "0	0	0	0	0	0	0" ] ||
	fail "a payload that is not a queue name was not refused"
[ "$(sql -e "SELECT kyu_notify(REPEAT('y', 256), '$target'), kyu_notify(0x18, '$target')")" = "1	1" ] ||
	fail "a 256-byte name or the cancel hint was refused"
expect "refused payloads send nothing" "kyu:$(printf 'y%.0s' $(seq 1 256))
kyu:\x18"

# A loopback port that is not listed (any local service could listen
# there) gets nothing, and -1, with a constant or a per-row target.
start_recv 127.0.0.1 "$work/recvu.out"
uport=$recv_port
[ "$(sql -e "SELECT kyu_notify('q', '127.0.0.1:$uport'), kyu_notify('q', CONCAT('127.0.0.1:', $uport)),
	kyu_notify('q', '127.0.0.2:$rport')")" = "-1	-1	-1" ] ||
	fail "an unlisted loopback port did not return -1"
printf 'kyu:@umark' >"/dev/udp/127.0.0.1/$uport"
for _ in $(seq 1 3000); do grep -q -x 'kyu:@umark' "$work/recvu.out" && break; sleep 0.01; done
[ "$(sed -n '2,$p' "$work/recvu.out")" = "kyu:@umark" ] ||
	fail "an unlisted loopback port received: $(sed -n '2,$p' "$work/recvu.out")"
say "ok: an unlisted loopback port gets nothing"

# With a stamp, a (target, queue) pair is sent once per stamp: twice in
# one statement under one stamp is one datagram; another stamp or another
# queue is another.
[ "$(sql -e "SELECT kyu_notify('st', '$target', 'x1') + kyu_notify('st', '$target', 'x1')
	+ kyu_notify('st2', '$target', 'x1')")" = 3 ] || fail "coalesced calls do not return 1"
sleep 0.1 # past the process-wide 10 ms window of the pair
[ "$(sql -e "SELECT kyu_notify('st', '$target', 'x2')")" = 1 ] || fail "another stamp"
expect "stamps coalesce per (target, queue)" "kyu:st
kyu:st2
kyu:st"

# --- who may be sent to: loopback, and what kyu_notify.allow (beside the
# plugin) lists; another target gets nothing, and -1.
allow=$work/plugin/kyu_notify.allow
# want_result EXPECTED SQL: the statement's result becomes EXPECTED within
# 30 s (the function looks at the file once a second at most).
want_result() {
	local deadline=$(($(date +%s) + 30)) r
	until r=$(sql -e "$2") && [ "$r" = "$1" ]; do
		[ "$(date +%s)" -lt "$deadline" ] || fail "[$2] gave '$r', not '$1', for 30 s"
		sleep 0.2
	done
}
[ "$(sql -e "SELECT kyu_notify('q', '255.255.255.255:9')")" = -1 ] || fail "an unlisted target did not return -1"
# An address of this host that is not loopback, where one can be had:
# there a datagram would arrive; it must not unless listed.
ext=$( (hostname -I 2>/dev/null || true) | tr ' ' '\n' | grep -E '^[0-9]+(\.[0-9]+){3}$' | grep -v '^127\.' | head -n1 || true)
ext_port=
if [ -n "$ext" ]; then
	start_recv "$ext" "$work/recvx.out"
	ext_port=$recv_port
fi
if [ -n "$ext_port" ]; then
	[ "$(sql -e "SELECT kyu_notify('outside', '$ext:$ext_port'), kyu_notify('outside', CONCAT('$ext:', $ext_port))")" = "-1	-1" ] ||
		fail "an unlisted address of this host (constant and per-row target) did not return -1"
	printf '# test\n  %s:%s  \n255.255.255.255:9\nnonsense\n' "$ext" "$ext_port" >>"$allow"
	want_result 1 "SELECT kyu_notify('listed', '$ext:$ext_port')"
	for _ in $(seq 1 200); do grep -q -x 'kyu:listed' "$work/recvx.out" && break; sleep 0.01; done
	assert_x=$(sed -n '2,$p' "$work/recvx.out" | sort -u)
	[ "$assert_x" = "kyu:listed" ] || fail "at $ext:$ext_port: expected [kyu:listed] only, received [$assert_x]"
	say "ok: a non-loopback target gets datagrams only once kyu_notify.allow lists it"
else
	printf '255.255.255.255:9\n' >>"$allow"
	say "no non-loopback IPv4 address here: the allow list is tested with a broadcast address only"
fi
# A listed send that fails (broadcast without SO_BROADCAST: EACCES)
# returns 0, no error.
want_result 0 "SELECT kyu_notify('q', '255.255.255.255:9')"
say "ok: a failed send returns 0"
# The install refuses a fallback address that is not allowed.
if { echo "SET @kyu_notify_target = '192.0.2.1:7711';"; cat "$src/sql/notify.sql"; } |
	sql >"$work/denied.out" 2>&1; then
	fail "notify.sql accepted the fallback 192.0.2.1:7711, which kyu_notify.allow does not list"
fi
grep -q "target 192.0.2.1:7711 is not allowed" "$work/denied.out" || fail "no 'not allowed' message: $(cat "$work/denied.out")"
[ "$(sql -e "SELECT COUNT(*) FROM information_schema.TRIGGERS
	WHERE ACTION_STATEMENT LIKE '%$target%'")" = 7 ] || fail "a refused install changed the triggers"
say "ok: a fallback address that is not allowed is refused and changes nothing"

# IPv6, when this host has ::1.
start_recv ::1 "$work/recv6.out"
r6=$recv_port
if [ -n "$r6" ]; then
	allow_add "[::1]:$r6"
	[ "$(sql -e "SELECT kyu_notify('six', '[::1]:$r6')")" = 1 ] || fail "IPv6 send"
	for _ in $(seq 1 3000); do grep -q -x 'kyu:six' "$work/recv6.out" && break; sleep 0.01; done
	grep -q -x 'kyu:six' "$work/recv6.out" || fail "nothing received on [::1]:$r6"
	say "ok: IPv6 target"
else
	say "IPv6 not available here, not tested"
fi

# --- the triggers
sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('q1', 'true')"
expect "a due INSERT wakes its queue" "kyu:q1"

sql -e "INSERT INTO kyu_jobs (id, queue, command, run_at) VALUES ('later', 'q2', 'true', NOW(6) + INTERVAL 1 HOUR)"
expect "a future INSERT sends nothing" ""

sql -e "UPDATE kyu_jobs SET priority = 5 WHERE id = 'later'"
expect "an UPDATE that leaves a job in the future sends nothing" ""

sql -e "UPDATE kyu_jobs SET run_at = NOW(6) WHERE id = 'later'"
expect "an UPDATE making a job due wakes its queue once" "kyu:q2"

sql -e "UPDATE kyu_jobs SET priority = 7 WHERE id = 'later'"
expect "an UPDATE of an already due job sends nothing" ""

sql -e "UPDATE kyu_jobs SET status = 'running', owner = 1, lease_until = NOW(6) + INTERVAL 60 SECOND WHERE id = 'later';
	UPDATE kyu_jobs SET status = 'failed', owner = NULL WHERE id = 'later'"
expect "claim and finish send nothing" ""

# The cancel hint ("kyu:" and the byte 0x18, which kyu_udp_recv prints as
# \x18) for a running job cancelled in plain SQL; nothing for one cancelled
# before it ran.
sql -e "INSERT INTO kyu_jobs (id, queue, command, status, owner, lease_until)
	VALUES ('runs', 'q3', 'sleep 1', 'running', 1, NOW(6) + INTERVAL 60 SECOND),
	       ('waits', 'q3', 'true', 'waiting', NULL, NULL)"
received
sql -e "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'runs'"
expect "a running job cancelled in plain SQL sends the cancel hint" 'kyu:\x18'
sql -e "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'waits'"
expect "a waiting job cancelled sends nothing" ""

sql -e "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6) + INTERVAL 10 SECOND WHERE id = 'later'"
expect "a retry with backoff sends nothing" ""
sql -e "UPDATE kyu_jobs SET status = 'failed' WHERE id = 'later';
	UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6) WHERE id = 'later'"
expect "a manual retry wakes its queue" "kyu:q2"

sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('a', 'true'), ('b', 'true'), ('a', 'true');
	INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('c', 'true', NOW(6)), ('d', 'true', NOW(6) + INTERVAL 1 DAY)"
expect "a multi-row INSERT sends one datagram per queue of its due rows" "kyu:a
kyu:b
kyu:c"
# Sessions of other zones (kyu_jobs(7), "Time"): due is due, the future
# is the future, by the server's clock.
sql -e "SET time_zone = '-05:00'; INSERT INTO kyu_jobs (queue, command) VALUES ('tz1', 'true')"
expect "a due INSERT from a session at -05:00 wakes its queue" "kyu:tz1"
sql -e "SET time_zone = '+09:00'; INSERT INTO kyu_jobs (queue, command, run_at) VALUES ('tz2', 'true', NOW(6) + INTERVAL 1 HOUR)"
expect "a future INSERT from a session at +09:00 sends nothing" ""

# A live daemon of kyu_daemons that serves the queue gets the wake-up (here
# at another port of its own); the fallback address then gets nothing. A
# stale row, a row without an address and a row of other queues get none.
start_recv 127.0.0.1 "$work/recvd.out"
dport=$recv_port
allow_add "127.0.0.1:$dport"
sql -e "INSERT INTO kyu_daemons (id, host, pid, wake_addr, queues, version, started, last_seen, live_until) VALUES
	('d1', 'h', 1, '127.0.0.1:$dport', 'qa,qb', 'v', NOW(6), NOW(6), NOW(6) + INTERVAL 1 HOUR),
	('d2', 'h', 2, '127.0.0.1:$dport', 'qc', 'v', NOW(6), NOW(6), NOW(6) + INTERVAL 1 HOUR),
	('d3', 'h', 3, '127.0.0.1:$dport', '', 'v', NOW(6), NOW(6), NOW(6) - INTERVAL 1 SECOND),
	('d4', 'h', 4, NULL, '', 'v', NOW(6), NOW(6), NOW(6) + INTERVAL 1 HOUR)"
sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('qb', 'true'), ('qb', 'true'), ('qd', 'true')"
expect "the fallback address gets the queue no live daemon serves" "kyu:qd"
for _ in $(seq 1 3000); do grep -q -x 'kyu:qb' "$work/recvd.out" && break; sleep 0.01; done
assert_lines=$(sed -n '2,$p' "$work/recvd.out")
[ "$assert_lines" = "kyu:qb" ] || fail "the daemon of qa,qb: expected [kyu:qb], received [$assert_lines]"
# From a session at +09:00 the daemon is live all the same.
sql -e "SET time_zone = '+09:00'; INSERT INTO kyu_jobs (queue, command) VALUES ('qa', 'true')"
expect "a session at +09:00: the fallback gets nothing" ""
for _ in $(seq 1 3000); do grep -q -x 'kyu:qa' "$work/recvd.out" && break; sleep 0.01; done
grep -q -x 'kyu:qa' "$work/recvd.out" || fail "a session at +09:00: the live daemon got no wake-up"
sql -e "DELETE FROM kyu_daemons"
say "ok: a live daemon of the queue gets its wake-up, once per statement"

sql -e "INSERT INTO kyu_jobs (queue, command, status) VALUES ('e', 'true', 'cancelled')"
expect "an INSERT of a finished row sends nothing" ""

# Installed without the UPDATE trigger: a manual retry waits for the poll.
{ echo "SET @kyu_notify_target = '$target'; SET @kyu_notify_update = 0;"; cat "$src/sql/notify.sql"; } | sql
[ "$(sql -e "SELECT GROUP_CONCAT(TRIGGER_NAME) FROM information_schema.TRIGGERS
	WHERE EVENT_OBJECT_TABLE = 'kyu_jobs' AND TRIGGER_NAME LIKE 'kyu\\_jobs\\_notify%'")" = kyu_jobs_notify_insert ] ||
	fail "@kyu_notify_update = 0"
sql -e "UPDATE kyu_jobs SET status = 'failed' WHERE id = 'later';
	UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6) WHERE id = 'later';
	INSERT INTO kyu_jobs (queue, command) VALUES ('f', 'true')"
expect "@kyu_notify_update = 0 installs the INSERT trigger only" "kyu:
kyu:f"
{ echo "SET @kyu_notify_target = '$target';"; cat "$src/sql/notify.sql"; } | sql
[ "$(sql -e "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE EVENT_OBJECT_TABLE = 'kyu_jobs'
	AND TRIGGER_NAME LIKE 'kyu\\_jobs\\_notify%'")" = 2 ] || fail "reinstall did not bring back the UPDATE trigger"
expect "a reinstall restores the UPDATE trigger" "kyu:"

# --- nobody listening: INSERTs still succeed
kill "$main_recv_pid"
wait "$main_recv_pid" 2>/dev/null || true
before=$(sql -e "SELECT COUNT(*) FROM kyu_jobs")
for _ in $(seq 1 20); do echo "INSERT INTO kyu_jobs (queue, command) VALUES ('gone', 'true');"; done | sql
sql -e "INSERT INTO kyu_jobs (queue, command) SELECT 'gone', 'true' FROM seq_1_to_100"
[ "$(sql -e "SELECT COUNT(*) FROM kyu_jobs")" = $((before + 120)) ] || fail "rows lost without a listener"
say "ok: INSERTs succeed with nobody listening"

# ... and when every send fails.
{ echo "SET @kyu_notify_target = '255.255.255.255:9';"; cat "$src/sql/notify.sql"; } | sql
sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('fails', 'true'), ('fails', 'true')"
[ "$(sql -e "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'fails'")" = 2 ] || fail "INSERT with failing sends"
say "ok: INSERTs succeed when the send fails"

# --- removal
sql <"$src/sql/unnotify.sql"
sql <"$src/sql/unnotify.sql"
[ "$(sql -e "SELECT COUNT(*) FROM information_schema.TRIGGERS WHERE TRIGGER_NAME LIKE '%notify%'")" = 0 ] ||
	fail "unnotify.sql left triggers"
[ "$(sql -e "SELECT COUNT(*) FROM mysql.func WHERE name = 'kyu_notify'")" = 0 ] ||
	fail "unnotify.sql left the function"
sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('plain', 'true')"
say "ok: unnotify.sql removes triggers and function; INSERT works without them"

# The server unloaded the library (and its shared sockets); a new install
# loads it again and works.
start_recv 127.0.0.1 "$work/recv2.out"
[ -n "$recv_port" ] || fail "kyu_udp_recv could not bind 127.0.0.1 again"
rport=$recv_port
recv_file=$work/recv2.out
seen=1
target=127.0.0.1:$rport
allow_add "$target"
{ echo "SET @kyu_notify_target = '$target';"; cat "$src/sql/notify.sql"; } | sql
sql -e "INSERT INTO kyu_jobs (queue, command) VALUES ('again', 'true')"
expect "reinstalled after removal, a due INSERT wakes its queue" "kyu:
kyu:again"

# --- the rate. A pair (target, payload) gets one datagram per 10 ms (and
# one more after the window when called within it); datagrams naming
# distinct queues take a token of a bucket of 2,000 a second, and beyond it
# the target's "any queue" wake-up (one per 10 ms) stands in. Counted at a
# listener of their own: a flood of one name, then one of distinct names.
start_recv 127.0.0.1 "$work/recvr.out"
fport=$recv_port
allow_add "127.0.0.1:$fport"
flood() { # EXPRESSION: prints the calls' sum, then the microseconds they took
	sql -e "SET @t0 = SYSDATE(6);
		SELECT SUM($1) FROM seq_1_to_50000;
		SELECT TIMESTAMPDIFF(MICROSECOND, @t0, SYSDATE(6))" | tr '\n' ' '
}
arrived() { # datagrams at fport so far, once the sender thread is done
	sleep 0.5
	sed -n '2,$p' "$work/recvr.out" | wc -l
}
read -r ret us <<<"$(flood "kyu_notify('same', '127.0.0.1:$fport')")"
n=$(arrived)
max=$((100 * (us / 1000000 + 1) + 1))
[ "$ret" = 50000 ] || fail "rate: a covered call did not return 1 ($ret of 50000)"
[ "$n" -ge 1 ] && [ "$n" -le "$max" ] || fail "rate: one name: $n datagrams in $us us, more than $max (or none)"
say "ok: 50,000 calls naming one queue: $n datagrams in $((us / 1000)) ms (at most $max allowed)"
before=$n
read -r ret us <<<"$(flood "kyu_notify(seq, '127.0.0.1:$fport')")"
n=$(($(arrived) - before))
max=$((2000 + 2100 * (us / 1000000 + 1) + 1))
[ "$n" -ge 1 ] && [ "$n" -le "$max" ] || fail "rate: distinct names: $n datagrams in $us us, more than $max (or none)"
sed -n '2,$p' "$work/recvr.out" | grep -q -x 'kyu:' || fail "rate: no 'any queue' wake-up stood in for the names beyond the bucket"
say "ok: 50,000 calls naming distinct queues: $n datagrams in $((us / 1000)) ms (at most $max allowed)"

ok=1
say "PASS"
