#!/usr/bin/env bash
# Schedules changed while kyud runs (each change followed by `kyu wake`, as
# the triggers of sql/notify.sql would send; without them kyud reads the
# table again within 60 s):
#   - a new expression applies from the next instant (every 3rd second);
#   - disabled: no job after; enabled again: jobs resume, and the disabled
#     period counts as nothing missed;
#   - rows kyud cannot run (bad expression, unknown zone, a date that never
#     occurs) get an error and one log line each, however often kyud reads
#     the table, while the other schedules go on; changing a row clears it;
#   - kyu schedule add refuses a bad expression at once; kyu schedules lists;
#     run-now enqueues a job now without touching next_run.
. "$KYU_SRC/tests/lib.sh"

[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }
port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.slots=4 kyud.poll_interval=30 kyud.listen=127.0.0.1:$port kyud.log_level=info
KYU_CMD=("$KYU" -c "$KYUD_INI")
epoch() { sql "SELECT TIMESTAMPDIFF(SECOND, '1970-01-01', UTC_TIMESTAMP())"; }

# ---- the CLI
"${KYU_CMD[@]}" schedule add tick '* * * * * *' -s true >"$T_DIR/add.out" || fail "kyu schedule add tick"
grep -E '^schedule tick: added; first run [0-9-]+ [0-9:]+ [^ ]+$' "$T_DIR/add.out" >/dev/null ||
	fail "kyu schedule add printed: $(cat "$T_DIR/add.out")"
rc=0
"${KYU_CMD[@]}" schedule add bad '61 * * * *' -s true 2>"$T_DIR/err" || rc=$?
[ "$rc" != 0 ] || fail "kyu schedule add accepted minute 61"
grep -i 'minute' "$T_DIR/err" >/dev/null || fail "kyu schedule add: the error does not name the field: $(cat "$T_DIR/err")"
rc=0
"${KYU_CMD[@]}" schedule add bad '* * * * *' -z Mars/Olympus -s true 2>"$T_DIR/err" || rc=$?
[ "$rc" != 0 ] || fail "kyu schedule add accepted the zone Mars/Olympus"
grep 'Mars/Olympus' "$T_DIR/err" >/dev/null || fail "kyu schedule add: the error does not name the zone: $(cat "$T_DIR/err")"
rc=0
"${KYU_CMD[@]}" schedule add tick '* * * * *' -s true 2>"$T_DIR/err" || rc=$?
[ "$rc" != 0 ] && grep "named 'tick' exists" "$T_DIR/err" >/dev/null || fail "kyu schedule add of an existing name: $(cat "$T_DIR/err")"
wait_for "SELECT COUNT(*) >= 3 FROM kyu_jobs WHERE id LIKE 'cron:tick:%' AND status = 'succeeded'" 1 30
"${KYU_CMD[@]}" schedules >"$T_DIR/list" || fail "kyu schedules"
grep -P '^tick\tyes\t\* \* \* \* \* \*\tUTC\tdefault\t[0-9-]+ [0-9:]+ [^\t]+\t[0-9-]+ [0-9:]+ [^\t]+\tonce\tallow\t-$' "$T_DIR/list" >/dev/null ||
	fail "kyu schedules: $(cat "$T_DIR/list")"
id=$("${KYU_CMD[@]}" schedule run-now tick) || fail "kyu schedule run-now"
case "$id" in cron:tick:now:*) ;; *) fail "run-now printed '$id'" ;; esac
wait_for "SELECT status FROM kyu_jobs WHERE id = '$id'" succeeded 30
# Outside the instants: the schedule's own bookkeeping never names it.
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_schedules WHERE last_job = '$id'")" "schedules whose last_job is the run-now job"

# ---- a new expression
sql "UPDATE kyu_schedules SET cron = '*/3 * * * * *' WHERE name = 'tick'"
t_edit=$(epoch)
"${KYU_CMD[@]}" wake
# Two instants after the change, however late a loaded machine fires them.
wait_for "SELECT COUNT(*) >= 2 FROM kyu_jobs WHERE id LIKE 'cron:tick:2%'
          AND TIMESTAMPDIFF(SECOND, '1970-01-01', STR_TO_DATE(RIGHT(id, 20), '%Y-%m-%dT%H:%i:%sZ')) > $((t_edit + 1))" 1 60
after=$(cron_instants tick $((t_edit + 1)))
echo "after the change to */3: $(echo "$after" | tr '\n' ' ')"
assert_eq "" "$(echo "$after" | awk '$1 % 3 != 0' | tr '\n' ' ')" "instants after the change that are not multiples of 3 s"

