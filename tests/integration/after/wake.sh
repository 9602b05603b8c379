#!/usr/bin/env bash
# Dependents move on within seconds whoever ends their upstream, with the
# poll out of the picture (poll_interval 3600): kyud ending a job settles
# by itself; a plain UPDATE that cancels or retries an upstream, and a
# plain INSERT of a job whose upstreams are already running, reach kyud
# through the trigger of sql/notify.sql on kyu_after_todo (an "any queue"
# wake-up). The UDF must be in the server's plugin directory: this test
# runs its own mariadbd. Skipped (77) when the plugin is not built.
. "$KYU_SRC/tests/lib.sh"

udf_require
port=$(free_udp_port)
udf_db_start '' "127.0.0.1:$port"

# A bound for a loaded machine; a poll could not act before 3,240 s.
BOUND=30
start_kyud kyud.workers=2 kyud.poll_interval=3600 kyud.listen="127.0.0.1:$port"
wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr IS NOT NULL" 1 30

# ---- a plain UPDATE cancels an upstream that waits for its run_at: its
# dependent is cancelled.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('up', 'true', NOW(6) + INTERVAL 1 HOUR);
     INSERT INTO kyu_jobs (id, command, after) VALUES ('down', 'touch $T_DIR/down', '[\"up\"]')"
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'up'"
wait_for "SELECT CONCAT(status, ' ', cancelled_by) FROM kyu_jobs WHERE id = 'down'" "cancelled up" $BOUND

# ---- the documented retry of it, now due: it runs, its dependent is
# opened again and runs after it.
sql "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(6), attempts = 0, error = NULL WHERE id = 'up'"
wait_for "SELECT GROUP_CONCAT(status ORDER BY id) FROM kyu_jobs WHERE id IN ('down', 'up')" \
	succeeded,succeeded $BOUND
[ -e "$T_DIR/down" ] || fail "the re-opened dependent did not run"

# ---- a plain INSERT after a running job: counted at once ('new' item),
# run when it ends.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('slow', 'sleep 2')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'slow'" running $BOUND
sql "INSERT INTO kyu_jobs (id, command, after) VALUES ('next', 'true', '[\"slow\"]')"
wait_for "SELECT after_left FROM kyu_jobs WHERE id = 'next'" 1 $BOUND
wait_for "SELECT status FROM kyu_jobs WHERE id = 'next'" succeeded $BOUND
assert_eq 1 "$(sql "SELECT n.started_at >= s.finished_at FROM kyu_jobs AS n, kyu_jobs AS s
                    WHERE n.id = 'next' AND s.id = 'slow'")" "next started after slow finished"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left"
stop_kyud
