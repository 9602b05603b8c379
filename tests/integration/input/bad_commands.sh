#!/usr/bin/env bash
# Commands and rows that cannot run as they are, and run_at/queue values at
# the edges:
# - empty command, NULL command and argv: failed at once, unrun;
# - a program that is not found, not executable (0644), a directory, a
#   script without "#!": as command (run directly, then through the shell
#   as dash would: 127, 126, the script runs) and as argv (failed at once);
#   `nosuchprog-xyz | cat` is a pipeline whose status is cat's: succeeded,
#   the shell's message in the output;
# - a 64 KiB command line runs; 1 MiB does not fit the TEXT column (the
#   INSERT is refused in strict mode) and, once the column is widened, fails
#   with exec's "Argument list too long";
# - invalid UTF-8 in any text column: the server refuses the INSERT (strict
#   mode), so nothing reaches kyud;
# - run_at '1970-01-02', '1000-01-01', '0000-00-00': due now, run at once;
#   '9999-12-31' never runs, does not hold up the others, and does not drive
#   the poll timer to 0: an idle kyud stays at ~2 statements per
#   poll_interval;
# - queue names with quotes, semicolons, backslashes, 64 bytes, served by
#   `[kyud] queues` listing them; other queues are left alone. A name with
#   a comma or a blank cannot be listed (the list is split at them); a name
#   longer than 64 characters is a configuration error.
. "$KYU_SRC/tests/lib.sh"

# hexlit TEXT: TEXT as an SQL expression of exactly these bytes.
hexlit() { printf "CONVERT(X'%s' USING utf8mb4)" "$(printf %s "$1" | od -An -v -tx1 | tr -d ' \n')"; }
# row ID: "status | attempts | exit_code | error" of job ID.
row() {
	root_sql -N -B -r -D "$T_DB" -e "SELECT CONCAT_WS(' | ', status, attempts, IFNULL(exit_code, 'NULL'), IFNULL(error, 'NULL'))
	                                 FROM kyu_jobs WHERE id = '$1'"
}
expect_row() { # ID "status | attempts | exit_code | error"
	local got
	got=$(row "$1")
	[ "$got" = "$2" ] || fail "job $1: expected [$2], got [$got]"
}
output_of() { sql "SELECT CAST(output AS CHAR) FROM kyu_jobs WHERE id = '$1'"; }

printf 'echo ran-644\n' >"$T_DIR/file644"
chmod 0644 "$T_DIR/file644"
# shellcheck disable=SC2016 # expanded by the script
printf 'echo "noshebang-ran $KYU_JOB_ID"\n' >"$T_DIR/noshebang"
chmod 0755 "$T_DIR/noshebang"
mkdir "$T_DIR/adir"
m=$T_DIR/marker

use_own_db_user
# max_attempts 2, backoff ~1 s: an exit code that is retried ends soon.
# shellcheck disable=SC2086
start_kyud $T_USER_KV kyud.workers=2 kyud.poll_interval=1 job.max_attempts=2 \
	job.backoff_base=1 job.backoff_cap=1

# ---- invalid UTF-8 never gets in: the server refuses it in strict mode.
n_before=$(sql "SELECT COUNT(*) FROM kyu_jobs")
for col in id queue command argv env cwd; do
	case $col in
	id) ins="X'6964FF', 'touch $m-utf8-id'" cols="id, command" ;;
	command) ins="'utf8-command', CONCAT('touch $m-utf8-command', X'C0AF')" cols="id, command" ;;
	argv) ins="'utf8-argv', CONCAT('[\"/bin/touch\", \"$m-utf8-argv', X'FFFE', '\"]')" cols="id, argv" ;;
	*) ins="'utf8-$col', CONCAT('x', X'C3'), 'touch $m-utf8-$col'" cols="id, $col, command" ;;
	esac
	if out=$(sql "INSERT INTO kyu_jobs ($cols) VALUES ($ins)" 2>&1); then
		fail "invalid UTF-8 in $col was stored"
	fi
	case $out in
	*"ERROR 1366"*"Incorrect string value"*"for column \`$T_DB\`.\`kyu_jobs\`.\`$col\`"*) ;;
	*) fail "invalid UTF-8 in $col: expected ERROR 1366 Incorrect string value, got: $out" ;;
	esac
