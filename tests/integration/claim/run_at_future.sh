#!/usr/bin/env bash
# A job whose run_at is 8 s ahead (database clock) waits, then runs. (8 s:
# room for a loaded machine to look before they pass.)
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('later', 'touch $T_DIR/later.ran', NOW(6) + INTERVAL 8 SECOND),
     ('now', 'touch $T_DIR/now.ran', NOW(6))"
# The due job runs right away, and kyud has polled at least once since.
wait_for "SELECT status FROM kyu_jobs WHERE id = 'now'" succeeded 30
sleep 0.5
# A snapshot that is only valid while the 8 s have not passed yet.
early=$(sql "SELECT CONCAT(status, ' ', NOW(6) < run_at) FROM kyu_jobs WHERE id = 'later'")
[ ! -e "$T_DIR/later.ran" ] || fail "the future job ran early"
case $early in
"waiting 1") ;;
*" 0") fail "test too slow: run_at passed before the check ($early)" ;;
*) fail "the future job is not waiting before its run_at: $early" ;;
esac

wait_for "SELECT status FROM kyu_jobs WHERE id = 'later'" succeeded 40
[ -e "$T_DIR/later.ran" ] || fail "the future job did not write its file"
assert_eq 1 "$(sql "SELECT started_at >= run_at FROM kyu_jobs WHERE id = 'later'")" \
	"the future job started at or after its run_at"
stop_kyud
