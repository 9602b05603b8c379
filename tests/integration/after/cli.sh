#!/usr/bin/env bash
# Workflows through kyu (kyu(1)):
# - submit --after (repeatable), --batch, --after-batch, --after-policy fill
#   the columns; an --after naming no job is refused in one line naming it,
#   bad option values are usage errors naming the value;
# - show prints the workflow columns that are set, the upstreams and the
#   downstreams with their statuses (a deleted upstream as "#SEQ
#   (deleted)", the downstreams bounded: the first 20 and how many more);
# - list -s blocked, and the blocked column of kyu queues;
# - cancel and retry settle by themselves: with no kyud running, the
#   cancel of a waiting upstream cancels its dependents to any depth (the
#   'finished' one becomes waiting), and its retry blocks them again;
# - then kyud runs everything, each job after its upstreams;
# - an account that may use kyu_jobs only: show prints the job and a note
#   where it has edges; a settle it may not call, or one that fails,
#   leaves one note and the action's status; without the procedure (a
#   schema from before workflows), no word at all.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
statuses() { sql "SELECT GROUP_CONCAT(id, '=', status ORDER BY id) FROM kyu_jobs WHERE id IN ($1)"; }
settle() { sql "CALL kyu_settle(1000)"; }

# ---- submit: a chain a <- b <- c (c after a and b: --after twice), a
# batch of three with a job after it, and a 'finished' job after c.
kyu submit -i a -s "echo a >> $T_DIR/order" >/dev/null || fail "submit a"
kyu submit -i b --after a -s "echo b >> $T_DIR/order" >/dev/null || fail "submit b"
kyu submit -i c --after a --after b -s "echo c >> $T_DIR/order" >/dev/null || fail "submit c"
for p in p1 p2 p3; do kyu submit -i $p --batch nightly -s true >/dev/null || fail "submit $p"; done
kyu submit -i fan --after-batch nightly -- /bin/true >/dev/null || fail "submit fan"
kyu submit -i fin --after c --after-policy finished -s true >/dev/null || fail "submit fin"
assert_eq '["a","b"]	succeeded' "$(sql "SELECT after, after_policy FROM kyu_jobs WHERE id = 'c'")" "c: after, policy"
assert_eq 'nightly nightly nightly' "$(sql "SELECT GROUP_CONCAT(batch ORDER BY id SEPARATOR ' ') FROM kyu_jobs WHERE id LIKE 'p_'")" \
	"the batch"
assert_eq 'NULL	nightly' "$(sql "SELECT IFNULL(after, 'NULL'), after_batch FROM kyu_jobs WHERE id = 'fan'")" "fan: after, after_batch"
assert_eq '["c"]	finished' "$(sql "SELECT after, after_policy FROM kyu_jobs WHERE id = 'fin'")" "fin: after, policy"
assert_eq "a=waiting,b=blocked,c=blocked,fan=blocked,fin=blocked" "$(statuses "'a','b','c','fan','fin'")" \
	"statuses after submit"

# ---- refusals: an --after naming no job, in one line that names it;
# nothing inserted. Bad values name the value (status 64).
n=$(sql "SELECT COUNT(*) FROM kyu_jobs")
rc=0
kyu submit --after a --after nope -s true >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
[ "$rc" != 0 ] || fail "submit --after nope succeeded"
assert_eq "kyu: submit: not submitted: --after names job 'nope', which does not exist" "$(cat "$T_DIR/err")" \
	"the refusal of --after nope"
assert_eq "" "$(cat "$T_DIR/out")" "stdout of the refused submit"
assert_eq "$n" "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows after the refused submit"
expect_usage() { # WHAT TEXT ARGS...
	local what=$1 text=$2 rc=0
	shift 2
	kyu "$@" >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 64 "$rc" "$what: exit status"
	grep -qF -- "$text" "$T_DIR/err" || fail "$what: stderr lacks '$text': $(cat "$T_DIR/err")"
}
expect_usage "--after-policy whenever" "--after-policy: no policy 'whenever'" \
	submit --after a --after-policy whenever -s true
expect_usage "--after-policy without an upstream" "--after-policy finished: the job runs after nothing" \
	submit --after-policy finished -s true
expect_usage "--after ''" "--after: '' is not a job id" submit --after '' -s true
expect_usage "--batch ''" "--batch: the batch label must not be empty" submit --batch '' -s true
expect_usage "--after-batch ''" "--after-batch: the batch label must not be empty" submit --after-batch '' -s true
expect_usage "list -s blocks" "no status 'blocks'; one of waiting, running, succeeded, failed, cancelled, blocked" \
	list -s blocks
assert_eq "$n" "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows after the usage errors"