done
assert_eq "$n_before" "$(sql "SELECT COUNT(*) FROM kyu_jobs")" "rows after the refused INSERTs"

# ---- 1 MiB does not fit the command column (TEXT, 65,535 bytes).
if out=$(sql "INSERT INTO kyu_jobs (id, command) VALUES ('mib', CONCAT('touch $m-mib; : ', REPEAT('x', 1048576)))" 2>&1); then
	fail "a 1 MiB command was stored in the TEXT column in strict mode"
fi
case $out in
*"ERROR 1406"*"Data too long for column 'command'"*) ;;
*) fail "1 MiB command: expected ERROR 1406 Data too long, got: $out" ;;
esac

# ---- commands
sql "INSERT INTO kyu_jobs (id, command, argv) VALUES
     ('empty', '', NULL),
     ('null', NULL, NULL),
     ('blanks', '   ', NULL),
     ('not-found', 'nosuchprog-xyz', NULL),
     ('not-found-path', '/nonexistent/nosuchprog-xyz arg', NULL),
     ('not-found-pipe', 'nosuchprog-xyz | cat', NULL),
     ('not-found-argv', NULL, '[\"nosuchprog-xyz\"]'),
     ('noexec', '$T_DIR/file644', NULL),
     ('noexec-argv', NULL, '[\"$T_DIR/file644\"]'),
     ('dir', '$T_DIR/adir', NULL),
     ('dir-argv', NULL, '[\"$T_DIR/adir\"]'),
     ('noshebang', '$T_DIR/noshebang', NULL),
     ('noshebang-argv', NULL, '[\"$T_DIR/noshebang\"]');
     INSERT INTO kyu_jobs (id, command) VALUES
     ('cmd-64k', CONCAT('echo \$KYU_JOB_ID >> $T_DIR/ran; : ', REPEAT('x', 65535 - LENGTH('echo \$KYU_JOB_ID >> $T_DIR/ran; : '))));
     INSERT INTO kyu_jobs (id, command, run_at) VALUES
     ('future', 'touch $m-future', '9999-12-31 23:59:59.999999'),
     ('past-1970', 'echo \$KYU_JOB_ID >> $T_DIR/ran', '1970-01-02'),
     ('past-1000', 'echo \$KYU_JOB_ID >> $T_DIR/ran', '1000-01-01')"
assert_eq 65535 "$(sql "SELECT LENGTH(command) FROM kyu_jobs WHERE id = 'cmd-64k'")" "length of cmd-64k"
# The zero date is what a non-strict session stores for an invalid date.
sql "SET SESSION sql_mode = '';
     INSERT INTO kyu_jobs (id, command, run_at) VALUES ('past-zero', 'echo \$KYU_JOB_ID >> $T_DIR/ran', '2024-02-30')"
assert_eq "0000-00-00 00:00:00.000000" "$(sql "SELECT run_at FROM kyu_jobs WHERE id = 'past-zero'")" "run_at of past-zero"
# Jobs submitted after all these still run.
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('good-', seq), 'echo \$KYU_JOB_ID >> $T_DIR/ran' FROM seq_1_to_10"

echo "${SECONDS}s: rows inserted"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 27 40
echo "${SECONDS}s: all ended but 'future'"
assert_eq "waiting 0" "$(sql "SELECT status, attempts FROM kyu_jobs WHERE id = 'future'" | tr '\t' ' ')" "future: status, attempts"

