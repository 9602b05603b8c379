#!/usr/bin/env bash
# The operator's view of the daemons, and the drain:
# - with no live kyud, `kyu daemons` says so in a line (with the last one
#   seen: a row left by a dead daemon, else the last to end a job), and
#   `kyu submit` warns on stderr that no live daemon serves the queue (its
#   status still 0); a queue that a live daemon serves gets no warning;
# - kyud writes its job slots ([kyud] workers x slots) and running jobs in
#   kyu_daemons, and `kyu daemons` shows them, with free slots and the
#   drain;
# - `kyu drain HOST:PID` sets kyu_daemons.drain and sends an any-queue
#   wake-up, which brings the daemon's refresh forward (its interval is
#   120 s here, with a 60 s lease: the drain is read long before): the
#   daemon stops claiming (a job submitted then is never started), lets the
#   running jobs finish, past its short shutdown_grace, as succeeded, deletes
#   its row and exits 0; an unknown daemon is refused (1).
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }

# ---- nothing has ever run here.
kyu daemons >"$T_DIR/out" || fail "kyu daemons with no daemon"
assert_eq "no kyud is live: none is registered, and none ended a job in the last week; jobs wait until one runs" \
	"$(cat "$T_DIR/out")" "kyu daemons with no daemon"
rc=0
kyu submit -i lonely -q work -s true >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq 0 "$rc" "kyu submit with no daemon: status"
assert_eq lonely "$(cat "$T_DIR/out")" "kyu submit with no daemon: the id printed"
grep -qF "kyu: submit: warning: no live kyud serves queue 'work' (kyu daemons): the job waits until one does" \
	"$T_DIR/err" || fail "kyu submit with no daemon: no warning: $(cat "$T_DIR/err")"
sql "DELETE FROM kyu_jobs"

# ---- a daemon of queue work: 2 workers x 2 slots; 3 jobs held at a gate.
wake_port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.slots=2 kyud.prefetch=0 kyud.queues=work kyud.shutdown_grace=1 kyud.lease=60 \
	kyud.listen="127.0.0.1:$wake_port"
pid=$KYUD_PID
host=$(sql "SELECT host FROM kyu_daemons")
kyu submit -q work -s true >/dev/null 2>"$T_DIR/err" || fail "kyu submit to a served queue"
[ ! -s "$T_DIR/err" ] || fail "kyu submit to a served queue warned: $(cat "$T_DIR/err")"
kyu submit -q other -s true >/dev/null 2>"$T_DIR/err" || fail "kyu submit to an unserved queue"
grep -qF "no live kyud serves queue 'other'" "$T_DIR/err" ||
	fail "kyu submit to a queue no live daemon serves: no warning: $(cat "$T_DIR/err")"
sql "DELETE FROM kyu_jobs"
gate="while [ ! -e '$T_DIR/go' ]; do sleep 0.1; done"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('long-1', 'work', \"$gate\"),
     ('long-2', 'work', \"$gate\"), ('long-3', 'work', \"$gate\")"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'running' AND pid IS NOT NULL" 3 30
# The refresh writes them (every 120 s; an any-queue wake-up brings it
# forward).
kyu wake >/dev/null || fail "kyu wake"
wait_for "SELECT CONCAT(slots, ' ', running) FROM kyu_daemons" "4 3" 60
kyu daemons >"$T_DIR/out" || fail "kyu daemons"
head -n1 "$T_DIR/out" | grep -q "	slots	running	free	draining	.*	seen	live	" ||
	fail "kyu daemons' header: $(head -n1 "$T_DIR/out")"
grep -q "^$host	$pid	.*	4	3	1	no	.* s ago (refreshes every 120 s)	yes	" "$T_DIR/out" ||
	fail "kyu daemons' row: $(cat "$T_DIR/out")"

# ---- drain it.
rc=0
kyu drain nosuchhost:1 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "kyu drain of an unknown daemon: status"
grep -qF "no live daemon 'nosuchhost:1'" "$T_DIR/err" || fail "kyu drain of an unknown daemon: $(cat "$T_DIR/err")"
kyu drain "$host:$pid" >"$T_DIR/out" || fail "kyu drain $host:$pid"
grep -q "^draining $host pid $pid (.*), asked at .* by kyu@.*: it stops claiming, lets its running jobs finish, then exits" \
	"$T_DIR/out" || fail "kyu drain's line: $(cat "$T_DIR/out")"
assert_eq 1 "$(sql "SELECT drain IS NOT NULL AND drain_by LIKE 'kyu@%' FROM kyu_daemons")" "drain and drain_by set"
kyu daemons | grep -q "	4	3	1	since .* by kyu@" || fail "kyu daemons does not show the drain: $(kyu daemons)"
wait_for_log 'kyud\[sup\]: draining \(kyu_daemons.drain is set\)' 60
assert_log_contains 'kyud\[worker 1\]: kyu_daemons.drain is set \(.* by kyu@.*\): draining'
# Claiming has stopped: a job submitted now is never started.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('late', 'work', 'true')"
kill -0 "$pid" || fail "kyud exited with its jobs still running"
touch "$T_DIR/go"
wait_kyud_exit 120
assert_eq 0 "$KYUD_STATUS" "kyud's exit status after the drain"
assert_eq "late waiting 0,long-1 succeeded 1,long-2 succeeded 1,long-3 succeeded 1" \
	"$(sql "SELECT GROUP_CONCAT(id, ' ', status, ' ', attempts ORDER BY id) FROM kyu_jobs")" "jobs after the drain"
assert_log_lacks 'shutdown grace over|interrupting'
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_daemons")" "the drained daemon's row"
assert_no_worker_death

# ---- none live again: the last to end a job, then a dead daemon's row.
kyu daemons >"$T_DIR/out" || fail "kyu daemons after the drain"
grep -q "^no kyud is live: none is registered; the last to end a job was $host pid $pid, [0-9]\+ s ago" "$T_DIR/out" ||
	fail "kyu daemons after the drain: $(cat "$T_DIR/out")"
sql "INSERT INTO kyu_daemons (id, host, pid, version, started, last_seen, live_until)
     VALUES ('ghost:77:00', 'ghost', 77, 'x', NOW(6) - INTERVAL 1 HOUR, NOW(6) - INTERVAL 10 MINUTE,
             NOW(6) - INTERVAL 5 MINUTE)"
kyu daemons >"$T_DIR/out" || fail "kyu daemons with a dead daemon's row"
grep -q "^ghost	77	.*	no	ghost:77:00$" "$T_DIR/out" || fail "kyu daemons: the dead row: $(cat "$T_DIR/out")"
assert_eq "no kyud is live: the last one seen was ghost pid 77, 10 min ago (its row's last refresh); jobs wait until one runs" \
	"$(tail -n1 "$T_DIR/out")" "kyu daemons' line with a dead daemon's row"
