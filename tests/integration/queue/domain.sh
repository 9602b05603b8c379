#!/usr/bin/env bash
# Each queue's protection domain ([queue.NAME] in kyu.ini, issue 15), as a
# job sees it:
#   - user, group and supplementary groups (id), the clean environment
#     (PATH, HOME, USER, LOGNAME, SHELL, env_pass, env, KYU_*, nothing else
#     of kyud's), umask, the working directory (the user's home), and only
#     descriptors 0-2;
#   - group overriding the user's primary group;
#   - resource limits as set (ulimit), nice; a job past its address-space
#     limit fails, one past its CPU limit is killed by SIGXCPU (recorded);
#     per-queue max_attempts and time_limit;
#   - the allow-list both ways (a program outside it, a ".." path, a shell
#     row, a row's env: failed at once, one attempt, error naming the rule
#     and the queue), and allow_shell = yes letting a shell row through;
#   - a queue without a section of its own gets [queue.*].
. "$KYU_SRC/tests/lib.sh"
ensure_test_users

out() { root_sql -N -B -r -D "$T_DB" -e "SELECT output FROM kyu_jobs WHERE id = '$1'"; }
col() { sql "SELECT \`$2\` FROM kyu_jobs WHERE id = '$1'"; }

export KYU_TEST_PASSED=passed-value KYU_TEST_SECRET=secret-value
start_kyud kyud.workers=1 \
	queue.ida.user=kyut_a queue.ida.env_pass=KYU_TEST_PASSED queue.ida.env="FIXED=fixed value" \
	queue.ida.umask=027 queue.out.user=kyut_b queue.out.output_limit=200 \
	queue.idg.user=kyut_b queue.idg.group=kyut_extra \
	queue.lim.user=kyut_b queue.lim.limit_as=256M queue.lim.limit_cpu=1 queue.lim.limit_nofile=40 \
	queue.lim.limit_nproc=50 queue.lim.limit_fsize=1M queue.lim.limit_core=0 queue.lim.nice=7 \
	queue.lim.max_attempts=1 queue.lim.time_limit=2 \
	queue.allow.user=kyut_b queue.allow.allow="/usr/bin, /usr/local/bin" \
	queue.allowsh.user=kyut_b queue.allowsh.allow=/usr/bin queue.allowsh.allow_shell=yes \
	queue.*.user=kyut_b queue.*.max_attempts=2

# The report every identity job prints.
# The descriptors are listed by an ls that is not in a pipeline: in one, the
# shell itself holds the pipe's read end for a moment (seen as a stray "3").
report='id -u; id -g; id -G; umask; pwd; ls -x /proc/$$/fd; env | sort'
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES
     ('ida', 'ida', JSON_ARRAY('/bin/sh', '-c', '$report')),
     ('idg', 'idg', JSON_ARRAY('/bin/sh', '-c', '$report')),
     ('other', 'no-section', JSON_ARRAY('/bin/sh', '-c', 'id -un'))"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('ida', 'idg', 'other') AND status = 'succeeded'" 3 30

a_uid=$(id -u kyut_a) b_uid=$(id -u kyut_b) extra=$(getent group kyut_extra | cut -d: -f3)
mapfile -t r < <(out ida)
assert_eq "$a_uid" "${r[0]}" "ida: uid"
assert_eq "$(id -g kyut_a)" "${r[1]}" "ida: gid"
[[ " ${r[2]} " == *" $extra "* ]] || fail "ida: supplementary groups '${r[2]}' lack kyut_extra ($extra)"
assert_eq 0027 "${r[3]}" "ida: umask"
assert_eq /var/tmp/kyut_a "${r[4]}" "ida: working directory (the user's home)"
assert_eq "0 1 2 3 4" "$(tr -s ' ' <<<"${r[5]}")" "ida: the shell's open descriptors (3: KYU_STATUS_FD, 4: the life line)"
env_a=$(out ida | sed -n '7,$p')
for line in "HOME=/var/tmp/kyut_a" "USER=kyut_a" "LOGNAME=kyut_a" "SHELL=/bin/sh" \
	"KYU_TEST_PASSED=passed-value" "FIXED=fixed value" "KYU_JOB_ID=ida" "KYU_QUEUE=ida" \
	"KYU_ATTEMPT=1" "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"; do
	grep -qxF -- "$line" <<<"$env_a" || fail "ida: the environment lacks '$line'; it is: $(tr '\n' ' ' <<<"$env_a")"
done
# Nothing else of kyud's: the secret, and anything the test runner exported.
names=$(sed -n 's/=.*//p' <<<"$env_a" | grep -vxE 'HOME|USER|LOGNAME|SHELL|PATH|LANG|PWD|OLDPWD|SHLVL|_|KYU_TEST_PASSED|FIXED|KYU_JOB_ID|KYU_QUEUE|KYU_ATTEMPT|KYU_STATUS_FD' | tr '\n' ' ' || true)
assert_eq "" "$names" "ida: variables beyond the clean environment"

# output_limit = 200 from [queue.out]: 3,893 bytes are cut to the first and
# the last 100 and a marker line.
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('chatty', 'out', '[\"/usr/bin/seq\", \"1000\"]')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'chatty'" succeeded 30
len=$(sql "SELECT LENGTH(output) FROM kyu_jobs WHERE id = 'chatty'")
{ [ "$len" -ge 200 ] && [ "$len" -le 400 ]; } || fail "chatty: output of $len bytes under output_limit = 200 (seq printed 3,893)"
out chatty | grep -x 1000 >/dev/null || fail "chatty: the last line of its output is missing"