expect_row empty "failed | 1 | NULL | neither command nor argv is set"
expect_row null "failed | 1 | NULL | neither command nor argv is set"
expect_row blanks "succeeded | 1 | 0 | NULL"
# Through the shell (kyud tries the program directly, then lets the shell
# say what it says): exit 127/126, retried like any exit code.
expect_row not-found "failed | 2 | 127 | command not found (exit 127) (attempt 2 of 2)"
expect_row not-found-path "failed | 2 | 127 | command not found (exit 127) (attempt 2 of 2)"
expect_row noexec "failed | 2 | 126 | command not executable (exit 126) (attempt 2 of 2)"
expect_row dir "failed | 2 | 126 | command not executable (exit 126) (attempt 2 of 2)"
case $(output_of not-found) in *nosuchprog-xyz*"not found"*) ;; *) fail "not-found: output lacks the shell's message: $(output_of not-found)" ;; esac
case $(output_of noexec) in *file644*"Permission denied"*) ;; *) fail "noexec: output lacks the shell's message: $(output_of noexec)" ;; esac
# A pipeline's status is its last command's.
expect_row not-found-pipe "succeeded | 1 | 0 | NULL"
case $(output_of not-found-pipe) in *nosuchprog-xyz*"not found"*) ;; *) fail "not-found-pipe: output lacks the shell's message" ;; esac
# argv: no shell; kyud knows and fails the job at once.
expect_row not-found-argv "failed | 1 | NULL | cannot execute nosuchprog-xyz: not found"
expect_row noexec-argv "failed | 1 | NULL | cannot execute $T_DIR/file644: permission denied"
expect_row dir-argv "failed | 1 | NULL | cannot execute $T_DIR/adir: permission denied"
# A script without "#!": the shell runs it as a shell script (as dash
# would); exec alone cannot (ENOEXEC).
expect_row noshebang "succeeded | 1 | 0 | NULL"
assert_eq 1 "$(sql "SELECT output = 'noshebang-ran noshebang\n' FROM kyu_jobs WHERE id = 'noshebang'")" \
	"output of noshebang is 'noshebang-ran noshebang\\n' (was '$(output_of noshebang)')"
expect_row noshebang-argv "failed | 1 | NULL | cannot execute $T_DIR/noshebang: Exec format error"
for id in cmd-64k past-1970 past-1000 past-zero; do
	expect_row "$id" "succeeded | 1 | 0 | NULL"
done
assert_eq 14 "$(sort -u "$T_DIR/ran" | wc -l)" "distinct jobs that wrote to ran (cmd-64k, 3 past, 10 good)"
assert_eq 14 "$(wc -l <"$T_DIR/ran")" "lines in ran (each job once)"

# ---- the future job does not make kyud busy: poll_interval 1, idle.
POLL=1
WINDOW=5
# Polls that fit at the shortest jittered interval (0.9 x POLL) plus one
# for the phase, 2 statements each; 3 for a retention delete (every
# cleanup_every claims) that may fall in the window; 2 to spare; a refresh
# of the daemon's row of kyu_daemons (every 20 s) that may fall in it.
# (The window's real length: a loaded machine stretches it.)
count_statements $WINDOW
MAX_STATEMENTS=$((2 * $(max_polls $IDLE_MS $POLL) + 3 + 2 + REGISTRY_STATEMENTS * $(max_registry $IDLE_MS)))
echo "idle with a job due in 9999, poll_interval $POLL: $IDLE_N statement(s) in $IDLE_MS ms"
[ "$IDLE_N" -le $MAX_STATEMENTS ] ||
	fail "$IDLE_N statements in $IDLE_MS ms while idle with a far-future job (at most $MAX_STATEMENTS)"
[ "$IDLE_N" -ge 2 ] || fail "only $IDLE_N statements in $IDLE_MS ms: not even one poll"
assert_eq "waiting 0" "$(sql "SELECT status, attempts FROM kyu_jobs WHERE id = 'future'" | tr '\t' ' ')" "future: status, attempts"