# ---- show: the workflow columns that are set, then the upstreams and
# downstreams with their statuses.
kyu show c >"$T_DIR/show" || fail "show c"
grep -qxF '       after: ["a","b"]' "$T_DIR/show" || fail "show c: after: $(cat "$T_DIR/show")"
grep -qxF 'after_policy: succeeded' "$T_DIR/show" || fail "show c: after_policy: $(cat "$T_DIR/show")"
assert_eq $'    upstream: a (waiting)\n    upstream: b (blocked)\n  downstream: fin (blocked)' \
	"$(grep -E '^ *(up|down)stream: ' "$T_DIR/show")" "show c: upstreams and downstreams"
grep -qE '^ *(batch|after_batch|cancelled_by): ' "$T_DIR/show" && fail "show c: unset workflow columns shown: $(cat "$T_DIR/show")"
tail -n 1 "$T_DIR/show" | grep -q '^ *output: ' || fail "show c: output is not the last column: $(cat "$T_DIR/show")"
kyu show a >"$T_DIR/show" || fail "show a"
grep -qE '^ *(after|after_policy|after_batch|upstream): ' "$T_DIR/show" && fail "show a: workflow lines of a job that waits for none: $(cat "$T_DIR/show")"
assert_eq $'  downstream: b (blocked)\n  downstream: c (blocked)' "$(grep 'stream: ' "$T_DIR/show")" "show a: downstreams"
kyu show fan >"$T_DIR/show" || fail "show fan"
assert_eq $' after_batch: nightly\n    upstream: p1 (waiting)\n    upstream: p2 (waiting)\n    upstream: p3 (waiting)' \
	"$(grep -E 'after_batch: |upstream: ' "$T_DIR/show")" "show fan"
grep -qxF '       batch: nightly' <(kyu show p2) || fail "show p2: no batch line"

# The downstreams bounded: 25 of them, the first 20 shown.
kyu submit -i hub -d 3600 -s true >/dev/null || fail "submit hub"
sql "INSERT INTO kyu_jobs (id, command, after) SELECT CONCAT('leaf-', LPAD(seq, 2, '0')), 'true', '[\"hub\"]' FROM seq_1_to_25"
kyu show hub >"$T_DIR/show" || fail "show hub"
assert_eq 21 "$(grep -c '^  downstream: ' "$T_DIR/show")" "show hub: downstream lines"
assert_eq "  downstream: leaf-01 (blocked)" "$(grep -m1 '^  downstream: ' "$T_DIR/show")" "show hub: the first"
assert_eq "  downstream: ... and 5 more" "$(grep '^  downstream: ' "$T_DIR/show" | tail -n 1)" "show hub: the rest"

# A deleted upstream shows as #SEQ.
sql "INSERT INTO kyu_jobs (id, command, status, finished_at) VALUES ('gone', 'true', 'succeeded', NOW(6))"
gone_seq=$(sql "SELECT seq FROM kyu_jobs WHERE id = 'gone'")
kyu submit -i orphan --after gone -s true >/dev/null || fail "submit orphan"
settle
kyu delete gone >/dev/null || fail "delete gone"
kyu show orphan >"$T_DIR/show" || fail "show orphan"
assert_eq "    upstream: #$gone_seq (deleted)" "$(grep 'upstream: ' "$T_DIR/show")" "show orphan"
assert_eq "orphan=waiting" "$(statuses "'orphan'")" "a dependent of a succeeded upstream deleted since"

# ---- list -s blocked, kyu queues' blocked column.
assert_eq "b c fan fin" "$(kyu list -s blocked -n 100 | awk 'NR > 1 && $1 !~ /^leaf-/ {print $1}' | sort | tr '\n' ' ' | sed 's/ $//')" \
	"list -s blocked"
assert_eq "blocked 29" "$(kyu queues | awk -F'\t' 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "blocked") c = i}
	$1 == "default" && c {print $c == "" ? "" : "blocked", $c}')" \
	"kyu queues: the blocked column"

# ---- cancel and retry settle by themselves (no kyud runs). w is not due
# for an hour; w1 after w, w2 after w1, wf after w whatever happens.
kyu submit -i w -d 3600 -s true >/dev/null || fail "submit w"
kyu submit -i w1 --after w -s true >/dev/null || fail "submit w1"
kyu submit -i w2 --after w1 -s true >/dev/null || fail "submit w2"
kyu submit -i wf --after w --after-policy finished -s true >/dev/null || fail "submit wf"
settle # as kyud would have: the edges counted
assert_eq "w=waiting,w1=blocked,w2=blocked,wf=blocked" "$(statuses "'w','w1','w2','wf'")" "before the cancel"
kyu cancel w >"$T_DIR/out" 2>"$T_DIR/err" || fail "cancel w: $(cat "$T_DIR/err")"
assert_eq "cancelled w" "$(cat "$T_DIR/out")" "cancel w: stdout"
assert_eq "" "$(cat "$T_DIR/err")" "cancel w: stderr"
assert_eq "w=cancelled,w1=cancelled,w2=cancelled,wf=waiting" "$(statuses "'w','w1','w2','wf'")" \
	"right after kyu cancel w"
