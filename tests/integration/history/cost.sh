#!/usr/bin/env bash
# What kyu_attempts costs, and [kyud] history = off and = failures (the
# default):
# - with history = all, a batch of plain successes (N /bin/true jobs)
#   leaves exactly one row per job, outcome succeeded;
# - with the default (failures) the same batch leaves none and costs the
#   statements history = off costs (within the registry's slack);
# - no round trip of its own: the server's general log (one entry per round
#   trip: a multi-statement is one) of kyud's own database user holds no
#   INSERT INTO kyu_attempts but in a round trip that records results (the
#   finish UPDATE, or the bulk UPDATE of plain successes riding a claim),
#   every round trip that records results holds one, and the same jobs
#   cost the same round trips with history on as off (one kyud of one
#   worker and one slot, no prefetch, no poll or heartbeat in the run: the
#   order of its round trips does not depend on timing; a slack of 2 for
#   the registry refresh a loaded machine may let fall inside);
# - with history off kyud writes no row.
# Statements per job (per-user statistics) are printed, not asserted: the
# INSERT is one statement per round trip that records results.
. "$KYU_SRC/tests/lib.sh"

N=200
use_own_db_user
# The general log goes to a table while this test runs: each entry is one
# round trip (COM_QUERY) with its whole text.
root_sql -e "SET GLOBAL log_output = 'TABLE'; SET GLOBAL general_log = 1"
EXIT_HOOKS+=("root_sql -e 'SET GLOBAL general_log = 0'")

# round_trips SINCE LIKE: kyud's round trips (T_USER's) logged after SINCE
# whose text matches LIKE.
round_trips() {
	root_sql -N -B -e "SELECT COUNT(*) FROM mysql.general_log WHERE event_time >= '$1'
		AND command_type = 'Query' AND SUBSTRING_INDEX(user_host, '[', 1) = '$T_USER'
		AND CONVERT(argument USING utf8mb4) LIKE '$2'"
}

# run_batch LABEL HISTORY: N /bin/true jobs run by a kyud with history =
# HISTORY; sets RT (round trips), RT_FIN (those recording results), RT_ATT
# (those with the INSERT), RT_ATT_ALONE (with the INSERT, recording no
# result) and STMTS (statements) of that kyud.
run_batch() {
	local label=$1 since s0
	sql "INSERT INTO kyu_jobs (id, argv) SELECT CONCAT('$label-', seq), '[\"/bin/true\"]' FROM seq_1_to_$N"
	since=$(root_sql -N -B -e "SELECT NOW(6)")
	s0=$(db_statements)
	start_kyud $T_USER_KV kyud.workers=1 kyud.slots=1 kyud.prefetch=0 kyud.poll_interval=3600 \
		kyud.lease=600 kyud.history="$2"
	wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE '$label-%' AND status = 'succeeded'" "$N" 60
	stop_kyud
	STMTS=$(($(db_statements) - s0))
	RT=$(round_trips "$since" '%')
	RT_FIN=$(round_trips "$since" '%UPDATE kyu_jobs SET lease_until = NULL%')
	RT_ATT=$(round_trips "$since" '%INSERT INTO kyu_attempts%')
	RT_ATT_ALONE=$(root_sql -N -B -e "SELECT COUNT(*) FROM mysql.general_log WHERE event_time >= '$since'
		AND command_type = 'Query' AND SUBSTRING_INDEX(user_host, '[', 1) = '$T_USER'
		AND CONVERT(argument USING utf8mb4) LIKE '%INSERT INTO kyu_attempts%'
		AND CONVERT(argument USING utf8mb4) NOT LIKE '%UPDATE kyu_jobs SET lease_until = NULL%'")
	echo "history $2: $N jobs, $RT round trips ($RT_FIN recording results, $RT_ATT with the INSERT), $STMTS statements"
}

run_batch off off
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_attempts")" "rows of kyu_attempts with history off"
assert_eq 0 "$RT_ATT" "round trips with the INSERT, history off"
off_rt=$RT off_stmts=$STMTS

run_batch fail failures
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_attempts")" "rows of kyu_attempts for first attempts that succeeded, history failures"
assert_eq 0 "$RT_ATT" "round trips with the INSERT, history failures"
[ "$RT" -le $((off_rt + 2)) ] && [ "$RT" -ge $((off_rt - 2)) ] ||
	fail "round trips for $N jobs: $RT with history failures, $off_rt without (expected the same, within 2)"
[ "$STMTS" -le $((off_stmts + 4)) ] ||
	fail "statements for $N jobs: $STMTS with history failures, $off_stmts without (expected the same, within 4)"

run_batch on all
assert_eq "$N $N $N" "$(sql "SELECT CONCAT_WS(' ', COUNT(*), COUNT(DISTINCT a.job_seq), SUM(a.outcome = 'succeeded'
	AND a.attempt = 1 AND a.exit_code = 0 AND a.output_tail IS NULL AND a.job_id = j.id))
	FROM kyu_attempts AS a JOIN kyu_jobs AS j ON j.seq = a.job_seq WHERE j.id LIKE 'on-%'")" \
	"rows of kyu_attempts for $N plain successes: one per job, succeeded"
assert_eq 0 "$RT_ATT_ALONE" "round trips with the INSERT that record no result"
assert_eq "$RT_FIN" "$RT_ATT" "round trips recording results that carry the INSERT"
[ "$RT" -le $((off_rt + 2)) ] && [ "$RT" -ge $((off_rt - 2)) ] ||
	fail "round trips for $N jobs: $RT with history, $off_rt without (expected the same, within 2)"
awk -v n="$N" -v r0="$off_rt" -v s0="$off_stmts" -v r1="$RT" -v s1="$STMTS" 'BEGIN {
	printf "per job: %.3f round trips and %.3f statements without history, %.3f and %.3f with\n",
		r0 / n, s0 / n, r1 / n, s1 / n }'
