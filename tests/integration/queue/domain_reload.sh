#!/usr/bin/env bash
# Issue 25, item 7: a reload must not start a job as root. kyud runs as
# root and serves queue q, whose [queue.q] says user = nobody (no
# [queue.*]). A claim of q's rows is held up in the database (a trigger
# waits for a named lock the test holds) while SIGHUP brings a configuration
# that serves only queue other; then the claim returns. Those rows were
# claimed under the old configuration and have no section under the new
# one: they must go back (waiting, the attempt not counted), never start as
# kyud's own user (root). Each job writes `id -u` to a file. Before the fix
# they ran as uid 0.
. "$KYU_SRC/tests/lib.sh"

if [ "$(id -u)" != 0 ]; then
	echo "SKIP: kyud must run as root for this test"
	exit 77
fi
out=$(mktemp -d /tmp/kyu-reload-uid.XXXXXX)
chmod 1777 "$out"
EXIT_HOOKS+=("rm -rf '$out'")

# Lease 60: the claim may wait for the lock for half of it before kyud
# gives up on the statement; the test needs seconds.
common=(kyud.workers=1 kyud.slots=2 kyud.prefetch=8 kyud.lease=60 'queue.*.user=')
start_kyud "${common[@]}" kyud.queues=q queue.q.user=nobody
# A warm-up: q's jobs run as nobody.
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('warm', 'q', 'id -u > $out/warm')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'warm'" succeeded 30
assert_eq "$(id -u nobody)" "$(cat "$out/warm")" "uid of q's job before the reload"

# The claim of a 'gated' row waits in its trigger until the test's lock is
# released (GET_LOCK has its own timeout: innodb_lock_wait_timeout does not
# apply).
root_sql -D "$T_DB" -e "CREATE TRIGGER kyu_test_gate BEFORE UPDATE ON kyu_jobs FOR EACH ROW
	SET @kyu_test_gate = IF(OLD.id LIKE 'gated%' AND OLD.status = 'waiting' AND NEW.status = 'running',
		GET_LOCK('kyu_test_gate', 120) + RELEASE_LOCK('kyu_test_gate'), 0)"
EXIT_HOOKS+=("root_sql -D '$T_DB' -e 'DROP TRIGGER IF EXISTS kyu_test_gate' 2>/dev/null")
root_sql -e "SELECT GET_LOCK('kyu_test_gate', 0); SELECT SLEEP(300) AS kyu_test_gate_holder" >/dev/null 2>&1 &
holder=$!
EXIT_HOOKS+=("kill $holder 2>/dev/null")
holder_q="SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT SLEEP(300) AS kyu_test_gate_holder'"
wait_for "SELECT COUNT(*) FROM ($holder_q) AS h" 1 30
# KILL, not the client's death: the server would keep the lock while the
# SLEEP runs.
EXIT_HOOKS+=("root_sql -e \"KILL \$(sql \"$holder_q\")\" 2>/dev/null")

sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('gated', seq), 'q',
	CONCAT('id -u > $out/', 'gated', seq) FROM seq_1_to_3"
# The worker's claim is now waiting in the trigger (shown as the trigger's
# definer, root).
for i in $(seq 300); do
	[ "$(sql "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE '%kyu_test_gate = IF%'
		AND STATE LIKE '%user lock%'")" = 0 ] || break
	[ "$i" -lt 300 ] || fail "no claim waits in the trigger: $(sql "SELECT USER, STATE, LEFT(INFO, 60)
		FROM information_schema.PROCESSLIST" | tr '\n\t' '| ')"
	sleep 0.1
done

write_ini "$KYUD_INI" "${common[@]}" kyud.queues=other queue.other.user=nobody
assert_eq "kyud[sup]: reloaded $KYUD_INI" "$(hup_verdict)" "reload verdict"
# The worker applies the configuration as soon as its loop turns (it is not
# blocked by the statement in flight): give it ample time before the claim
# returns, so that the claim's rows meet the new configuration.
sleep 2
root_sql -e "KILL $(sql "$holder_q")"
wait "$holder" 2>/dev/null || true

# Given back, or (before the fix) run: either way no longer running.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'gated%' AND status = 'running'" 0 30
ran="" root_ran=""
for f in "$out"/gated*; do
	[ -e "$f" ] || continue
	ran+="${f##*/}:$(cat "$f") "
	[ "$(cat "$f")" != 0 ] || root_ran+="${f##*/} "
done
assert_eq "" "$root_ran" "gated jobs that ran as root"
assert_eq "" "$ran" "gated jobs that ran at all, with their uid (their queue is no longer served)"
assert_eq "gated1 waiting 0
gated2 waiting 0
gated3 waiting 0" "$(sql "SELECT CONCAT_WS(' ', id, status, attempts) FROM kyu_jobs WHERE id LIKE 'gated%' ORDER BY id")" \
	"the gated rows after the reload (given back, attempt not counted)"
grep -E "gave back job gated[0-9] of queue q: the configuration no longer serves it" "$KYUD_LOG" >/dev/null ||
	fail "no 'gave back' line: did the claim return before the worker applied the reload (machine too slow?)"
stop_kyud
assert_no_worker_death