echo "${SECONDS}s: idle check done"
# ---- 1 MiB once the column is widened: the shell cannot be given it.
root_sql -D "$T_DB" -e "ALTER TABLE kyu_jobs MODIFY command MEDIUMTEXT NULL"
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('cmd-mib', CONCAT('touch $m-mib; : ', REPEAT('x', 1048576))),
     ('cmd-mib-plain', CONCAT('/bin/touch $m-mib-plain', REPEAT(' xy', 349525))),
     ('after-mib', 'echo \$KYU_JOB_ID >> $T_DIR/ran')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('cmd-mib', 'cmd-mib-plain', 'after-mib') AND status IN ('succeeded', 'failed')" 3 20
expect_row cmd-mib "failed | 1 | NULL | cannot execute /bin/sh: Argument list too long"
expect_row cmd-mib-plain "failed | 1 | NULL | cannot execute /bin/sh: Argument list too long"
expect_row after-mib "succeeded | 1 | 0 | NULL"
leftover=$(find "$T_DIR" -maxdepth 1 -name 'marker*' -printf '%f ')
[ -z "$leftover" ] || fail "rows that must not run left markers: $leftover"
stop_kyud

echo "${SECONDS}s: 1 MiB done"
# ---- queue names
q64=$(printf 'q%.0s' $(seq 64))
# shellcheck disable=SC2016
served=("it's" 'a;b' 'back\slash' 'dq"x' '`tick`' "$q64" 'x);DROP/**/TABLE/**/kyu_jobs;--')
# Prefixes, neighbours and the pieces of a listed "c,d": never served.
# shellcheck disable=SC1003 # a backslash at the end, on purpose
others=(it a b 'back\' 'back\\slash' "${q64:1}" default 'c,d' 'x')
values=
for q in "${served[@]}" "${others[@]}" c d; do
	values="$values${values:+, }($(hexlit "job-$q"), $(hexlit "$q"), 'echo \"\$KYU_QUEUE\" >> $T_DIR/queues')"
done
sql "DELETE FROM kyu_jobs; INSERT INTO kyu_jobs (id, queue, command) VALUES $values"
list=$(printf '%s, ' "${served[@]}")
# "c,d" in the list is two names, c and d.
start_kyud kyud.workers=2 kyud.queues="${list}c,d"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" $((${#served[@]} + 2)) 20
sleep 2 # a poll or two: nothing else may start
stop_kyud
assert_eq "$(printf '%s\n' "${served[@]}" c d | sort)" "$(sort "$T_DIR/queues")" "queues whose jobs ran (KYU_QUEUE)"
assert_eq "$(printf '%s\n' "${others[@]}" | sort)" \
	"$(root_sql -N -B -r -D "$T_DB" -e "SELECT queue FROM kyu_jobs WHERE status = 'waiting' AND attempts = 0" | sort)" \
	"queues left waiting"

echo "${SECONDS}s: queues done"
# Longer than 64 characters: refused by the configuration check (exit 78).
write_ini "$T_DIR/long.ini" kyud.queues="ok, q$q64"
rc=0
out=$("$KYUD" -c "$T_DIR/long.ini" --check-config 2>&1) || rc=$?
assert_eq 78 "$rc" "exit status of --check-config with a 65-byte queue name"
case $out in *"a queue name is longer than 64 characters"*) ;; *) fail "65-byte queue name: unexpected message: $out" ;; esac

# The column holds 64 characters, not bytes: a name of 64 two-byte
# characters (128 bytes) can be inserted; kyud must be able to serve it.
qe=$(printf 'é%.0s' $(seq 64))
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('job-e64', $(hexlit "$qe"), 'true')"
assert_eq 64 "$(sql "SELECT CHAR_LENGTH(queue) FROM kyu_jobs WHERE id = 'job-e64'")" "characters in the stored queue name"
write_ini "$T_DIR/e64.ini" kyud.queues="$qe"
rc=0
out=$("$KYUD" -c "$T_DIR/e64.ini" --check-config 2>&1) || rc=$?
[ "$rc" = 0 ] || fail "a queue name the column accepts (64 characters, $(printf %s "$qe" | wc -c) bytes) is refused by [kyud] queues: $out"
