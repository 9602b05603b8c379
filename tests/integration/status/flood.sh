#!/usr/bin/env bash
# A job that floods its status channel (progress lines as fast as it can
# write them, each written on its own) costs the database no more than the
# live writes it would cost anyway: at most one UPDATE of its progress per
# [kyud] live_output interval. The worker stays responsive meanwhile: a
# job beside it in the same worker ends on time, and the heartbeats keep
# the flooding job's lease (4 s here, the shortest that self-fencing
# allows: a worker that missed its heartbeats would kill the job) however
# long it floods.
. "$KYU_SRC/tests/lib.sh"

# Each UPDATE that changes a running row's progress, by the database
# clock (one NOW(6) per statement).
sql "CREATE TABLE progress_writes (id VARCHAR(255) NOT NULL, at DATETIME(6) NOT NULL)"
sql "CREATE TRIGGER progress_writes_seen AFTER UPDATE ON kyu_jobs FOR EACH ROW
       INSERT INTO progress_writes SELECT NEW.id, NOW(6) FROM DUAL
       WHERE OLD.status = 'running' AND NEW.status = 'running'
         AND NOT (NEW.progress <=> OLD.progress AND NEW.progress_note <=> OLD.progress_note)"

start_kyud kyud.workers=1 kyud.slots=4 kyud.live_output=1 kyud.lease=4
S='>&"$KYU_STATUS_FD"'
# About 5 s of lines (longer than the lease), each its own write (fflush), then a last one.
flood="timeout 5 awk 'BEGIN { for (;;) { i++; printf \"progress %d line %d\\\\n\", i % 101, i; fflush() } }' $S;
       echo 'progress 77 done' $S; echo flooded"
# Claimed together: the job beside sleeps a second while the other floods
# for five.
sql "INSERT INTO kyu_jobs (id, command) VALUES ('flood', '$(sed "s/'/''/g" <<<"$flood")'), ('beside', 'sleep 1')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2 60
assert_eq "succeeded 77 done" "$(sql "SELECT CONCAT_WS(' ', status, progress, progress_note) FROM kyu_jobs WHERE id = 'flood'")" \
	"the flooding job: status and last progress"
assert_eq 1 "$(sql "SELECT output = 'flooded\n' AND error IS NULL AND attempts = 1 FROM kyu_jobs WHERE id = 'flood'")" \
	"the flooding job: one attempt, its output, no error"
# On time: a worker stuck reading the flood would reap and record the job
# beside only once the flood ended.
read -r beside order <<<"$(sql "SELECT b.duration, b.finished_at < f.finished_at FROM kyu_jobs b, kyu_jobs f
                               WHERE b.id = 'beside' AND f.id = 'flood'")"
echo "the job beside: $beside s for sleep 1"
assert_eq 1 "$order" "the job beside (sleep 1) ended before the flood (5 s)"
assert_log_lacks "lease lost|lease not renewed"

IFS=$'\t' read -r stmts window <<<"$(sql "SELECT COUNT(DISTINCT at),
       TIMESTAMPDIFF(MICROSECOND, MIN(at), MAX(at)) / 1e6 FROM progress_writes WHERE id = 'flood'")"
echo "flood: $stmts progress writes over $window s at live_output = 1"
# One per interval over the window, one for the phase, one for a statement
# that reached the server late.
max_stmts=$(awk -v w="$window" 'BEGIN { printf "%d", w + 2 }')
[ "$stmts" -ge 1 ] || fail "no progress written while the flooding job ran"
[ "$stmts" -le "$max_stmts" ] || fail "progress writes in $window s: $stmts (at most $max_stmts)"
stop_kyud
echo ok
