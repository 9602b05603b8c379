#!/usr/bin/env bash
# kyu list's filters: --since and --until on the time a row last changed,
# --search in ids, commands, errors and output (its % and _ literal), with
# -q and -s; bad times and an empty search exit 64; a search bounded by
# LIMIT ROWS EXAMINED (--scan) says on stderr where it stopped.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" --raw "$@"; }
ids() { kyu list -n 100 "$@" 2>"$T_DIR/err" | awk 'NR > 1 {print $1}' | tr '\n' ' ' | sed 's/ $//'; }

sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, error, output, finished_at, updated_at) VALUES
     ('old-1', 'mail', 'send', 'failed', 1, 'smtp refused', 'x', NOW(6), '2026-01-01 10:00:00'),
     ('new-1', 'mail', 'send', 'failed', 1, 'disk 50% full', 'x', NOW(6), '2026-01-02 10:00:00'),
     ('new-2', 'billing', 'charge', 'failed', 1, 'exited 500', 'card declined', NOW(6), '2026-01-02 11:00:00'),
     ('ok-1', 'billing', 'charge', 'succeeded', 1, NULL, 'receipt sent', NOW(6), '2026-01-02 12:00:00')"

assert_eq "ok-1 new-2 new-1" "$(ids --since 2026-01-02)" "--since"
assert_eq "old-1" "$(ids --until '2026-01-02 00:00')" "--until"
assert_eq "new-2 new-1" "$(ids --since 2026-01-02 --until '2026-01-02 11:30:00' -s failed)" "--since, --until and -s"
assert_eq "new-1" "$(ids --search '50%')" "--search, % literal"
assert_eq "new-2" "$(ids --search declined)" "--search in the output"
assert_eq "ok-1 new-2" "$(ids --search charge)" "--search in the command"
assert_eq "new-1 old-1" "$(ids --search send -q mail)" "--search with -q"
assert_eq "old-1" "$(ids --search old-)" "--search in the id"
assert_eq "" "$(ids --search nowhere)" "--search that finds nothing"

expect_usage() { # WHAT TEXT ARGS...
	local what=$1 text=$2 rc=0
	shift 2
	kyu "$@" >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
	assert_eq 64 "$rc" "$what: exit status"
	grep -qF -- "$text" "$T_DIR/err" || fail "$what: stderr lacks '$text': $(cat "$T_DIR/err")"
}
expect_usage "--since yesterday" "--since: 'yesterday' is not a time" list --since yesterday
expect_usage "--until with a quote" "--until: '2026-01-01'' is not a time" list --until "2026-01-01'"
expect_usage "--search ''" "--search: nothing to search for" list --search ''

# Past the bound, what was found and where it stopped.
sql "INSERT INTO kyu_jobs (id, queue, command, status, attempts, finished_at)
     SELECT CONCAT('bulk-', seq), 'bulk', 'true', 'succeeded', 1, NOW(6) FROM seq_1_to_1010"
kyu list --search old- --scan 1000 >"$T_DIR/out" 2>"$T_DIR/err"
grep -q "stopped after examining 1000 rows" "$T_DIR/err" || fail "no word of the bound: $(cat "$T_DIR/err")"
assert_eq "old-1" "$(ids --search old- --scan 2000)" "--scan more"
expect_usage "--scan 0" "--scan: '0' is not a whole number" list --scan 0
echo ok