assert_eq "w w1" "$(sql "SELECT GROUP_CONCAT(cancelled_by ORDER BY id SEPARATOR ' ') FROM kyu_jobs WHERE id IN ('w1','w2')")" \
	"cancelled_by of w1, w2"
kyu show w1 >"$T_DIR/show" || fail "show w1"
grep -qxF 'cancelled_by: w' "$T_DIR/show" || fail "show w1: cancelled_by: $(cat "$T_DIR/show")"
assert_eq $'    upstream: w (cancelled)\n  downstream: w2 (cancelled)' "$(grep 'stream: ' "$T_DIR/show")" "show w1"
kyu retry w >"$T_DIR/out" 2>"$T_DIR/err" || fail "retry w: $(cat "$T_DIR/err")"
assert_eq "retrying w" "$(cat "$T_DIR/out")" "retry w: stdout"
assert_eq "" "$(cat "$T_DIR/err")" "retry w: stderr"
assert_eq "w=waiting,w1=blocked,w2=blocked" "$(statuses "'w','w1','w2'")" "right after kyu retry w"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('w1','w2') AND (cancelled_by IS NOT NULL OR error IS NOT NULL)")" \
	"re-opened jobs that kept their cancel"
# A blocked job can be cancelled too.
kyu submit -i bx --after w -s true >/dev/null || fail "submit bx"
kyu cancel bx >/dev/null || fail "cancel of a blocked job"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_after_todo")" "items left after the CLI's settles"

# ---- kyud runs everything, each job after its upstreams.
kyu run-now hub >/dev/null || fail "run-now hub"
start_kyud kyud.workers=2 kyud.slots=4
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status <> 'succeeded' AND id <> 'bx'" 0 60
assert_eq $'a\nb\nc' "$(cat "$T_DIR/order")" "the chain's order"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
                    JOIN kyu_jobs AS u ON u.seq = e.up_seq WHERE d.started_at < u.finished_at
                    AND d.after_policy = 'succeeded'")" "jobs that started before an upstream finished"
stop_kyud

# ---- an account that may use kyu_jobs only: show prints the job and a
# note; cancel is done, the settle it may not call leaves one note.
EXIT_HOOKS+=("root_sql -e \"DROP USER IF EXISTS 'kyut_after_cli'@'localhost'\"")
root_sql <<SQL
DROP USER IF EXISTS 'kyut_after_cli'@'localhost';
CREATE USER 'kyut_after_cli'@'localhost' IDENTIFIED BY 'limited-pw';
GRANT SELECT, INSERT, UPDATE ON $T_DB.kyu_jobs TO 'kyut_after_cli'@'localhost';
SQL
write_ini "$T_DIR/limited.ini" database.user=kyut_after_cli database.password=limited-pw
limited() { "$KYU" -c "$T_DIR/limited.ini" --raw "$@"; }
limited show c >"$T_DIR/out" 2>"$T_DIR/err" || fail "show by an account without kyu_after: $(cat "$T_DIR/err")"
grep -qxF 'after_policy: succeeded' "$T_DIR/out" || fail "show by a limited account: $(cat "$T_DIR/out")"
grep -q '^kyu: note: show: .*not shown: .*denied' "$T_DIR/err" || fail "show by a limited account: stderr: $(cat "$T_DIR/err")"
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('late', 'true', NOW(6) + INTERVAL 1 HOUR)"
limited show late >"$T_DIR/out" 2>"$T_DIR/err" || fail "show late by a limited account"
assert_eq "" "$(cat "$T_DIR/err")" "show by a limited account of a job without edges: stderr"
rc=0
limited cancel late >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq "0 cancelled late" "$rc $(cat "$T_DIR/out")" "cancel by an account that may not call kyu_settle"
assert_eq 1 "$(wc -l <"$T_DIR/err")" "lines on stderr of that cancel"
grep -q "^kyu: note: .*CALL kyu_settle(1000): .*denied" "$T_DIR/err" || fail "the note of that cancel: $(cat "$T_DIR/err")"

# ---- a settle that fails: one note, the action done, status 0.
sql "CREATE OR REPLACE PROCEDURE kyu_settle(IN n INT) SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'settle broken'"
rc=0
kyu delete a >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq "0 deleted a" "$rc $(cat "$T_DIR/out")" "delete with a failing settle"
assert_eq 1 "$(wc -l <"$T_DIR/err")" "lines on stderr with a failing settle"
grep -q '^kyu: note: .*settle broken' "$T_DIR/err" || fail "the note of a failing settle: $(cat "$T_DIR/err")"
# Without the procedure: not a word.
sql "DROP PROCEDURE kyu_settle"
rc=0
kyu delete b >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq "0 deleted b" "$rc $(cat "$T_DIR/out")" "delete without kyu_settle"
assert_eq "" "$(cat "$T_DIR/err")" "stderr of a delete without kyu_settle"
echo ok
