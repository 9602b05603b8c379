#!/usr/bin/env bash
# The directory read that begins the fan (notes/DESIGN.md, "Many queues:
# the fan"): past the walk's 32 names it stops at the 33rd due queue the
# fan would serve instead of reading every queue's rows (the server's slow
# log: Rows_sent and Rows_examined of the directory's statement).
# - 70 queues, 10 of them due, the rest only tomorrow: too few due for the
#   fan, so the directory is read whole (the 60 queues due tomorrow at
#   least) and no fan begins;
# - then 100 queues of 20 due jobs and a paused queue of 20,000: the
#   directory that begins the fan names 33 queues and the paused one, and
#   reads far fewer rows than the 22,000 waiting (a whole directory reads
#   them all); the paused queue's jobs stay waiting, every other job runs
#   once.
. "$KYU_SRC/tests/lib.sh"

private_db_start
slow=$T_DIR/slow.log
root_sql -e "SET GLOBAL slow_query_log_file = '$slow'; SET GLOBAL long_query_time = 0;
             SET GLOBAL slow_query_log = 1"

# The directory statements logged since line $1 of the slow log: "sent
# examined" per line.
dir_reads() {
	tail -n +"$1" "$slow" | awk '
		/^# Query_time:/ { for (i = 1; i <= NF; i++) {
			if ($i == "Rows_sent:") s = $(i + 1); if ($i == "Rows_examined:") e = $(i + 1) } }
		/^BEGIN NOT ATOMIC DECLARE q, p / { print s, e }'
}

sql "INSERT INTO kyu_jobs (id, queue, argv, run_at)
     SELECT CONCAT('f', q.seq, '-', s.seq), CONCAT('f', LPAD(q.seq, 2, '0')), '[\"true\"]',
            NOW(6) + INTERVAL 1 DAY FROM seq_1_to_60 AS q, seq_1_to_5 AS s"
sql "INSERT INTO kyu_jobs (id, queue, argv)
     SELECT CONCAT('d', q.seq, '-', s.seq), CONCAT('d', LPAD(q.seq, 2, '0')), '[\"true\"]'
     FROM seq_1_to_10 AS q, seq_1_to_5 AS s"
start_kyud kyud.workers=2 kyud.slots=4 kyud.lease=60
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 50 60
stop_kyud
dir_reads 1 >"$T_DIR/few"
echo "directory reads with 10 of 70 queues due (sent examined):" $(sort -n "$T_DIR/few" | uniq -c | tail -n 3)
[ -s "$T_DIR/few" ] || fail "no directory read in the server's slow log ($slow)"
# At least the 60 queues due tomorrow (a due queue whose jobs all ended
# has left it); one cut short for the fan names at most 33.
awk '$1 >= 60 { n++ } END { exit !n }' "$T_DIR/few" ||
	fail "no directory read named the 60 queues due tomorrow with only 10 due (sent: $(cut -d' ' -f1 "$T_DIR/few" | sort -n | uniq | tr '\n' ' '))"
if grep -q "claims take one job of each in turn" "$KYUD_LOG"; then
	fail "the fan began with 10 queues due"
fi

sql "DELETE FROM kyu_jobs WHERE queue LIKE 'f%'"
sql "INSERT INTO kyu_queues (name, paused) VALUES ('zz-paused', 1)"
sql "INSERT INTO kyu_jobs (id, queue, argv)
     SELECT CONCAT('held', seq), 'zz-paused', '[\"true\"]' FROM seq_1_to_20000"
sql "INSERT INTO kyu_jobs (id, queue, argv)
     SELECT CONCAT('m', seq), CONCAT('m', LPAD((seq - 1) DIV 20, 3, '0')), '[\"true\"]'
     FROM seq_1_to_2000"
from=$(($(wc -l <"$slow") + 1))
start_kyud kyud.workers=2 kyud.slots=8 kyud.prefetch=64 kyud.lease=60
wait_progress "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2050 60
stop_kyud
dir_reads "$from" >"$T_DIR/many"
echo "directory reads with 100 queues due (sent examined):" $(sort -n "$T_DIR/many" | uniq -c | tail -n 3)
grep -q "claims take one job of each in turn" "$KYUD_LOG" || fail "the fan was not begun (log)"
# 33 queues the fan serves and the paused one; none read every waiting row.
awk '$1 == 34 { n++ } END { exit !n }' "$T_DIR/many" ||
	fail "no directory read stopped at 33 due queues and the paused one"
awk '$1 > 33 && $2 >= 10000 { print; bad = 1 } END { exit bad }' "$T_DIR/many" >"$T_DIR/whole" ||
	fail "a directory read of many queues examined as many rows as a whole one: $(head -n 3 "$T_DIR/whole")"
assert_eq "20000	0" "$(sql "SELECT (SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'zz-paused' AND status = 'waiting'),
                                (SELECT COUNT(*) FROM kyu_jobs WHERE attempts <> 1 AND queue <> 'zz-paused')")" \
	"the paused queue's waiting jobs; jobs that ran other than once"
root_sql -e "SET GLOBAL slow_query_log = 0; SET GLOBAL long_query_time = 10"
assert_no_worker_death
