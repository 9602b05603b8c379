#!/usr/bin/env bash
# kyu cancel|retry|delete by filter: 3,000 failed rows over two queues;
# retry --queue a --status failed --yes retries exactly queue a's, in
# batches (one UPDATE, one transaction, per 1,000 rows: counted on the
# server for a database user of the test's own); a filter that matches
# nothing says 0; no filter, a status the action does not apply to, and no
# terminal without --yes are refused with nothing changed; delete
# --older-than by age, --error by text.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
use_own_db_user
# shellcheck disable=SC2086
write_ini "$T_DIR/kyu.ini" $T_USER_KV
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
counts() { sql "SELECT CONCAT(queue, ':', status, ':', COUNT(*)) FROM kyu_jobs GROUP BY queue, status ORDER BY queue, status" | tr '\n' ' ' | sed 's/ $//'; }
user_stat() { root_sql -N -B -e "SELECT COALESCE(SUM($1), 0) FROM information_schema.USER_STATISTICS WHERE USER = '$T_USER'"; }

sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('j-', seq), IF(seq <= 2000, 'a', 'b'), 'false', 'failed', 1, 'exited with status 1', NOW(6)
     FROM seq_1_to_3000"
before="a:failed:2000 b:failed:1000"
assert_eq "$before" "$(counts)" "the rows"

expect_refused() { # WHAT STATUS TEXT ARGS...
	local what=$1 want=$2 text=$3 rc=0
	shift 3
	kyu "$@" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq "$want" "$rc" "$what: exit status"
	grep -qF -- "$text" "$T_DIR/err" || fail "$what: stderr lacks '$text': $(cat "$T_DIR/err")"
	assert_eq "$before" "$(counts)" "$what: nothing changed"
}
expect_refused "no filter" 64 "give a job id, or at least one filter" retry
expect_refused "no filter, --yes" 64 "never every job at once" retry --yes
expect_refused "a status retry does not apply to" 64 "retry applies to failed or cancelled jobs, not 'waiting'" \
	retry --status waiting --yes
expect_refused "a bad age" 64 "--older-than: '1 hour' is not an age" delete --older-than '1 hour' --yes
expect_refused "no terminal, no --yes" 64 "2,000 jobs match; nothing done: give --yes" retry --queue a --status failed

out=$(kyu retry --queue nowhere --status failed --yes </dev/null 2>"$T_DIR/err")
assert_eq "retrying 0 jobs: none matches" "$out" "a filter that matches nothing"

u0=$(user_stat UPDATE_COMMANDS)
c0=$(user_stat COMMIT_TRANSACTIONS)
out=$(kyu retry --queue a --status failed --yes </dev/null 2>"$T_DIR/err")
assert_eq "retrying 2,000 jobs" "$out" "retry --queue a"
assert_eq "a:waiting:2000 b:failed:1000" "$(counts)" "exactly queue a's rows retried"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'a' AND (attempts <> 0 OR error IS NOT NULL)")" \
	"retried as one retry does (attempts reset, error cleared)"
u1=$(user_stat UPDATE_COMMANDS)
c1=$(user_stat COMMIT_TRANSACTIONS)
# 2,000 rows by 1,000: two UPDATEs at least, each its own transaction.
[ $((u1 - u0)) -ge 2 ] || fail "UPDATEs sent for 2,000 rows: $((u1 - u0)), expected 2 or more (batches of 1,000)"
[ $((c1 - c0)) -ge 2 ] || fail "transactions committed for 2,000 rows: $((c1 - c0)), expected 2 or more"

# By age: half of queue b last changed two hours ago.
sql "UPDATE kyu_jobs SET updated_at = NOW(6) - INTERVAL 2 HOUR WHERE queue = 'b' AND seq % 2 = 0"
out=$(kyu delete --queue b --older-than 1h --yes </dev/null 2>"$T_DIR/err")
assert_eq "deleted 500 jobs" "$out" "delete --older-than 1h"
assert_eq "a:waiting:2000 b:failed:500" "$(counts)" "only the old rows deleted"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE updated_at < NOW(6) - INTERVAL 1 HOUR")" "no old row left"

# By error text, in every queue; cancel of what waits, by status.
sql "UPDATE kyu_jobs SET error = 'disk 50% full' WHERE queue = 'b' ORDER BY seq LIMIT 3"
out=$(kyu delete --error '50% full' --yes </dev/null 2>"$T_DIR/err")
assert_eq "deleted 3 jobs" "$out" "delete --error (its % literal)"
sql "UPDATE kyu_jobs SET attempts = 1 WHERE queue = 'a' ORDER BY seq LIMIT 10"
out=$(kyu cancel -s retrying --yes </dev/null 2>"$T_DIR/err")
assert_eq "cancelled 10 jobs" "$out" "cancel -s retrying"
out=$(kyu cancel -q a --yes </dev/null 2>"$T_DIR/err")
assert_eq "cancelled 1,990 jobs" "$out" "cancel -q a"
assert_eq "a:cancelled:2000 b:failed:497" "$(counts)" "the rows at the end"
# One job still by its id.
out=$(kyu retry j-1 </dev/null 2>"$T_DIR/err")
assert_eq "retrying j-1" "$out" "retry ID"
echo ok
