#!/usr/bin/env bash
# kyu's forms (issue 41, point 7): for eyes (--format table, a terminal's
# default), for programs (tsv, a pipe's default, unchanged) and JSON
# (--json, every listing and show); and kyu logs [-f], which follows a
# running job's live output until it ends.
# - table: aligned columns cut to $COLUMNS with "…" (never inside a
#   character), "-" for NULL, times to the second with how long ago against
#   the server's clock (not the host's: kyu runs here in a zone 14 h away),
#   sizes and durations with units, show's output as text under a rule;
# - json: one array of objects (show: one object), NULL as null, numbers
#   as numbers;
# - logs -f prints each line once, in order, while the job runs, and exits
#   with how the job ended.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }
# A host zone far from the server's: the "ago" must not move.
table() { TZ=Etc/GMT-14 COLUMNS=${COLS:-100} kyu --format table "$@"; }
# check_lines FILE WIDTH: every line at most WIDTH characters, and UTF-8.
check_lines() {
	python3 - "$1" "$2" <<'PY' || fail "$1: $(cat "$1")"
import sys
text = open(sys.argv[1], 'rb').read().decode('utf-8')  # raises on a cut character
for line in text.splitlines():
    if len(line) > int(sys.argv[2]):
        sys.exit('line of %d characters: %s' % (len(line), line))
PY
}

