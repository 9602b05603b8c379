#!/usr/bin/env bash
# A dependent inserted while its upstream runs -- the upstream was claimed
# before any job waited for it -- starts when the upstream ends, not at the
# next poll: kyud ended the upstream itself and has to settle its item.
# No wake-ups here (listen off, no UDF), and a poll_interval and a lease
# of 300 s (an idle worker also claims when the earliest due time it read
# comes, and a running job is due at its lease's end), so a start within
# 60 s of the end can only come from kyud's own settle.
. "$KYU_SRC/tests/lib.sh"

# up is there when kyud starts: its start-up claim takes it.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('up', 'while [ ! -e $T_DIR/open ]; do sleep 0.1; done')"
start_kyud kyud.workers=1 kyud.poll_interval=300 kyud.lease=300
wait_for "SELECT status FROM kyu_jobs WHERE id = 'up'" running 30
sql "INSERT INTO kyu_jobs (id, command, after) VALUES ('down', 'true', '[\"up\"]')"
touch "$T_DIR/open"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'up'" succeeded 30
wait_for "SELECT status FROM kyu_jobs WHERE id = 'down'" succeeded 60
assert_eq 1 "$(sql "SELECT d.started_at >= u.finished_at FROM kyu_jobs AS d JOIN kyu_jobs AS u ON u.id = 'up'
                    WHERE d.id = 'down'")" "down started after up finished"
stop_kyud
