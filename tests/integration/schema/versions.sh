#!/usr/bin/env bash
# Schema versions: a database of version 1 (tests/fixtures/schema-v1.sql,
# sql/schema.sql as released) holding jobs stops kyud with exit 78 and a
# line naming `kyu schema upgrade`; kyu schema status and upgrade bring it
# to the newest version (a second upgrade changes nothing), and kyud then
# runs the old rows and new ones. A schema that needs a newer kyud is
# refused (78); a newer one that says this kyud is still compatible runs,
# with a notice. The steps applied to an empty database make exactly what
# sql/schema.sql makes.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

# refused [KEY=VALUE...]: kyud exits 78 by itself; its log in $T_DIR/refused.log.
refused() {
	local rc=0
	write_ini "$T_DIR/refused.ini" "$@"
	timeout $((60 * KYU_TIME_SCALE)) env --default-signal "$KYUD" -c "$T_DIR/refused.ini" \
		2>"$T_DIR/refused.log" || rc=$?
	assert_eq 78 "$rc" "kyud's exit status on a schema it cannot work on"
	grep -E "^kyud\[sup\]: worker [0-9]+ \(pid [0-9]+\) exited with status 78 \(configuration or schema error" \
		"$T_DIR/refused.log" >/dev/null || fail "no supervisor line for the worker's exit 78"
}
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }
write_ini "$T_DIR/kyu.ini"
tables=(kyu_jobs kyu_queues kyu_queue_starts kyu_schedules kyu_locks kyu_meta kyu_daemons kyu_minutes
	kyu_after kyu_after_todo kyu_attempts)
shape() { # shape DB: every table's definition, the triggers and their order
	local t
	for t in "${tables[@]}"; do
		root_sql -N -B -D "$1" -e "SHOW CREATE TABLE $t" | sed 's/ AUTO_INCREMENT=[0-9]*//'
	done
	root_sql -N -B -D "$1" -e "SELECT TRIGGER_NAME, ACTION_STATEMENT FROM information_schema.TRIGGERS
		WHERE TRIGGER_SCHEMA = DATABASE() ORDER BY TRIGGER_NAME"
	# The order in which each event's triggers run (kyu_jobs_check first).
	root_sql -N -B -D "$1" -e "SELECT EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER, TRIGGER_NAME
		FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE()
		ORDER BY EVENT_MANIPULATION, ACTION_TIMING, ACTION_ORDER"
	root_sql -N -B -D "$1" -e "SELECT ROUTINE_NAME, ROUTINE_DEFINITION FROM information_schema.ROUTINES
		WHERE ROUTINE_SCHEMA = DATABASE() ORDER BY ROUTINE_NAME"
}

# ---- version 1 with rows: refused, upgraded, run.
sql "DROP TABLE kyu_jobs, kyu_queues, kyu_queue_starts, kyu_schedules, kyu_locks, kyu_meta, kyu_daemons, kyu_minutes,
     kyu_after, kyu_after_todo, kyu_attempts, kyu_queue_names, kyu_queue_names_new; DROP PROCEDURE kyu_settle"
root_sql -D "$T_DB" <"$KYU_SRC/tests/fixtures/schema-v1.sql" || fail "loading version 1"
sql "INSERT INTO kyu_jobs (id, command) VALUES ('old1', 'true'), ('old2', 'exit 0');
     INSERT INTO kyu_jobs (id, command, status, attempts) VALUES ('oldf', 'true', 'succeeded', 1)"
refused
grep -E '^kyud\[worker [0-9]+\]: database schema is version 1 or older \(no kyu_meta table\), this kyud needs version 6: run `kyu schema upgrade` \(kyu\(1\)\)' \
	"$T_DIR/refused.log" >/dev/null || fail "no line naming kyu schema upgrade"
assert_eq "old1 waiting 0,old2 waiting 0,oldf succeeded 1" \
	"$(sql "SELECT GROUP_CONCAT(id, ' ', status, ' ', attempts ORDER BY id) FROM kyu_jobs")" "rows untouched by the refused kyud"

kyu schema status >"$T_DIR/status" || fail "kyu schema status"
grep -Fx "installed	1 (or older: no kyu_meta table)" "$T_DIR/status" >/dev/null || fail "status: $(cat "$T_DIR/status")"
grep -E "^expected	11 " "$T_DIR/status" >/dev/null || fail "status: $(cat "$T_DIR/status")"
grep -Fx 'upgrade needed: run `kyu schema upgrade`' "$T_DIR/status" >/dev/null || fail "status: $(cat "$T_DIR/status")"

