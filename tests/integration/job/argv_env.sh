#!/usr/bin/env bash
# argv, env and cwd: every argument reaches the program byte for byte (no
# shell in between); env adds variables but cannot override KYU_*; cwd is
# honoured. A job whose argv/env/cwd is unusable, or whose program cannot be
# executed, fails at once (attempts 1, although max_attempts is 3) with an
# error saying why, and nothing runs: not argv, and not `command` instead.
. "$KYU_SRC/tests/lib.sh"

# hexlit TEXT: TEXT as an SQL expression of the exact same bytes, whatever
# quotes or backslashes it holds.
hexlit() { printf "CONVERT(X'%s' USING utf8mb4)" "$(printf %s "$1" | od -An -v -tx1 | tr -d ' \n')"; }
hex() { od -An -v -tx1 | tr -d ' \n' | tr a-f A-F; }

# The awkward arguments, in bash and as JSON ($HOME must stay as it is).
# shellcheck disable=SC2016
args=("with space" "it's" 'say "hi"' "" "héllo 日本" 'back\slash' '$HOME *' $'two\nlines' "-n" $'tab\there' "  padded  ")
# shellcheck disable=SC2016
args_json='"with space", "it'"'"'s", "say \"hi\"", "", "héllo 日本", "back\\slash", "$HOME *", "two\nlines", "-n", "tab\there", "  padded  "'

mkdir "$T_DIR/work dir"
printf 'true\n' >"$T_DIR/noexec"
chmod a-x "$T_DIR/noexec"

# printf, found in PATH, prints each argument on a line of its own.
sql "INSERT INTO kyu_jobs (id, argv) VALUES ('printf', $(hexlit '["printf", "%s\n", '"$args_json"']'))"
# A shell script given as argv writes its arguments, some variables and its
# directory into a file. KYU_JOB_ID in env must not win over kyud's.
# shellcheck disable=SC2016 # expanded by the job's shell
script='{ for a in "$@"; do printf "%s\n" "$a"; done; printf "%s\n" "$GREETING" "$SPACEY" "${EMPTY-unset}" "${NOT_SET-unset}" "$KYU_JOB_ID"; pwd -P; } > "$OUT"'
script_json=${script//\\/\\\\}
script_json=${script_json//\"/\\\"}
sql "INSERT INTO kyu_jobs (id, argv, env, cwd) VALUES ('script',
     $(hexlit '["/bin/sh", "-c", "'"$script_json"'", "sh", '"$args_json"']'),
     $(hexlit '{"OUT": "'"$T_DIR"'/script.out", "GREETING": "héllo wörld", "SPACEY": " a  b ", "EMPTY": "", "KYU_JOB_ID": "spoofed"}'),
     '$T_DIR/work dir')"
# env and cwd apply to a command (shell line) too.
sql "INSERT INTO kyu_jobs (id, command, env, cwd) VALUES ('command',
     'printf \"%s|%s\" \"\$GREETING\" \"\$(pwd -P)\"', '{\"GREETING\": \"hi there\"}', '$T_DIR/work dir')"

# The INSERT checks (kyu_jobs_check, schema version 7) would refuse these
# rows; kyud must still fail the ones an UPDATE or an older schema lets in.
root_sql -D "$T_DB" -e "DROP TRIGGER kyu_jobs_check"
# The jobs that must not run; each one's command or argv would leave a marker.
m=$T_DIR/marker
sql "INSERT INTO kyu_jobs (id, argv, env, cwd, command, max_attempts) VALUES
     ('argv-json',     '[\"touch\", \"$m-argv-json\"',    NULL, NULL, 'touch $m-argv-json-cmd', NULL),
     ('argv-object',   '{\"0\": \"touch\"}',              NULL, NULL, 'touch $m-argv-object-cmd', NULL),
     ('argv-empty',    '[]',                              NULL, NULL, 'touch $m-argv-empty-cmd', NULL),
     ('argv-number',   '[\"touch\", \"$m-argv-number\", 5]', NULL, NULL, 'touch $m-argv-number-cmd', NULL),
     ('argv0-empty',   '[\"\", \"$m-argv0-empty\"]',       NULL, NULL, NULL, NULL),
     ('env-json',      NULL, '{\"A\": \"1\",}',           NULL, 'touch $m-env-json', NULL),
     ('env-array',     NULL, '[\"A=1\"]',                 NULL, 'touch $m-env-array', NULL),
     ('env-value',     NULL, '{\"A\": 1}',                NULL, 'touch $m-env-value', NULL),
     ('env-name',      NULL, '{\"A=B\": \"1\"}',          NULL, 'touch $m-env-name', NULL),
     ('no-command',    NULL, NULL,                        NULL, NULL, NULL),
     ('bad-cwd',       NULL, NULL, '/nonexistent/kyu-dir', 'touch $m-bad-cwd', NULL),
     ('no-program',    '[\"/nonexistent/kyu-prog\", \"x\"]', NULL, NULL, NULL, NULL),
     ('no-program-path', '[\"kyu-no-such-program\", \"x\"]', NULL, NULL, NULL, NULL),
     ('not-executable', '[\"$T_DIR/noexec\"]',            NULL, NULL, NULL, NULL),
     ('shell-not-found', NULL, NULL, NULL, 'kyu-no-such-program x && touch $m-shell-not-found', 1)"