long=$(printf 'é%.0s' $(seq 1 150))
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, exit_code, run_at, started_at, finished_at,
       duration, cpu_user, cpu_sys, max_rss, error, output) VALUES
     ('done', 'q', 'echo hi', 'succeeded', 1, 0, NOW() - INTERVAL 5 HOUR - INTERVAL 10 MINUTE,
      NOW() - INTERVAL 5 HOUR - INTERVAL 10 MINUTE, NOW() - INTERVAL 5 HOUR - INTERVAL 10 MINUTE,
      0.00466, 0.002, 0.001, 8077312, NULL, 'line one\nline two\n'),
     ('later', 'q', 'echo $long', 'waiting', 0, NULL, NOW() + INTERVAL 2 HOUR + INTERVAL 10 MINUTE,
      NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"

# ---- table
table list >"$T_DIR/list" || fail "kyu --format table list failed"
check_lines "$T_DIR/list" 100
assert_eq 3 "$(wc -l <"$T_DIR/list")" "lines of the table (header and two rows)"
grep -q NULL "$T_DIR/list" && fail "NULL in the table: $(cat "$T_DIR/list")"
grep -q $'\t' "$T_DIR/list" && fail "a tab in the table: $(cat "$T_DIR/list")"
grep -q '^done  *q  *succeeded  *1  *0  .*(5 h ago)' "$T_DIR/list" || fail "the done row: $(cat "$T_DIR/list")"
grep -q '^later .*(in 2 h)  *-  *-  *echo éé*…$' "$T_DIR/list" || fail "the later row (NULLs, cut): $(cat "$T_DIR/list")"
# Aligned: text starts where its header does, numbers end where it ends.
python3 - "$T_DIR/list" <<'PY' || fail "columns not aligned: $(cat "$T_DIR/list")"
import sys
lines = open(sys.argv[1], encoding='utf-8').read().splitlines()
for name in ('queue', 'status', 'run_at'):
    at = lines[0].index(name)
    for l in lines[1:]:
        assert l[at] != ' ' and l[at - 2:at] == '  ', (name, l)
end = lines[0].index('attempts') + len('attempts')
for l in lines[1:]:
    assert l[end - 1] != ' ' and l[end:end + 2] == '  ', ('attempts', l)
PY
COLS=60 table list >"$T_DIR/list60" || fail "kyu list at 60 columns failed"
check_lines "$T_DIR/list60" 60

table show done >"$T_DIR/show" || fail "kyu --format table show failed"
grep -qx '     max_rss: 7.7 MiB' "$T_DIR/show" || fail "show: max_rss: $(cat "$T_DIR/show")"
grep -qx '    duration: 4.7 ms' "$T_DIR/show" || fail "show: duration: $(cat "$T_DIR/show")"
grep -qx '  started_at: -' "$T_DIR/show" && fail "show: a set time as NULL"
grep -qx '       error: -' "$T_DIR/show" || fail "show: NULL as -: $(cat "$T_DIR/show")"
grep -q '^ *finished_at: [0-9-]* [0-9:]* .* (5 h ago)$' "$T_DIR/show" || fail "show: finished_at: $(cat "$T_DIR/show")"
assert_eq "line one|line two" "$(sed -n '/^── output ─*$/,$p' "$T_DIR/show" | sed 1d | paste -sd'|')" \
	"show: the output under its rule"
for c in queues schedules locks daemons stats causes; do
	table "$c" >"$T_DIR/$c" 2>"$T_DIR/$c.err" || fail "kyu --format table $c failed: $(cat "$T_DIR/$c.err")"
	check_lines "$T_DIR/$c" 100
done

# ---- tsv: the rows as they were, piped by default and when asked
kyu list >"$T_DIR/tsv" || fail "kyu list failed"
kyu --format tsv list >"$T_DIR/tsv2" || fail "kyu --format tsv list failed"
cmp -s "$T_DIR/tsv" "$T_DIR/tsv2" || fail "the pipe's default is not tsv"
assert_eq "id queue status attempts exit_code run_at finished_at error what" "$(head -n1 "$T_DIR/tsv" | tr '\t' ' ')" \
	"the tsv header"
assert_eq "NULL NULL" "$(awk -F'\t' '$1 == "later" { print $7, $8 }' "$T_DIR/tsv")" "NULL in the tsv rows"

# ---- json
kyu list --json >"$T_DIR/json" || fail "kyu list --json failed"
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 2, rows
later = [r for r in rows if r["id"] == "later"][0]
assert later["finished_at"] is None and later["error"] is None and later["exit_code"] is None, later
assert rows[0]["attempts"] in (0, 1) and isinstance(rows[1]["attempts"], int), rows
' "$T_DIR/json" || fail "kyu list --json: $(cat "$T_DIR/json")"
kyu --json show done >"$T_DIR/json" || fail "kyu --json show failed"
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["max_rss"] == 8077312 and j["duration"] == 0.00466 and j["error"] is None, j
assert j["output"] == "line one\nline two\n" and j["attempts"] == [] and j["id"] == "done", j
' "$T_DIR/json" || fail "kyu show --json: $(cat "$T_DIR/json")"
for c in queues schedules locks daemons causes "causes -q q" "list -s failed"; do
	# shellcheck disable=SC2086
	kyu $c --format=json >"$T_DIR/json" 2>"$T_DIR/err" || fail "kyu $c --json failed: $(cat "$T_DIR/err")"
	python3 -c 'import json, sys; assert isinstance(json.load(open(sys.argv[1])), list)' "$T_DIR/json" ||
		fail "kyu $c --json is not an array: $(cat "$T_DIR/json")"
done
assert_eq "[]" "$(kyu daemons --json 2>/dev/null | tr -d ' \n')" "kyu daemons --json without daemons"
rc=0
kyu list --format=yaml >/dev/null 2>&1 || rc=$?
assert_eq 64 "$rc" "an unknown form"

# ---- logs
assert_eq "line one|line two" "$(kyu logs done | paste -sd'|')" "kyu logs of an ended job"
rc=0
kyu logs nope 2>/dev/null || rc=$?
assert_eq 1 "$rc" "kyu logs of no job"

start_kyud kyud.workers=1 kyud.live_output=1
# Five lines, then a wait for the test's word, then three more: the first
# five must be printed while the job runs.
id=$(kyu submit -s "for i in 1 2 3 4 5; do echo line \$i; sleep 0.3; done
	while [ ! -e $T_DIR/go ]; do sleep 0.05; done; for i in 6 7 8; do echo line \$i; sleep 0.3; done") ||
	fail "submit failed"
kyu logs -f "$id" >"$T_DIR/follow" 2>"$T_DIR/follow.err" &
follower=$!
wait_until 60 "kyu logs -f to print the first five lines while the job runs" grep -qx 'line 5' "$T_DIR/follow"
assert_eq running "$(sql "SELECT status FROM kyu_jobs WHERE id = '$id'")" "the job while its lines were followed"
# Without -f, the running job's live tail: its lines, not kyud's header.
wait_until 30 "the live tail to hold line 5" sh -c "\"$KYU\" -c \"$T_DIR/kyu.ini\" logs $id | grep -qx 'line 5'"
assert_eq "line 1" "$(kyu logs "$id" | sed -n 1p)" "kyu logs of a running job: its first line"
touch "$T_DIR/go"
rc=0
wait "$follower" || rc=$?
assert_eq 0 "$rc" "kyu logs -f of a job that succeeded (stderr: $(cat "$T_DIR/follow.err"))"
assert_eq "line 1|line 2|line 3|line 4|line 5|line 6|line 7|line 8" "$(paste -sd'|' "$T_DIR/follow")" \
	"kyu logs -f: every line once, in order"

id=$(kyu submit -m 1 -s 'echo a; sleep 1.5; echo b; exit 3') || fail "submit failed"
rc=0
kyu logs -f "$id" >"$T_DIR/follow" 2>"$T_DIR/follow.err" || rc=$?
assert_eq 2 "$rc" "kyu logs -f of a job that failed (stderr: $(cat "$T_DIR/follow.err"))"
assert_eq "a|b" "$(paste -sd'|' "$T_DIR/follow")" "kyu logs -f of the failed job"
echo "forms and logs checked"