kyu schema upgrade >"$T_DIR/upgrade" || fail "kyu schema upgrade: $(cat "$T_DIR/upgrade")"
assert_eq "step 001-base: applying... done
step 002-meta-gauges: applying... done
step 003-daemons: applying... done
step 004-minutes: applying... done
step 005-after: applying... done
step 006-attempts: applying... done
step 007-checks: applying... done
step 008-zones-wait: applying... done
step 009-daemon-slots: applying... done
step 010-fan: applying... done
step 011-names-seq: applying... done
schema is now at version 11" "$(cat "$T_DIR/upgrade")" "kyu schema upgrade's output"
assert_eq "schema_compat 1,schema_version 11" "$(sql "SELECT GROUP_CONCAT(name, ' ', value ORDER BY name) FROM kyu_meta")" "kyu_meta"
before=$(shape "$T_DB"; sql "SELECT name, value, updated_at FROM kyu_meta")
assert_eq "schema is at version 11: nothing to do" "$(kyu schema upgrade)" "a second upgrade"
assert_eq "$before" "$(shape "$T_DB"; sql "SELECT name, value, updated_at FROM kyu_meta")" "the schema after a second upgrade"
# sql/schema.sql over it changes nothing either.
root_sql -D "$T_DB" <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql over version 11"
assert_eq "$before" "$(shape "$T_DB"; sql "SELECT name, value, updated_at FROM kyu_meta")" "the schema after sql/schema.sql"
grep -Fx "up to date" <(kyu schema status) >/dev/null || fail "status after the upgrade: $(kyu schema status)"
"$KYU" -c "$T_DIR/kyu.ini" check >"$T_DIR/check" 2>&1 || fail "kyu check after the upgrade: $(cat "$T_DIR/check")"

start_kyud
sql "INSERT INTO kyu_jobs (id, command) VALUES ('new1', 'true'), ('new2', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('old1', 'old2', 'new1', 'new2') AND status = 'succeeded'" 4 30
stop_kyud
assert_eq "1" "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'oldf'")" "the finished row"

# ---- a schema that needs a newer kyud: refused; kyu check says so.
sql "UPDATE kyu_meta SET value = 12"
refused
grep -E '^kyud\[worker [0-9]+\]: database schema is version 12 and needs a kyud that knows version 12 or later; this one knows 11: install a newer kyu$' \
	"$T_DIR/refused.log" >/dev/null || fail "no line refusing a schema that needs a newer kyud"
rc=0
"$KYU" -c "$T_DIR/kyu.ini" check 2>"$T_DIR/check" || rc=$?
[ "$rc" != 0 ] || fail "kyu check passed a schema that needs a newer kyud"
assert_eq "kyu: check: schema: database schema is version 12 and needs a kyud that knows version 12 or later; this one knows 11: install a newer kyu" \
	"$(cat "$T_DIR/check")" "kyu check's lines"
assert_eq "schema is at version 12, newer than this kyu knows: nothing to do" "$(kyu schema upgrade)" "upgrade of a newer schema"

# ---- newer, but compatible with this kyud: runs, with one notice per worker.
sql "UPDATE kyu_meta SET value = 11 WHERE name = 'schema_compat'"
start_kyud
sql "INSERT INTO kyu_jobs (id, command) VALUES ('newer1', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'newer1' AND status = 'succeeded'" 1 30
stop_kyud
assert_eq 2 "$(grep -c 'database schema is version 12, newer than the 11 this kyud knows, and compatible with it (schema_compat 11): running' "$KYUD_LOG")" \
	"notices (one per worker)"

# ---- the steps from an empty database make what sql/schema.sql makes.
for d in fresh steps; do
	root_sql -e "DROP DATABASE IF EXISTS ${T_DB}_$d; CREATE DATABASE ${T_DB}_$d;
		GRANT ALL ON ${T_DB}_$d.* TO 'kyu'@'localhost'"
done
EXIT_HOOKS+=("root_sql -e 'DROP DATABASE IF EXISTS ${T_DB}_fresh; DROP DATABASE IF EXISTS ${T_DB}_steps'")
root_sql -D "${T_DB}_fresh" <"$KYU_SRC/sql/schema.sql" || fail "sql/schema.sql into an empty database"
write_ini "$T_DIR/steps.ini" database.database="${T_DB}_steps"
"$KYU" -c "$T_DIR/steps.ini" schema upgrade >/dev/null || fail "kyu schema upgrade of an empty database"
assert_eq "$(shape "${T_DB}_fresh")" "$(shape "${T_DB}_steps")" "tables and triggers: sql/schema.sql against the steps"
assert_eq "$(root_sql -N -B -D "${T_DB}_fresh" -e "SELECT name, value FROM kyu_meta ORDER BY name")" \
	"$(root_sql -N -B -D "${T_DB}_steps" -e "SELECT name, value FROM kyu_meta ORDER BY name")" "kyu_meta"
assert_log_lacks 'failed:'
