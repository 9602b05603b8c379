#!/usr/bin/env bash
# A retried upstream whose re-opening kyu_settle never saw as such: it was
# cancelled (its dependent cancelled with it), retried, and had run and
# succeeded before kyu_settle came to it (a busy daemon, or none). The
# dependent must still be opened again and become due, not stay
# cancelled (after.wake met this by chance under load). Plain SQL and
# kyu_settle only: no kyud, so the order is the test's.
. "$KYU_SRC/tests/lib.sh"

sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('up', 'true', NOW(6) + INTERVAL 1 HOUR);
     INSERT INTO kyu_jobs (id, command, after) VALUES ('down', 'true', '[\"up\"]');
     INSERT INTO kyu_jobs (id, command, after) VALUES ('deeper', 'true', '[\"down\"]')"
sql "CALL kyu_settle(100)"
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'up'"
sql "CALL kyu_settle(100)"
assert_eq "deeper cancelled down,down cancelled up" \
	"$(sql "SELECT GROUP_CONCAT(id, ' ', status, ' ', cancelled_by ORDER BY id) FROM kyu_jobs WHERE id IN ('down', 'deeper')")" \
	"dependents after the upstream's cancel"

# The retry, then its run and success, all before kyu_settle looks.
sql "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, error = NULL WHERE id = 'up'"
sql "UPDATE kyu_jobs SET status = 'succeeded', attempts = 1, finished_at = NOW(6) WHERE id = 'up'"
sql "CALL kyu_settle(100)"
assert_eq "deeper blocked,down waiting" \
	"$(sql "SELECT GROUP_CONCAT(id, ' ', status ORDER BY id) FROM kyu_jobs WHERE id IN ('down', 'deeper')")" \
	"dependents after the upstream was retried and succeeded unseen"
assert_eq "0 0 NULL" "$(sql "SELECT CONCAT_WS(' ', after_left, after_bad, IFNULL(cancelled_by, 'NULL')) FROM kyu_jobs WHERE id = 'down'")" \
	"down's counters"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left"
