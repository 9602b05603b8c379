#!/usr/bin/env bash
# kyu causes: 30 failed jobs whose errors differ only in numbers (over
# queues a and b), 4 retrying ones with the same cause (queue c) and 3
# failed with another error (paths and quotes differing) are two causes,
# 34 and 3 jobs, most first; -q narrows; "kyu causes ID" lists a cause's
# jobs; kyu retry --cause ID retries exactly the 30 failed ones, cancel
# --cause the 4 retrying ones, retry --cause TEXT by the folded text; an
# unknown id is refused with nothing changed. Then 10,000 failed rows:
# the listing's and a cause's retry's wall time (printed, not asserted).
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
counts() { sql "SELECT CONCAT(LEFT(id, 1), ':', status, ':', COUNT(*)) FROM kyu_jobs GROUP BY LEFT(id, 1), status ORDER BY 1" | tr '\n' ' ' | sed 's/ $//'; }

# A third cause whose error the first's LIKE pattern matches too: only
# the fold tells them apart. Inserted first: below the seqs a walk of
# the first cause reaches.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at) VALUES
     ('e-1', 'a', 'false', 'failed', 1, 'exit code 1: fetch of item 5 failed after 3 ms (attempt 1 of 1) then gave up', NOW(6))"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('f-', seq), IF(seq <= 20, 'a', 'b'), 'false', 'failed', 3,
            CONCAT('exit code 1: fetch of item ', seq * 7, ' failed after ', seq * 13, '.5 ms (attempt 3 of 3)\nline ', seq),
            NOW(6) FROM seq_1_to_30"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, run_at)
     SELECT CONCAT('r-', seq), 'c', 'false', 'waiting', 2,
            CONCAT('exit code 1: fetch of item ', seq, ' failed after ', seq, ' ms (attempt 2 of 5)'),
            NOW(6) + INTERVAL 1 HOUR FROM seq_1_to_4"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('d-', seq), 'a', 'false', 'failed', 1,
            CONCAT('exit code 2: cannot write ''/srv/out/', seq, '.png'': disk \"vol', seq, '\" full'), NOW(6)
     FROM seq_1_to_3"
# Not failures: a cancelled job's error, a fresh waiting job, a success.
sql "INSERT INTO kyu_jobs (id, queue, command, status, error) VALUES
     ('x-1', 'a', 'true', 'cancelled', 'exit code 1: fetch of item 1 failed after 1 ms (attempt 1 of 3)'),
     ('x-2', 'a', 'true', 'waiting', NULL), ('x-3', 'a', 'true', 'succeeded', NULL)"
before="d:failed:3 e:failed:1 f:failed:30 r:waiting:4 x:cancelled:1 x:succeeded:1 x:waiting:1"
assert_eq "$before" "$(counts)" "the rows"

kyu causes >"$T_DIR/out" 2>"$T_DIR/err" || fail "kyu causes: $(cat "$T_DIR/err")"
cat "$T_DIR/out"
assert_eq 4 "$(wc -l <"$T_DIR/out")" "a header and three causes"
assert_eq "cause	failed	retrying	first	last	queues	text" "$(head -1 "$T_DIR/out")" "the header"
row1=$(sed -n 2p "$T_DIR/out")
row2=$(sed -n 3p "$T_DIR/out")
assert_eq "30	4	a,b,c	exit code 1: fetch of item <n> failed after <n> ms (attempt <n> of <n>)" \
	"$(cut -f2,3,6,7 <<<"$row1")" "the first cause: 30 failed, 4 retrying"
assert_eq "3	0	a	exit code 2: cannot write '<s>': disk \"<s>\" full" \
	"$(cut -f2,3,6,7 <<<"$row2")" "the second cause: 3 failed"
id1=$(cut -f1 <<<"$row1")
id2=$(cut -f1 <<<"$row2")
[[ $id1 =~ ^[0-9a-f]{8}$ && $id2 =~ ^[0-9a-f]{8}$ && $id1 != "$id2" ]] || fail "cause ids: '$id1' '$id2'"

out=$(kyu causes -q b 2>"$T_DIR/err") || fail "kyu causes -q b: $(cat "$T_DIR/err")"
assert_eq "$id1	10	0" "$(sed -n 2p <<<"$out" | cut -f1-3)" "-q b: queue b's 10 of the first cause"
assert_eq 2 "$(wc -l <<<"$out")" "-q b: one cause"

