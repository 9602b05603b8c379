#!/usr/bin/env bash
# Step 7 online: a database of version 6 (the steps' files 001-006, loaded
# as an operator would with the mariadb client), with kyud running on it and
# a submitter inserting jobs one by one, is brought to version 7 by `kyu
# schema upgrade`: no INSERT fails meanwhile, every job runs, the kyud of
# before goes on, and then the checks refuse a bad argv with 31004, NULL is
# the default, and MAX(kyu_queues.updated_at) is read from the new index.
. "$KYU_SRC/tests/lib.sh"
[ -n "${KYU:-}" ] || { echo "SKIP: kyu not built"; exit 77; }

sql "DROP TABLE kyu_jobs, kyu_queues, kyu_queue_starts, kyu_schedules, kyu_locks, kyu_meta, kyu_daemons, kyu_minutes,
     kyu_after, kyu_after_todo, kyu_attempts; DROP PROCEDURE kyu_settle"
for f in "$KYU_SRC"/sql/upgrade/00[1-6]-*.sql; do
	root_sql -D "$T_DB" <"$f" || fail "loading $f"
done
assert_eq "schema_compat 1,schema_version 6" "$(sql "SELECT GROUP_CONCAT(name, ' ', value ORDER BY name) FROM kyu_meta")" \
	"kyu_meta before the upgrade"
# Version 6 took what version 7 refuses.
sql "INSERT INTO kyu_jobs (id, argv, run_at) VALUES ('v6-array', 'Array', NOW(6) + INTERVAL 1 DAY)"
sql "INSERT INTO kyu_queues (name, weight) VALUES ('q1', 1), ('q2', 2)"

start_kyud kyud.workers=2
# The submitter: one INSERT per client, until told to stop; each one's
# outcome in a file of its own.
mkdir "$T_DIR/ins"
(
	i=0
	while [ ! -e "$T_DIR/stop" ]; do
		i=$((i + 1))
		if out=$(sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('w$i', 'q$((i % 2 + 1))', 'true')" 2>&1); then
			echo ok >"$T_DIR/ins/$i"
		else
			echo "$out" >"$T_DIR/ins/$i"
		fi
	done
) &
writer=$!
inserted() { [ "$(find "$T_DIR/ins" -type f | wc -l)" -ge "$1" ]; }
wait_until 30 "10 INSERTs" inserted 10
write_ini "$T_DIR/kyu.ini"
"$KYU" -c "$T_DIR/kyu.ini" schema upgrade -w 30 >"$T_DIR/upgrade" 2>&1 || fail "kyu schema upgrade: $(cat "$T_DIR/upgrade")"
before=$(find "$T_DIR/ins" -type f | wc -l)
wait_until 30 "10 INSERTs after the upgrade" inserted $((before + 10))
touch "$T_DIR/stop"
wait "$writer"
assert_eq "step 007-checks: applying... done
step 008-zones-wait: applying... done
step 009-daemon-slots: applying... done
step 010-fan: applying... done
step 011-names-seq: applying... done
schema is now at version 11" "$(cat "$T_DIR/upgrade")" "the upgrade's output"
n=$(find "$T_DIR/ins" -type f | wc -l)
assert_eq "" "$(grep -Lx ok "$T_DIR"/ins/* | head -n 3 | xargs -r cat)" "INSERTs that failed while the upgrade ran"
echo "$n INSERTs, $before of them before the upgrade ended"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'w%' AND status = 'succeeded'" "$n" 60

# The checks of version 7 on the upgraded table, the daemon still running.
if out=$(sql "INSERT INTO kyu_jobs (id, argv) VALUES ('v7-array', 'Array')" 2>&1); then
	fail "version 7 took argv 'Array'"
fi
[[ $out == *"ERROR 31004 (KYU04)"*"kyu: argv of job v7-array is not a non-empty JSON array of strings"* ]] ||
	fail "argv 'Array' after the upgrade: $out"
sql "INSERT INTO kyu_jobs (id, command, run_at, priority) VALUES ('nulls', 'true', NULL, NULL)"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'nulls'" succeeded 30
stop_kyud
assert_log_lacks 'failed:'
# The row version 6 took stays as it was (the check is at INSERT only).
assert_eq "Array" "$(sql "SELECT argv FROM kyu_jobs WHERE id = 'v6-array'")" "the row inserted at version 6"
assert_eq "kyu_queues_updated updated_at" \
	"$(sql "SELECT CONCAT_WS(' ', INDEX_NAME, COLUMN_NAME) FROM information_schema.STATISTICS
	        WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kyu_queues' AND INDEX_NAME = 'kyu_queues_updated'")" \
	"the index of kyu_queues.updated_at"
assert_eq "Select tables optimized away" "$(sql "EXPLAIN SELECT MAX(updated_at) FROM kyu_queues" | cut -f 10)" \
	"how MAX(updated_at) of kyu_queues is read"
