#!/usr/bin/env bash
# kyud runs with exactly the privileges README.md and kyu_jobs(7) grant it
# (no more): plain, limited, rate-limited and keyed jobs run, a schedule
# fires, retention deletes, the daemon keeps its row of kyu_daemons and
# counts the jobs in kyu_minutes, writes their attempts to kyu_attempts
# (which retention's DELETE removes with them), settles a workflow; a submitter with SELECT, INSERT, UPDATE on kyu_jobs alone submits
# into a bounded queue (the trigger reads kyu_queues as its definer).
. "$KYU_SRC/tests/lib.sh"

u=g_${T_DB#t_}
u=${u:0:60}
root_sql <<SQL
DROP USER IF EXISTS '$u'@'localhost', '${u}_w'@'localhost';
CREATE USER '$u'@'localhost' IDENTIFIED BY 'kyu';
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_jobs TO '$u'@'localhost';
GRANT SELECT, UPDATE ON $T_DB.kyu_queues TO '$u'@'localhost';
GRANT SELECT, INSERT, DELETE ON $T_DB.kyu_queue_starts TO '$u'@'localhost';
GRANT SELECT, INSERT ON $T_DB.kyu_queue_names TO '$u'@'localhost';
GRANT SELECT, DELETE ON $T_DB.kyu_queue_names_new TO '$u'@'localhost';
GRANT SELECT, UPDATE ON $T_DB.kyu_schedules TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_meta TO '$u'@'localhost';
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_daemons TO '$u'@'localhost';
GRANT SELECT, INSERT, UPDATE, DELETE ON $T_DB.kyu_minutes TO '$u'@'localhost';
GRANT INSERT ON $T_DB.kyu_attempts TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_after TO '$u'@'localhost';
GRANT SELECT ON $T_DB.kyu_after_todo TO '$u'@'localhost';
GRANT EXECUTE ON PROCEDURE $T_DB.kyu_settle TO '$u'@'localhost';
CREATE USER '${u}_w'@'localhost' IDENTIFIED BY 'web';
GRANT SELECT, INSERT, UPDATE ON $T_DB.kyu_jobs TO '${u}_w'@'localhost';
SQL
drop_users() { root_sql -e "DROP USER IF EXISTS '$u'@'localhost', '${u}_w'@'localhost'" || true; }
trap 'rc=$?; drop_users; (exit $rc); cleanup' EXIT

sql "INSERT INTO kyu_schedules (name, cron, command) VALUES ('s', '* * * * * *', 'true');
     INSERT INTO kyu_queues (name, max_running, max_waiting) VALUES ('lim', 1, 100);
     INSERT INTO kyu_queues (name, rate_limit, rate_period) VALUES ('rate', 100, 1)"
start_kyud database.user="$u" database.password=kyu kyud.retention=1 kyud.retention_failed=1 kyud.cleanup_every=1 kyud.history=all
mariadb --no-defaults -u"${u}_w" -pweb --socket="$KYU_DB_SOCKET" -D "$T_DB" -e "
	INSERT INTO kyu_jobs (id, queue, command) VALUES ('l1', 'lim', 'true'), ('l2', 'lim', 'true');
	INSERT INTO kyu_jobs (id, queue, command) VALUES ('r1', 'rate', 'true');
	INSERT INTO kyu_jobs (id, command, concurrency_key) VALUES ('k1', 'true', 'k'), ('k2', 'true', 'k');
	INSERT INTO kyu_jobs (id, command) VALUES ('p1', 'true')" || fail "the submitter could not INSERT"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded' AND id NOT LIKE 'cron:%'" 6 20
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:s:%' AND status = 'succeeded'" 1 20
sql "UPDATE kyu_schedules SET enabled = 0"
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_queue_starts WHERE queue = 'rate'")" "starts recorded"
# Retention (1 s) removes the finished rows with kyud's own privileges.
sleep 2
"$KYU" -c "$KYUD_INI" submit -i p2 -s true >/dev/null 2>&1 || fail "kyu submit as kyud's user"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('l1', 'l2', 'r1', 'k1', 'k2', 'p1')" 0 20
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_attempts WHERE job_id IN ('l1', 'l2', 'r1', 'k1', 'k2', 'p1')")" \
	"attempts removed with their jobs by retention"
# A workflow, submitted with the submitter's three privileges (the
# triggers write kyu_after and kyu_after_todo as their definer) and
# settled with kyud's: a chain, and a dependent cancelled by a failure.
mariadb --no-defaults -u"${u}_w" -pweb --socket="$KYU_DB_SOCKET" -D "$T_DB" -e "
	INSERT INTO kyu_jobs (id, command) VALUES ('w1', 'true');
	INSERT INTO kyu_jobs (id, command, after) VALUES ('w2', 'true', '[\"w1\"]');
	INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('wf', 'exit 3', 1);
	INSERT INTO kyu_jobs (id, command, after) VALUES ('wc', 'true', '[\"wf\"]')" ||
	fail "the submitter could not INSERT a workflow"
wait_for "SELECT GROUP_CONCAT(id, ' ', status ORDER BY id) FROM kyu_jobs WHERE id LIKE 'w%'" \
	"w1 succeeded,w2 succeeded,wc cancelled,wf failed" 30
assert_eq "1 $KYUD_PID" "$(sql "SELECT CONCAT(COUNT(*), ' ', MAX(pid)) FROM kyu_daemons WHERE live_until > NOW(6)")" \
	"the daemon's row of kyu_daemons"
assert_eq 1 "$(sql "SELECT SUM(succeeded) > 0 FROM kyu_minutes")" "jobs counted in kyu_minutes"
assert_eq "w1 succeeded,w2 succeeded,wf failed" \
	"$(sql "SELECT GROUP_CONCAT(job_id, ' ', outcome ORDER BY job_id) FROM kyu_attempts WHERE job_id LIKE 'w%'")" \
	"the workflow's attempts in kyu_attempts"
stop_kyud
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_daemons")" "rows of kyu_daemons after the stop"
assert_log_lacks 'denied|failed:|failed \\('