mapfile -t r < <(out idg)
assert_eq "$b_uid" "${r[0]}" "idg: uid"
assert_eq "$extra" "${r[1]}" "idg: gid (group = kyut_extra)"
assert_eq / "${r[4]}" "idg: working directory (kyut_b's home does not exist)"
assert_eq kyut_b "$(out other)" "a queue without a section runs as [queue.*] says"
echo "identity, groups, environment, umask, cwd and descriptors as configured"

# Limits: as ulimit shows them; then each one biting.
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES
     ('limits', 'lim', JSON_ARRAY('/bin/bash', '-c', 'ulimit -v; ulimit -t; ulimit -n; ulimit -u; ulimit -f; ulimit -c; ulimit -Hv; nice'))"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'limits'" succeeded 30
assert_eq "262144 1 40 50 1024 0 262144 7" "$(out limits | tr '\n' ' ' | sed 's/ *$//')" \
	"limits: ulimit -v -t -n -u -f -c -Hv, nice"
# spin's row sets its own time_limit: on a loaded machine 1 s of CPU can
# take longer than the queue's 2 s of wall time, and the limit under test
# here is the CPU's (SIGXCPU), not the time limit's TERM.
sql "INSERT INTO kyu_jobs (id, queue, argv, time_limit) VALUES
     ('big', 'lim', JSON_ARRAY('/usr/bin/perl', '-e', 'my \$x = \"a\" x (512 * 1024 * 1024); print length(\$x)'), NULL),
     ('spin', 'lim', JSON_ARRAY('/usr/bin/perl', '-e', '1 while 1'), 300),
     ('sleepy', 'lim', JSON_ARRAY('/bin/sleep', '30'), NULL),
     ('fsize', 'lim', JSON_ARRAY('/bin/dd', 'if=/dev/zero', 'of=/tmp/kyut-fsize-$T_DB', 'bs=1M', 'count=2'), NULL)"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('big', 'spin', 'sleepy', 'fsize') AND status = 'failed'" 4 60
rm -f "/tmp/kyut-fsize-$T_DB"
assert_eq 25 "$(col fsize signal)" "fsize: signal (SIGXFSZ at limit_fsize = 1M)"
assert_eq 1 "$(col big attempts)" "big: attempts (max_attempts = 1 from [queue.lim])"
[ "$(col big exit_code)" != 0 ] || fail "big: allocating 512 MiB under limit_as = 256M succeeded"
out big | grep -i 'out of memory' >/dev/null || fail "big: no 'Out of memory' in its output: $(out big)"
assert_eq 24 "$(col spin signal)" "spin: signal (SIGXCPU at limit_cpu = 1)"
assert_eq "1 timed out" "$(sql "SELECT CONCAT(attempts, ' ', IF(error LIKE 'timed out after 2 s%', 'timed out', error)) FROM kyu_jobs WHERE id = 'sleepy'")" \
	"sleepy: time_limit = 2 from [queue.lim]"
echo "limits: address space, CPU (SIGXCPU), file size (SIGXFSZ), per-queue max_attempts and time_limit"

# The allow-list, both ways.
sql "INSERT INTO kyu_jobs (id, queue, argv, command, env) VALUES
     ('ok-abs', 'allow', '[\"/usr/bin/id\", \"-un\"]', NULL, NULL),
     ('ok-path', 'allow', '[\"id\", \"-un\"]', NULL, NULL),
     ('no-bin', 'allow', '[\"/bin/sh\", \"-c\", \"id\"]', NULL, NULL),
     ('no-dots', 'allow', '[\"/usr/bin/../../bin/sh\", \"-c\", \"id\"]', NULL, NULL),
     ('no-shell', 'allow', NULL, 'id -un', NULL),
     ('no-env', 'allow', '[\"/usr/bin/id\"]', NULL, '{\"LD_PRELOAD\": \"/tmp/x.so\"}'),
     ('sh-ok', 'allowsh', NULL, 'id -un', NULL),
     ('padded', 'allow  ', '[\"/bin/sh\", \"-c\", \"id\"]', NULL, NULL)"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue IN ('allow', 'allowsh') AND status IN ('succeeded', 'failed')" 8 30
assert_eq "succeeded kyut_b" "$(col ok-abs status) $(out ok-abs)" "ok-abs"
assert_eq "succeeded kyut_b" "$(col ok-path status) $(out ok-path)" "ok-path (id found in PATH, under /usr/bin)"
assert_eq "succeeded kyut_b" "$(col sh-ok status) $(out sh-ok)" "sh-ok (allow_shell = yes)"
expect_refused() { # expect_refused ID TEXT
	assert_eq "failed 1 " "$(col "$1" status) $(col "$1" attempts) $(col "$1" pid | sed 's/NULL//')" \
		"$1: status, attempts, pid (refused before it started)"
	col "$1" error | grep -F -- "$2" >/dev/null || fail "$1: error '$(col "$1" error)' lacks '$2'"
}
expect_refused no-bin "queue allow: rule allow: /bin/sh is not under an allowed path"
expect_refused no-dots "queue allow: rule allow:"
expect_refused no-shell "queue allow: rule allow_shell:"
expect_refused no-env "queue allow: rule row_env:"
# 'allow  ' is 'allow' to the table's collation (and to the served-queue
# filter): its section applies too.
expect_refused padded "rule allow: /bin/sh is not under an allowed path"
echo "allow-list: 3 allowed, 5 refused at once naming the rule and the queue (one in a queue named with trailing spaces)"

stop_kyud
assert_log_lacks 'secret-value'