out=$(kyu causes "$id2" 2>"$T_DIR/err") || fail "kyu causes ID: $(cat "$T_DIR/err")"
assert_eq "d-1 d-2 d-3" "$(tail -n +2 <<<"$out" | cut -f1 | sort | tr '\n' ' ' | sed 's/ $//')" "kyu causes ID: its jobs"
assert_eq "a	failed" "$(sed -n 2p <<<"$out" | cut -f2,3)" "kyu causes ID: queue and status"

rc=0
kyu retry --cause deadbeef --yes </dev/null >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "an unknown cause: exit status"
grep -qF "no cause deadbeef among the failed and retrying jobs" "$T_DIR/err" || fail "unknown cause: $(cat "$T_DIR/err")"
rc=0
kyu causes -x >/dev/null 2>&1 || rc=$?
assert_eq 64 "$rc" "kyu causes -x: a usage error"
rc=0
kyu retry --cause "$id1" </dev/null >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "no terminal, no --yes"
grep -qF "30 jobs match; nothing done" "$T_DIR/err" || fail "the count asked for: $(cat "$T_DIR/err")"
assert_eq "$before" "$(counts)" "nothing changed yet"

out=$(kyu retry --cause "$id1" --yes </dev/null 2>"$T_DIR/err") || fail "retry --cause: $(cat "$T_DIR/err")"
assert_eq "retrying 30 jobs" "$out" "retry --cause ID"
assert_eq "d:failed:3 e:failed:1 f:waiting:30 r:waiting:4 x:cancelled:1 x:succeeded:1 x:waiting:1" "$(counts)" \
	"exactly the 30 failed ones retried"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'f-%' AND (attempts <> 0 OR error IS NOT NULL)")" \
	"retried as one retry does"
assert_eq 4 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'r-%' AND attempts = 2")" "the retrying ones untouched"

out=$(kyu cancel --cause "$id1" --yes </dev/null 2>"$T_DIR/err") || fail "cancel --cause: $(cat "$T_DIR/err")"
assert_eq "cancelled 4 jobs" "$out" "cancel --cause ID: its retrying jobs"
assert_eq "d:failed:3 e:failed:1 f:waiting:30 r:cancelled:4 x:cancelled:1 x:succeeded:1 x:waiting:1" "$(counts)" \
	"exactly the 4 retrying ones cancelled"

# By its text, as printed or as one of its raw lines.
out=$(kyu retry --cause "exit code 2: cannot write '/tmp/x.png': disk \"sdb\" full" --yes </dev/null 2>"$T_DIR/err") ||
	fail "retry --cause TEXT: $(cat "$T_DIR/err")"
assert_eq "retrying 3 jobs" "$out" "retry --cause TEXT"
assert_eq "d:waiting:3 e:failed:1 f:waiting:30 r:cancelled:4 x:cancelled:1 x:succeeded:1 x:waiting:1" "$(counts)" \
	"exactly the 3 retried"
out=$(kyu causes 2>"$T_DIR/err")
assert_eq 2 "$(wc -l <<<"$out")" "one cause left"
assert_eq "1	0	a	exit code 1: fetch of item <n> failed after <n> ms (attempt <n> of <n>) then gave up" \
	"$(sed -n 2p <<<"$out" | cut -f2,3,6,7)" "the third cause, left alone"

# 10,000 failed rows: 5 causes, every line distinct.
sql "DELETE FROM kyu_jobs"
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, finished_at)
     SELECT CONCAT('m-', seq), CONCAT('q', seq % 4), 'false', 'failed', 1,
            CONCAT('exit code 1: step ', seq % 5, ' of job ', seq, ' failed at 0x', HEX(seq * 7919), ': ', REPEAT('x', seq % 5)),
            NOW(6) - INTERVAL seq SECOND FROM seq_1_to_10000"
t0=$(date +%s%N)
out=$(kyu causes 2>"$T_DIR/err") || fail "kyu causes, 10,000 rows: $(cat "$T_DIR/err")"
t1=$(date +%s%N)
assert_eq 6 "$(wc -l <<<"$out")" "10,000 rows: five causes"
assert_eq "2000 2000 2000 2000 2000" "$(tail -n +2 <<<"$out" | cut -f2 | tr '\n' ' ' | sed 's/ $//')" "2,000 each"
id=$(sed -n 2p <<<"$out" | cut -f1)
out=$(kyu retry --cause "$id" --yes </dev/null 2>"$T_DIR/err") || fail "retry --cause, 10,000 rows: $(cat "$T_DIR/err")"
t2=$(date +%s%N)
assert_eq "retrying 2,000 jobs" "$out" "retry one cause of 10,000 rows"
echo "10,000 failed rows: kyu causes $(((t1 - t0) / 1000000)) ms, kyu retry --cause (2,000 of them) $(((t2 - t1) / 1000000)) ms"
echo ok
