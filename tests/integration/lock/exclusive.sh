#!/usr/bin/env bash
# kyu lock, the exclusion itself (no kyud involved):
# - four concurrent holders of one lock, each three times in a row, never
#   overlap, and all twelve run;
# - a pool of two (--slots 2) with four holders: never more than two at
#   once, and two at once at some point;
# - --wait running out while another holds the lock exits 75 without
#   running the command; so does --wait 0;
# - the command's exit status comes back (3; 128 + signal; 127 not found),
#   the lock is free afterwards, the command gets no descriptor but 0-2;
# - bad arguments exit 64; kyu locks lists the rows.
# shellcheck disable=SC2016 # the commands' \$ expand in their own shell
. "$KYU_SRC/tests/lib.sh"

[ -n "${KYU:-}" ] || { echo "no kyu CLI built" >&2; exit 77; }
write_ini "$T_DIR/kyu.ini"
KYU_CMD=("$KYU" -c "$T_DIR/kyu.ini")
D=$T_DIR/marks
mkdir -p "$D"

# intervals FILE: "ID begin|end SECONDS" lines in, the largest number of
# intervals open at one instant out (an end sorts before a begin of the
# same instant: touching is not overlapping).
max_concurrent() {
	sort -k3,3n -k2,2r "$1" | awk '
		$2 == "begin" { n++; if (n > max) max = n }
		$2 == "end" { n-- }
		END { print max + 0 }'
}

# ---- 1. four holders, one lock
# Each section checks for another's marker (belt), and logs its interval
# (braces): both must show no overlap.
body='for f in "$1"/held.*; do [ -e "$f" ] && echo "$$ saw $f" >>"$1/overlaps"; done
: >"$1/held.$$"
echo "$$ begin $EPOCHREALTIME" >>"$1/intervals"
sleep 0.3
echo "$$ end $EPOCHREALTIME" >>"$1/intervals"
rm "$1/held.$$"'
pids=()
for r in 1 2 3 4; do
	(
		for _ in 1 2 3; do
			# A lease far longer than a section: this part is about the
			# exclusion, and a few seconds' lease could run out under a
			# loaded machine (kyu then rightly stops its command, exit 70).
			"${KYU_CMD[@]}" lock one --wait 120 --ttl 60 -- bash -c "$body" sh "$D" ||
				echo "runner $r: kyu lock exited $?" >>"$D/errors"
		done
	) &
	pids+=($!)
	EXTRA_PIDS="$EXTRA_PIDS $!"
done
for p in "${pids[@]}"; do wait "$p"; done
[ ! -s "$D/errors" ] || fail "$(cat "$D/errors")"
[ ! -e "$D/overlaps" ] || fail "a holder saw another's marker: $(cat "$D/overlaps")"
assert_eq 12 "$(grep -c ' begin ' "$D/intervals")" "sections run under the lock"
assert_eq 12 "$(grep -c ' end ' "$D/intervals")" "sections finished under the lock"
assert_eq 1 "$(max_concurrent "$D/intervals")" "most holders of 'one' at once"
assert_eq "0	NULL" "$(sql "SELECT slot, IFNULL(holder, 'NULL') FROM kyu_locks WHERE name = 'one'")" \
	"the row of 'one' after the last release"
echo "one: 12 sections, never two at once"

# ---- 2. a pool of two, four holders
rm -f "$D"/intervals
# Sections of 3 s: two holders' bash processes overlap even when a loaded
# machine starts one of them a second or two late.
body2='echo "$$ begin $EPOCHREALTIME" >>"$1/intervals"; sleep 3; echo "$$ end $EPOCHREALTIME" >>"$1/intervals"'
pids=()
for r in 1 2 3 4; do
	"${KYU_CMD[@]}" lock pool --slots 2 --wait 120 -- bash -c "$body2" sh "$D" &
	pids+=($!)
	EXTRA_PIDS="$EXTRA_PIDS $!"
done
for p in "${pids[@]}"; do wait "$p" || fail "a holder of the pool exited $?"; done
assert_eq 4 "$(grep -c ' end ' "$D/intervals")" "sections run in the pool"
assert_eq 2 "$(max_concurrent "$D/intervals")" "most holders of the pool of 2 at once"
assert_eq "0 1 " "$(sql "SELECT slot FROM kyu_locks WHERE name = 'pool' AND holder IS NULL ORDER BY slot" | tr '\n' ' ')" \
	"free slots of the pool afterwards"
echo "pool: 4 sections, 2 at once at most and at least once"

