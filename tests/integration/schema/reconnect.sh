#!/usr/bin/env bash
# kyud checks the schema version on every connect, not only at start: with
# kyud running, the schema is made one that needs a newer kyud and kyud's
# connections are killed; the workers reconnect, log the line and the
# daemon exits 78 (EX_CONFIG) without claiming the job waiting meanwhile.
. "$KYU_SRC/tests/lib.sh"

use_own_db_user
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=2
sql "INSERT INTO kyu_jobs (id, command) VALUES ('before', 'true')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'before' AND status = 'succeeded'" 1 30

known=$(sed -n 's/^#define SCHEMA_VERSION //p' "$KYU_SRC/src/common/schema.h")
newer=$((known + 1))
sql "UPDATE kyu_meta SET value = $newer WHERE name = 'schema_version';
     UPDATE kyu_meta SET value = $newer WHERE name = 'schema_compat';
     INSERT INTO kyu_jobs (id, command, run_at) VALUES ('after', 'true', NOW(6) + INTERVAL 3 SECOND)"
ids=$(root_sql -N -B -e "SELECT GROUP_CONCAT(ID) FROM information_schema.PROCESSLIST WHERE USER = '$T_USER'")
[ -n "$ids" ] || fail "no connection of kyud's found"
for id in ${ids//,/ }; do root_sql -e "KILL CONNECTION $id" || true; done
wait_kyud_exit 60
assert_eq 78 "$KYUD_STATUS" "kyud's exit status after reconnecting to a schema that needs a newer kyud"
assert_log_contains "^kyud\\[worker [12]\\]: database schema is version $newer and needs a kyud that knows version $newer or later; this one knows $known: install a newer kyu\$"
assert_log_contains '^kyud\[sup\]: worker [12] \(pid [0-9]+\) exited with status 78 \(configuration or schema error'
assert_eq "waiting 0" "$(sql "SELECT CONCAT(status, ' ', attempts) FROM kyu_jobs WHERE id = 'after'")" "the job that came after"
assert_no_sanitizer_report