# ---- disabled, then enabled
"${KYU_CMD[@]}" schedule disable tick | grep -x 'schedule tick: disabled' >/dev/null || fail "kyu schedule disable"
sleep 1
t_off=$(epoch)
n_off=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%'")
sleep 5
t_on=$(epoch)
assert_eq "$n_off" "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%'")" "jobs while the schedule was disabled"
"${KYU_CMD[@]}" schedule enable tick | grep -x 'schedule tick: enabled' >/dev/null || fail "kyu schedule enable"
wait_for "SELECT COUNT(*) > $n_off FROM kyu_jobs WHERE id LIKE 'cron:tick:%'" 1 30
first_on=$(cron_instants tick "$t_off" | sed -n 1p)
[ "$first_on" -ge "$t_on" ] || fail "after enabling, a job for $first_on, an instant of the disabled period ($t_off..$t_on)"

# ---- rows kyud cannot run
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('typo', '* * * *', 'true')"
sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('feb31', '0 0 31 2 *', 'true')"
sql "INSERT INTO kyu_schedules (name, cron, timezone, command) VALUES ('mars', '* * * * *', 'Mars/Olympus', 'true')"
sql "SET SESSION sql_mode = ''; INSERT INTO kyu_schedules (name, cron, command, next_run) VALUES ('zero', '* * * * *', 'true', '0000-00-00 00:00:00')"
# An argv a PHP array became ('Array'), and an env that is a list.
sql "INSERT INTO kyu_schedules (name, cron, argv) VALUES ('phparray', '* * * * *', 'Array')"
sql "INSERT INTO kyu_schedules (name, cron, argv, env) VALUES ('envlist', '* * * * *', '[\"true\"]', '[1]')"
cpu() { # user + system clock ticks of worker 1 so far
	local w1
	w1=$(pgrep -P "$KYUD_PID" | sort -n | sed -n 1p)
	awk '{ print $14 + $15 }' "/proc/$w1/stat"
}
c0=$(cpu)
for i in 1 2 3 4; do "${KYU_CMD[@]}" wake; sleep 1; done
c1=$(cpu)
echo "worker 1 used $((c1 - c0)) clock ticks in 4 s next to the bad rows"
# A scan that kept finding rows it cannot match would spin (400 ticks).
[ $((c1 - c0)) -lt 200 ] || fail "worker 1 used $((c1 - c0)) clock ticks in 4 s: a busy loop"
for n in typo feb31 mars zero phparray envlist; do
	e=$(sql "SELECT IFNULL(error, '') FROM kyu_schedules WHERE name = '$n'")
	echo "$n: error '$e'"
	[ -n "$e" ] || fail "schedule $n: no error recorded"
	assert_eq 1 "$(grep -c "schedule $n: .*kyu_schedules.error is set" "$KYUD_LOG" || true)" "log lines for schedule $n's error"
done
sql "SELECT error FROM kyu_schedules WHERE name = 'feb31'" | grep -i 'feb' >/dev/null || fail "feb31: the error does not name February"
sql "SELECT error FROM kyu_schedules WHERE name = 'mars'" | grep 'Mars/Olympus' >/dev/null || fail "mars: the error does not name the zone"
sql "SELECT error FROM kyu_schedules WHERE name = 'phparray'" | grep 'argv' >/dev/null || fail "phparray: the error does not name argv"
sql "SELECT error FROM kyu_schedules WHERE name = 'envlist'" | grep 'env' >/dev/null || fail "envlist: the error does not name env"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:phparray:%' OR id LIKE 'cron:envlist:%'")" \
	"jobs of the schedules with a bad argv or env"
# tick went on meanwhile.
n=$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%'")
wait_for "SELECT COUNT(*) > $n FROM kyu_jobs WHERE id LIKE 'cron:tick:%'" 1 60
# Changing a bad row clears its error; it then runs.
sql "UPDATE kyu_schedules SET cron = '* * * * * *' WHERE name = 'typo'"
assert_eq "" "$(sql "SELECT IFNULL(error, '') FROM kyu_schedules WHERE name = 'typo'")" "typo's error after the fix"
"${KYU_CMD[@]}" wake
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:typo:%'" 1 30
"${KYU_CMD[@]}" schedule remove typo | grep -x 'schedule typo: removed' >/dev/null || fail "kyu schedule remove"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_schedules WHERE name = 'typo'")" "rows of a removed schedule"
sql "UPDATE kyu_schedules SET enabled = 0"
stop_kyud
