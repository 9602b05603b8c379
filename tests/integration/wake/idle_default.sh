#!/usr/bin/env bash
# What an idle kyud costs the database with the default configuration (the
# values conf/kyu.ini ships: lease, poll_interval, a wake-up address,
# schedules and the registry on) and 8 workers, with schedules in
# kyu_schedules that do not fire meanwhile: at most 0.05 statements a
# second (issue 29). Counted on the server (per-user statistics of a user
# only this kyud uses), by kind:
#   claim poll  every poll_interval (±10%), whatever the number of workers:
#               an UPDATE that finds nothing and a SELECT (MIN(due));
#   registry    worker 1's refresh of the daemon's row of kyu_daemons,
#               every 2 x lease (src/common/registry.h): the compound
#               statement (OTHER) and its INSERT (UPDATE);
#   schedules   worker 1's scan of kyu_schedules, every poll_interval (60 s
#               at least) when no next_run falls sooner: one SELECT.
# The window (135 s) holds at least one poll and one refresh, and is far
# shorter than the 10 minutes of the goal: the goal is checked on the
# periods, the window's counts against what those periods allow in it
# (one more of each for the phase), never against a rate.
. "$KYU_SRC/tests/lib.sh"

WINDOW=135
ini_default() { sed -n "s/^;$1 = \([0-9]*\)\$/\1/p" "$KYU_SRC/conf/kyu.ini"; }
POLL=$(ini_default poll_interval)
LEASE=$(ini_default lease)
[ -n "$POLL" ] && [ -n "$LEASE" ] || fail "conf/kyu.ini: no default for poll_interval ($POLL) or lease ($LEASE)"
REFRESH=$((2 * LEASE))
[ "$REFRESH" -ge 20 ] || REFRESH=20
[ "$REFRESH" -le 600 ] || REFRESH=600
SCAN=$POLL
[ "$SCAN" -ge 60 ] || SCAN=60

# The goal, on the periods: over 10 minutes, the polls at their shortest
# jittered interval, the refreshes and the scans, with their statements.
per10=$((2 * 600 * 10 / (9 * POLL) + 2 * 600 / REFRESH + 600 / SCAN))
echo "defaults: poll_interval $POLL s, lease $LEASE s (registry every $REFRESH s, schedules every $SCAN s):" \
	"at most $per10 statements in 10 minutes"
[ "$per10" -le 30 ] ||
	fail "the default periods allow $per10 statements in 10 minutes (at most 30: 0.05/s)"

use_own_db_user
# Hourly schedules at a minute half an hour away: none fires in the test.
minute=$((($(date -u +%-M) + 30) % 60))
sql "INSERT INTO kyu_schedules (name, cron, command)
	SELECT CONCAT('h', seq), '$minute * * * *', 'true' FROM seq_1_to_3"
port=$(free_udp_port)
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=8 kyud.lease=@default kyud.poll_interval=@default \
	kyud.shutdown_grace=@default kyud.log_level=@default kyud.listen=127.0.0.1:$port
wait_for "SELECT COUNT(*) FROM kyu_schedules WHERE next_run IS NOT NULL" 3 60
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_daemons")" "this daemon's row of kyu_daemons"
wait_workers_idle 8

by_kind() {
	root_sql -N -B -e "SELECT COALESCE(SUM(SELECT_COMMANDS), 0), COALESCE(SUM(UPDATE_COMMANDS), 0),
		COALESCE(SUM(OTHER_COMMANDS), 0) FROM information_schema.USER_STATISTICS WHERE USER = '$T_USER'"
}
t0=$(date +%s%N)
read -r s0 u0 o0 <<<"$(by_kind)"
sleep $WINDOW
read -r s1 u1 o1 <<<"$(by_kind)"
ms=$((($(date +%s%N) - t0) / 1000000))
sel=$((s1 - s0)) upd=$((u1 - u0)) oth=$((o1 - o0))
n=$((sel + upd + oth))
stop_kyud

# What the periods allow in the window's real length (a loaded machine
# stretches it), one more of each for the phase.
polls=$(max_polls "$ms" "$POLL")
refreshes=$((ms / (REFRESH * 1000) + 1))
scans=$((ms / (SCAN * 1000) + 1))
echo "idle, 8 workers, defaults: $n statement(s) in $ms ms: $sel SELECT, $upd UPDATE, $oth other" \
	"(at most $polls poll(s), $refreshes refresh(es), $scans scan(s))"
[ "$oth" -le "$refreshes" ] ||
	fail "$oth other statements in $ms ms: at most $refreshes (the registry refresh's compound statement)"
[ "$upd" -le $((polls + refreshes)) ] ||
	fail "$upd UPDATEs in $ms ms: at most $((polls + refreshes)) (one per poll, one per refresh)"
[ "$sel" -le $((polls + scans)) ] ||
	fail "$sel SELECTs in $ms ms: at most $((polls + scans)) (one per poll, one per scan of kyu_schedules)"
# A poll (at most 1.1 x poll_interval apart) falls in the window: the
# counting saw the daemon at all.
[ "$ms" -lt $((POLL * 1100)) ] || [ "$upd" -ge 1 ] || fail "no claim poll counted in $ms ms"