# ---- 3. --wait runs out
"${KYU_CMD[@]}" lock busy -- sleep 30 &
holder=$!
EXTRA_PIDS="$EXTRA_PIDS $holder"
wait_for "SELECT COUNT(*) FROM kyu_locks WHERE name = 'busy' AND holder IS NOT NULL" 1 30
rc=0
"${KYU_CMD[@]}" lock busy --wait 1 -- touch "$D/ran-busy" 2>"$T_DIR/err" || rc=$?
assert_eq 75 "$rc" "kyu lock --wait 1 while another holds it"
grep -q 'not obtained within 1 s' "$T_DIR/err" || fail "no message: $(cat "$T_DIR/err")"
rc=0
"${KYU_CMD[@]}" lock busy -- touch "$D/ran-busy" 2>"$T_DIR/err" || rc=$?
assert_eq 75 "$rc" "kyu lock without --wait while another holds it"
[ ! -e "$D/ran-busy" ] || fail "the command ran without the lock"
# kyu locks: the holder's host and pid, a lease of at most 30 s left.
"${KYU_CMD[@]}" locks >"$T_DIR/locks.txt" || fail "kyu locks"
head -n 1 "$T_DIR/locks.txt" | grep -qP '^name\tslot\thost\tpid\tacquired_at\tlease_left$' ||
	fail "kyu locks header: $(head -n 1 "$T_DIR/locks.txt")"
grep -P "^busy\t0\t$(hostname)\t$holder\t[0-9-]+ [0-9:.]+ \S+\t[0-9.]+$" "$T_DIR/locks.txt" >/dev/null ||
	fail "kyu locks does not show the holder of busy (pid $holder): $(cat "$T_DIR/locks.txt")"
grep -P '^pool\t1\t-\t-\t-\tfree$' "$T_DIR/locks.txt" >/dev/null ||
	fail "kyu locks does not show the free slot 1 of pool: $(cat "$T_DIR/locks.txt")"
"${KYU_CMD[@]}" locks busy | awk 'END { exit NR == 2 ? 0 : 1 }' || fail "kyu locks busy: not one row"
kill -TERM "$holder"
rc=0
wait "$holder" || rc=$?
assert_eq 143 "$rc" "kyu lock whose command was killed by SIGTERM (passed on)"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_locks WHERE name = 'busy' AND holder IS NOT NULL")" \
	"holders of busy after its holder ended"

# ---- 4. exit statuses, descriptors
rc=0; "${KYU_CMD[@]}" lock st -- sh -c 'exit 3' || rc=$?
assert_eq 3 "$rc" "kyu lock of a command that exits 3"
rc=0; "${KYU_CMD[@]}" lock st -- sh -c 'kill -USR1 $$' || rc=$?
assert_eq $((128 + 10)) "$rc" "kyu lock of a command killed by SIGUSR1"
rc=0; "${KYU_CMD[@]}" lock st -- "$T_DIR/no-such-program" 2>"$T_DIR/err" || rc=$?
assert_eq 127 "$rc" "kyu lock of a program that does not exist"
grep -q 'cannot execute' "$T_DIR/err" || fail "no message for a missing program: $(cat "$T_DIR/err")"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_locks WHERE holder IS NOT NULL")" "locks held after all ended"
# Only stdin, stdout and stderr, however many kyu itself has open.
# (ls lists the shell's, not its own.)
fds=$("${KYU_CMD[@]}" lock st -- sh -c 'ls /proc/$$/fd' 3</dev/null 7</dev/null) || fail "kyu lock (fds)"
assert_eq "0 1 2" "${fds//$'\n'/ }" "descriptors open in the command"
out=$(echo piped | "${KYU_CMD[@]}" lock st -- cat) || fail "kyu lock cat"
assert_eq piped "$out" "stdin and stdout passed to the command"

# ---- 5. bad arguments
for args in "" "st" "st --" "--ttl 5 -- true" "st --ttl 0 -- true" "st --slots 1001 -- true" \
	"st --bogus -- true"; do
	rc=0
	# shellcheck disable=SC2086
	"${KYU_CMD[@]}" lock $args 2>"$T_DIR/err" || rc=$?
	assert_eq 64 "$rc" "kyu lock $args"
done
rc=0; "${KYU_CMD[@]}" lock "$(printf 'x%.0s' $(seq 192))" -- true 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "kyu lock with a name of 192 characters"
rc=0; "${KYU_CMD[@]}" lock "$(printf 'x%.0s' $(seq 191))" -- true || rc=$?
assert_eq 0 "$rc" "kyu lock with a name of 191 characters"
