#!/usr/bin/env bash
# What a row holds cannot forge rows or drive the operator's terminal
# (issue 25, item 13):
# - kyu list and kyu show in a pipe: a tab or newline in a value prints as
#   \t or \n, so each row is one line with its fields, and each column of
#   kyu show one line (a forged "status: succeeded" line stays inside the
#   error's line); a backslash prints as \\;
# - on a terminal (a pty), no escape sequence reaches it: ESC prints as \e,
#   other control characters and bytes that are not UTF-8 as \xNN;
# - --raw prints the bytes as stored.
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
command -v script >/dev/null || { echo "script(1) not installed: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }

id=$'forged\tqueue\nfake-id'
kyu submit -i "$id" -s $'echo \\hi\t\x1b[2J' >/dev/null || fail "submit of the tabbed id failed"
# An error with a colour, a title change and a forged line; output that is
# not UTF-8.
sql "UPDATE kyu_jobs SET
       error = CONCAT('bad', CHAR(27 USING utf8mb4), '[31mred', CHAR(10 USING utf8mb4),
                      '      status: succeeded'),
       output = CONCAT('o', CHAR(27), ']0;owned', CHAR(7), 0xE9)
     WHERE seq = (SELECT MAX(seq) FROM kyu_jobs)"

# ---- a pipe
kyu list >"$T_DIR/list" || fail "kyu list failed"
assert_eq 2 "$(wc -l <"$T_DIR/list")" "lines of kyu list (header and one row): $(cat -A "$T_DIR/list")"
assert_eq 9 "$(awk -F'\t' 'NR == 2 { print NF }' "$T_DIR/list")" "fields of the row of kyu list"
assert_eq 'forged\tqueue\nfake-id' "$(awk -F'\t' 'NR == 2 { print $1 }' "$T_DIR/list")" "the id in kyu list"

kyu show "$id" >"$T_DIR/show" || fail "kyu show failed"
assert_eq 30 "$(wc -l <"$T_DIR/show")" "lines of kyu show (one per column): $(cat -A "$T_DIR/show")"
assert_eq 1 "$(grep -c '^ *status:' "$T_DIR/show")" "status lines of kyu show"
grep -qxF '          id: forged\tqueue\nfake-id' "$T_DIR/show" || fail "kyu show: id line: $(cat -A "$T_DIR/show")"
grep -qF 'echo \\hi\t' "$T_DIR/show" || fail "kyu show: command line: $(cat -A "$T_DIR/show")"

# ---- a terminal: script(1) gives kyu a pty; it turns \n into \r\n.
# script runs the command with $SHELL, which may be dash (CI runs as root
# with SHELL=/bin/sh): the arguments travel in the environment, not as
# bash's $'...' quoting.
export KYU_ESC_BIN="$KYU" KYU_ESC_INI="$T_DIR/kyu.ini" KYU_ESC_ID="$id"
script -qec '"$KYU_ESC_BIN" -c "$KYU_ESC_INI" show "$KYU_ESC_ID"' /dev/null >"$T_DIR/tty" ||
	fail "kyu show on a pty failed: $(cat -A "$T_DIR/tty")"
tr -d '\r' <"$T_DIR/tty" >"$T_DIR/tty.txt"
assert_eq 0 "$(tr -cd '\033\007' <"$T_DIR/tty.txt" | wc -c)" "ESC and BEL bytes that reached the terminal"
grep -qF '       error: bad\e[31mred\n      status: succeeded' "$T_DIR/tty.txt" ||
	fail "kyu show on a pty: error line: $(cat -A "$T_DIR/tty.txt")"
# The table form (a terminal's): the output as text under a rule, escaped.
grep -A1 -- '── output ─' "$T_DIR/tty.txt" | grep -qxF 'o\e]0;owned\x07\xe9' ||
	fail "kyu show on a pty: output line: $(cat -A "$T_DIR/tty.txt")"
script -qec '"$KYU_ESC_BIN" -c "$KYU_ESC_INI" --format tsv show "$KYU_ESC_ID"' /dev/null >"$T_DIR/tty" ||
	fail "kyu --format tsv show on a pty failed: $(cat -A "$T_DIR/tty")"
tr -d '\r' <"$T_DIR/tty" >"$T_DIR/tty.txt"
assert_eq 0 "$(tr -cd '\033\007' <"$T_DIR/tty.txt" | wc -c)" "ESC and BEL bytes that reached the terminal (tsv)"
grep -qxF '      output: o\e]0;owned\x07\xe9' "$T_DIR/tty.txt" ||
	fail "kyu --format tsv show on a pty: output line: $(cat -A "$T_DIR/tty.txt")"
script -qec '"$KYU_ESC_BIN" -c "$KYU_ESC_INI" list' /dev/null >"$T_DIR/tty" ||
	fail "kyu list on a pty failed"
assert_eq 0 "$(tr -cd '\033' <"$T_DIR/tty" | wc -c)" "ESC bytes kyu list sent to the terminal"
assert_eq 2 "$(tr -d '\r' <"$T_DIR/tty" | wc -l)" "lines of kyu list on a pty"

# ---- --raw: as stored.
kyu --raw show "$id" >"$T_DIR/raw" || fail "kyu --raw show failed"
assert_eq 2 "$(grep -c '^ *status:' "$T_DIR/raw")" "status lines of kyu --raw show (the forged one too)"
assert_eq 3 "$(tr -cd '\033' <"$T_DIR/raw" | wc -c)" "ESC bytes of kyu --raw show"
kyu --raw list >"$T_DIR/raw" || fail "kyu --raw list failed"
assert_eq 4 "$(wc -l <"$T_DIR/raw")" "lines of kyu --raw list (the newlines of the id and of the error as they are)"

# ---- kyu retry: the id it echoes and the unique key of its refusal come
# from the user and from rows: escaped too.
esc_id=$'r\x1b[31m1'
esc_key=$'k\x1b]0;owned\x07'
sql "INSERT INTO kyu_jobs (id, command, status, unique_key) VALUES
	('$(printf '%s' "$esc_id" | sed "s/'/''/g")', 'true', 'failed', '$(printf '%s' "$esc_key" | sed "s/'/''/g")'),
	('holder', 'true', 'waiting', '$(printf '%s' "$esc_key" | sed "s/'/''/g")')" ||
	fail "inserting the retry rows failed"
kyu retry "$esc_id" >"$T_DIR/retry.out" 2>"$T_DIR/retry.err" && fail "retry of a job whose unique key is held succeeded"
assert_eq 0 "$(cat "$T_DIR/retry.out" "$T_DIR/retry.err" | tr -cd '\033\007' | wc -c)" \
	"ESC and BEL bytes of kyu retry's refusal: $(cat -A "$T_DIR/retry.err")"
grep -qF 'r\e[31m1' "$T_DIR/retry.err" || fail "kyu retry's refusal does not name the id escaped: $(cat -A "$T_DIR/retry.err")"
sql "DELETE FROM kyu_jobs WHERE id = 'holder'"
kyu retry "$esc_id" >"$T_DIR/retry.out" 2>"$T_DIR/retry.err" || fail "retry failed: $(cat "$T_DIR/retry.err")"
assert_eq 0 "$(tr -cd '\033' <"$T_DIR/retry.out" | wc -c)" "ESC bytes of kyu retry's answer: $(cat -A "$T_DIR/retry.out")"
