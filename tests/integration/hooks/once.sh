#!/usr/bin/env bash
# Failure hooks are made exactly once (kyu_jobs(7), "Failure hooks") while
# workers are SIGKILLed and the database is killed (kill -9) and restarted:
# 50 failing jobs (2 attempts each) and 10 succeeding ones (50) in queue work,
# whose on_failure hook goes to queue alerts, submitted in waves while a
# loop SIGKILLs a random worker every 0-2 s; halfway through the
# database server is killed and started again (a private server). A job
# whose worker died on its last attempt fails at its next claim ("lease
# expired"): that failure fires its hook too. Afterwards every failing job
# ended failed and has exactly one hook job (ids distinct, in alerts, with
# its id in KYU_FAILED_JOB_ID), the succeeding ones none, and no hook has
# a hook of its own.
. "$KYU_SRC/tests/lib.sh"

WORKER_DEATHS_OK=1 # the ones we kill
private_db_start
sql "INSERT INTO kyu_queues (name, on_failure, on_failure_queue) VALUES ('work', '[\"sleep\", \"0.1\"]', 'alerts')"
start_kyud kyud.workers=3 kyud.lease=4 kyud.fence_margin=1 kyud.heartbeat=1 database.connect_timeout=2 \
	job.max_attempts=2 job.backoff_base=1 job.backoff_cap=1 kyud.log_level=info

: >"$T_DIR/kills"
(
	trap - EXIT
	set +e
	while [ ! -e "$T_DIR/stop-kills" ]; do
		sleep "$((RANDOM % 2)).$((RANDOM % 10))"
		ws=()
		{ read -r -a ws <"/proc/$KYUD_PID/task/$KYUD_PID/children"; } 2>/dev/null
		if [ "${#ws[@]}" -gt 0 ]; then
			w=${ws[RANDOM % ${#ws[@]}]}
			kill -KILL "$w" 2>/dev/null && echo "$w" >>"$T_DIR/kills"
		fi
	done
) &
kill_loop=$!
EXIT_HOOKS+=("touch '$T_DIR/stop-kills'; wait $kill_loop 2>/dev/null")

# Waves of 10 failing and 2 succeeding jobs; the database killed after the
# third.
for wave in 1 2 3 4 5; do
	sql "INSERT INTO kyu_jobs (id, queue, command) SELECT CONCAT('f$wave-', seq), 'work',
	       CONCAT('sleep 0.', seq % 5, '; exit 1') FROM seq_1_to_10;
	     INSERT INTO kyu_jobs (id, queue, command, max_attempts) SELECT CONCAT('s$wave-', seq), 'work', 'sleep 0.2', 50
	       FROM seq_1_to_2"
	sleep 1.5
	if [ "$wave" = 3 ]; then
		pid=$(cat "$PRIVATE_DB_DIR/mysqld.pid")
		kill -KILL "$pid"
		while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
		echo "database killed after wave $wave"
		sleep 2
		private_db_start
	fi
done
touch "$T_DIR/stop-kills"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'work' AND status IN ('succeeded', 'failed')" 60 60
wait "$kill_loop" 2>/dev/null || true
echo "$(wc -l <"$T_DIR/kills") worker(s) SIGKILLed"
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'alerts' AND status IN ('succeeded', 'failed')" \
	"$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'alerts'")" 60

assert_eq "50 10" "$(sql "SELECT CONCAT(SUM(id LIKE 'f%' AND status = 'failed'), ' ', SUM(id LIKE 's%' AND status = 'succeeded'))
                         FROM kyu_jobs WHERE queue = 'work'")" "failed and succeeded jobs of work"
hooks="SELECT JSON_VALUE(env, '\$.KYU_FAILED_JOB_ID') AS failed, queue, id FROM kyu_jobs WHERE id LIKE 'on\\_failure:%'"
assert_eq "" "$(sql "SELECT failed, COUNT(*) FROM ($hooks) AS h GROUP BY failed HAVING COUNT(*) <> 1")" \
	"failed jobs with more or less than one hook"
assert_eq "50 50 50 0" "$(sql "SELECT CONCAT(COUNT(*), ' ', COUNT(DISTINCT id), ' ', SUM(queue = 'alerts'), ' ',
                                 SUM(failed NOT LIKE 'f%')) FROM ($hooks) AS h")" \
	"hooks, distinct ids, in alerts, of anything but a failing job"
assert_eq "" "$(sql "SELECT j.id FROM kyu_jobs AS j WHERE j.queue = 'work' AND j.status = 'failed' AND NOT EXISTS
                    (SELECT 1 FROM kyu_jobs AS h WHERE h.id LIKE 'on\\_failure:%'
                     AND JSON_VALUE(h.env, '\$.KYU_FAILED_JOB_ID') = j.id)")" "failed jobs without a hook"
echo "failures by a lost lease: $(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'work' AND error LIKE 'lease expired%'")"
stop_kyud 60