start_kyud kyud.workers=1 job.max_attempts=3
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 18 40
stop_kyud

# ---- what ran
assert_eq "succeeded succeeded succeeded" \
	"$(sql "SELECT status FROM kyu_jobs WHERE id IN ('printf', 'script', 'command')" | tr '\n' ' ' | sed 's/ $//')" \
	"status of printf, script, command"
assert_eq "$(printf '%s\n' "${args[@]}" | hex)" "$(sql "SELECT HEX(output) FROM kyu_jobs WHERE id = 'printf'")" \
	"bytes printed by printf (hex)"
workdir=$(cd "$T_DIR/work dir" && pwd -P)
printf '%s\n' "${args[@]}" "héllo wörld" " a  b " "" unset script "$workdir" >"$T_DIR/script.expected"
cmp "$T_DIR/script.expected" "$T_DIR/script.out" ||
	fail "script.out differs from script.expected: $(diff <(od -c "$T_DIR/script.expected") <(od -c "$T_DIR/script.out") | sed -n 1,20p)"
assert_eq "hi there|$workdir" "$(sql "SELECT CAST(output AS CHAR) FROM kyu_jobs WHERE id = 'command'")" \
	"output of the command with env and cwd"

# ---- what did not
expect_failed() { # ID ERROR-LIKE
	local got
	got=$(sql "SELECT CONCAT_WS(' / ', status, attempts, error LIKE '$2', IFNULL(error, 'NULL')) FROM kyu_jobs WHERE id = '$1'")
	case $got in
	"failed / 1 / 1 / "*) ;;
	*) fail "job $1: expected failed / 1 attempt / error like '$2', got: $got" ;;
	esac
}
expect_failed argv-json 'argv is not valid JSON: % at line 1 column %'
expect_failed argv-object 'argv must be a non-empty JSON array of strings'
expect_failed argv-empty 'argv must be a non-empty JSON array of strings'
expect_failed argv-number 'argv[2] is not a string'
expect_failed argv0-empty 'argv[0] is empty'
expect_failed env-json 'env is not valid JSON: % at line 1 column %'
expect_failed env-array 'env must be a JSON object of strings'
expect_failed env-value 'env: value of A is not a string'
expect_failed env-name "env: invalid variable name ''A=B''"
expect_failed no-command 'neither command nor argv is set'
expect_failed bad-cwd 'cannot change to directory /nonexistent/kyu-dir: No such file or directory'
expect_failed no-program 'cannot execute /nonexistent/kyu-prog: not found'
expect_failed no-program-path 'cannot execute kyu-no-such-program: not found'
expect_failed not-executable "cannot execute $T_DIR/noexec: permission denied"
# Through the shell, kyud sees only exit 127; the error names it and the
# output has the shell's own message.
expect_failed shell-not-found 'command not found (exit 127)'
assert_eq "127	1" "$(sql "SELECT exit_code, CAST(output AS CHAR) LIKE '%kyu-no-such-program%not found%'
                      FROM kyu_jobs WHERE id = 'shell-not-found'")" "shell-not-found: exit_code, shell message in output"
leftover=$(find "$T_DIR" -maxdepth 1 -name 'marker*' -printf '%f ')
[ -z "$leftover" ] || fail "jobs that must not run left markers: $leftover"
