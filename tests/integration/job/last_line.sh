#!/usr/bin/env bash
# A job that fails with a bare exit code names its cause: the last line it
# wrote follows the code in error (kyu_jobs(7), "Error texts"), cut on a
# character and bounded. Its stdout and stderr share one pipe, in the
# order written (the output column's), so the last line may be stdout's.
# Never for another end (success, signal, timeout, 127), and never a line
# the output column does not hold (output_limit 0, or a line in the middle
# that a small limit cut).
. "$KYU_SRC/tests/lib.sh"

# Root runs the tests in CI: a queue's section must name its user then.
user=()
[ "$(id -u)" != 0 ] || user=(queue.none.user=root queue.small.user=root)
start_kyud kyud.workers=1 job.max_attempts=1 job.kill_grace=1 job.backoff_base=1 job.backoff_cap=1 \
	job.permanent_exit_codes=2 queue.none.output_limit=0 queue.small.output_limit=1000 "${user[@]}"

long=$(printf '%0300d' 0 | sed 's/0/é/g') # 300 characters, 600 bytes
sql "INSERT INTO kyu_jobs (id, command) VALUES
     ('bad', 'echo out; echo \"bad thing\" >&2; exit 3'),
     ('stdout-last', 'echo \"to stderr\" >&2; echo \"to stdout\"; exit 13'),
     ('good', 'echo fine >&2; echo done'),
     ('silent', 'exit 4'),
     ('crlf', 'printf \"50%%\\\\r100%%\\\\rerror:\\\\tgone\\\\r\\\\n\\\\n  \\\\n\" >&2; exit 5'),
     ('unfinished', 'printf \"no newline\" >&2; exit 6'),
     ('long', 'echo $long >&2; exit 7'),
     ('permanent', 'echo \"no such account\" >&2; exit 2'),
     ('signal', 'echo dying >&2; kill -KILL \$\$'),
     ('notfound', 'no-such-command-here'),
     ('utf8', 'printf \"caf\\\\303\\\\251 \\\\377 ok\\\\n\" >&2; exit 8')"
sql "INSERT INTO kyu_jobs (id, command, time_limit) VALUES ('slow', 'echo slowly >&2; sleep 60', 1)"
sql "INSERT INTO kyu_jobs (id, command, max_attempts) VALUES ('twice', 'echo \"attempt \$KYU_ATTEMPT failed\" >&2; exit 9', 2)"
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('secret', 'none', 'echo \"password=hunter2\" >&2; exit 10'),
     ('middle', 'small', 'head -c 3000 /dev/zero | tr \"\\\\0\" x; echo; echo hidden >&2; head -c 3000 /dev/zero | tr \"\\\\0\" y; exit 11'),
     ('tail', 'small', 'head -c 3000 /dev/zero | tr \"\\\\0\" x; echo; echo \"in the tail\" >&2; exit 12')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('waiting', 'running')" 0 120
stop_kyud

err() { sql "SELECT IFNULL(error, 'NULL') FROM kyu_jobs WHERE id = '$1'"; }
assert_eq "failed	3	exit code 3: bad thing" "$(sql "SELECT status, exit_code, error FROM kyu_jobs WHERE id = 'bad'")" "bad"
assert_eq "succeeded	NULL" "$(sql "SELECT status, IFNULL(error, 'NULL') FROM kyu_jobs WHERE id = 'good'")" "good"
assert_eq "exit code 13: to stdout" "$(err stdout-last)" "the last line, stdout's"
assert_eq "exit code 4" "$(err silent)" "a job that said nothing"
assert_eq "exit code 5: error: gone" "$(err crlf)" "lines ended by \\r, blank lines after"
assert_eq "exit code 6: no newline" "$(err unfinished)" "a last line without its newline"
assert_eq "exit code 2 (permanent: not retried): no such account" "$(err permanent)" "a permanent exit code"
assert_eq "killed by signal 9 (SIGKILL)" "$(err signal)" "a signal"
assert_eq "timed out after 1 s" "$(err slow)" "a timeout"
assert_eq "command not found (exit 127)" "$(err notfound)" "exit 127"
assert_eq "exit code 8: café ? ok" "$(err utf8)" "bytes that are not UTF-8"
assert_eq "exit code 9 (attempt 2 of 2): attempt 2 failed" "$(err twice)" "the last attempt's line"
# Bounded, cut on a character, marked.
got=$(err long)
case "$got" in "exit code 7: éé"*"é…") ;; *) fail "long: '$got'" ;; esac
assert_eq 1 "$(sql "SELECT LENGTH(error) <= 255 AND CHAR_LENGTH(error) < 150 FROM kyu_jobs WHERE id = 'long'")" "long: bounded"
# Never more than the output column holds.
assert_eq "exit code 10	0" "$(sql "SELECT error, IFNULL(LOCATE('hunter2', output), 0) FROM kyu_jobs WHERE id = 'secret'")" "output_limit 0"
assert_eq "exit code 11	0" "$(sql "SELECT error, LOCATE('hidden', output) FROM kyu_jobs WHERE id = 'middle'")" "a line the output column cut"
assert_eq "exit code 12: in the tail" "$(err tail)" "a line in the tail the output column keeps"
