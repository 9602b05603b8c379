#!/usr/bin/env bash
# The configuration of protection domains (issue 15):
#   - kyud as root refuses to start (exit 78, FILE:LINE) when a queue's jobs
#     would run as root without user = root: no [queue.*], or a section
#     without user; and starts with [queue.*] user = root;
#   - bad values name file, line, key and value and exit 78 (unknown user
#     and group, a limit out of range, a relative allow entry, a bad umask,
#     an unknown key);
#   - SIGHUP changes a queue's user; a HUP with an unknown user is refused
#     and the old configuration stays in force;
#   - a user removed while kyud runs: its queue's job fails at once, with
#     an error naming the rule and the queue;
#   - another name for uid 0 is refused; a job over limit_nproc is not
#     failed for it (the machine's trouble, which passes): it waits, its
#     attempt counted in tempfails, and runs once the user is under its
#     limit again (issue 25, item 3).
. "$KYU_SRC/tests/lib.sh"
ensure_test_users

# ini NAME LINE...: [database] (lines 1-5), then the lines given.
ini() {
	local f=$T_DIR/$1.ini
	shift
	printf '%s\n' "[database]" "socket = $KYU_DB_SOCKET" "user = kyu" "password = kyu" \
		"database = $T_DB" "$@" >"$f"
	# It holds the password: private, or kyud refuses it.
	chmod 0600 "$f"
	echo "$f"
}

f=$(ini no-star "[kyud]" "workers = 1")
assert_config_refused "$f" - "kyud runs as root and there is no [queue.*] section"
f=$(ini no-user "[queue.*]" "user = root" "[queue.mail]" "limit_cpu = 10")
assert_config_refused "$f" 9 "[queue.mail] user = '': kyud runs as root, so this queue's jobs would run as root"
f=$(ini good "[queue.*]" "user = root" "[queue.mail]" "user = kyut_a" "group = kyut_extra")
rc=0
"$KYUD" -c "$f" --check-config >/dev/null 2>"$T_DIR/err" || rc=$?
assert_eq 0 "$rc" "--check-config with user = root and a user per queue ($(cat "$T_DIR/err"))"

# Bad values: file, line, key, value.
star=("[queue.*]" "user = root")
assert_config_refused "$(ini u "${star[@]}" "[queue.q]" "user = kyut_nosuch")" 9 "[queue.q] user = 'kyut_nosuch': user 'kyut_nosuch' does not exist"
assert_config_refused "$(ini g "${star[@]}" "[queue.q]" "user = kyut_a" "group = kyut_nosuch")" 10 "[queue.q] group = 'kyut_nosuch': group 'kyut_nosuch' does not exist"
assert_config_refused "$(ini l "${star[@]}" "[queue.q]" "user = kyut_a" "limit_as = 12Q")" 10 "[queue.q] limit_as = '12Q': unknown size suffix"
assert_config_refused "$(ini n "${star[@]}" "[queue.q]" "user = kyut_a" "nice = 40")" 10 "[queue.q] nice = '40': out of range -20..19"
assert_config_refused "$(ini a "${star[@]}" "[queue.q]" "user = kyut_a" "allow = /usr/bin, bin")" 10 "[queue.q] allow = '/usr/bin, bin': must be an absolute path"
assert_config_refused "$(ini m "${star[@]}" "[queue.q]" "user = kyut_a" "umask = 0999")" 10 "[queue.q] umask = '0999': expected an octal mode"
assert_config_refused "$(ini k "${star[@]}" "[queue.q]" "user = kyut_a" "users = kyut_b")" 10 "[queue.q] users = 'kyut_b': unknown key"
assert_config_refused "$(ini e "${star[@]}" "[queue.q]" "user = kyut_a" "env = 1X=2")" 10 "[queue.q] env = '1X=2': expected NAME=VALUE"
# Another name for uid 0 is not root enough.
useradd --non-unique --uid 0 --no-create-home --home-dir /root kyut_zero 2>/dev/null || id -u kyut_zero >/dev/null ||
	fail "cannot create user kyut_zero"
EXIT_HOOKS+=("userdel kyut_zero 2>/dev/null")
assert_config_refused "$(ini z "${star[@]}" "[queue.q]" "user = kyut_zero")" 9 "[queue.q] user = 'kyut_zero': is uid 0: say user = root"
echo "bad values refused with FILE:LINE: [queue.q] key = 'value': reason, exit 78"

# HUP changes a queue's user; a bad user on HUP keeps the old one.
run_id() { # run_id ID: run 'id -un' in queue h, print who ran it
	sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('$1', 'h', '[\"id\", \"-un\"]')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" succeeded 30
	root_sql -N -B -r -D "$T_DB" -e "SELECT output FROM kyu_jobs WHERE id = '$1'"
}
useradd --system --no-create-home --home-dir /nonexistent kyut_gone 2>/dev/null || id -u kyut_gone >/dev/null ||
	fail "cannot create user kyut_gone"
EXIT_HOOKS+=("userdel kyut_gone 2>/dev/null")
start_kyud kyud.workers=1 queue.h.user=kyut_a queue.gone.user=kyut_gone queue.np.user=kyut_c \
	queue.np.limit_nproc=1 job.backoff_base=1 job.backoff_cap=2
assert_eq kyut_a "$(run_id h1)" "h1: before the reload"
write_ini "$KYUD_INI" kyud.workers=1 queue.h.user=kyut_b queue.gone.user=kyut_gone queue.np.user=kyut_c \
	queue.np.limit_nproc=1 job.backoff_base=1 job.backoff_cap=2
hup_verdict | grep reloaded >/dev/null || fail "the reload with user = kyut_b was refused"
assert_eq kyut_b "$(run_id h2)" "h2: after the reload"
write_ini "$KYUD_INI" kyud.workers=1 queue.h.user=kyut_nosuch queue.gone.user=kyut_gone queue.np.user=kyut_c \
	queue.np.limit_nproc=1 job.backoff_base=1 job.backoff_cap=2
hup_verdict | grep -F "reload failed, keeping old config: $KYUD_INI:" | grep -F "[queue.h] user = 'kyut_nosuch': user 'kyut_nosuch' does not exist" >/dev/null ||
	fail "the reload with an unknown user was not refused by name"
assert_eq kyut_b "$(run_id h3)" "h3: after the refused reload"
echo "HUP: user changed a -> b; an unknown user refused, b kept"

# limit_nproc = 1. A user already over its limit cannot exec (the kernel
# lets a privileged parent's child switch to it, then refuses its execve):
# two jobs of kyut_c run (the second makes it 2 > 1), the third cannot
# start, and is retried after the backoff until it can.
sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('np1', 'np', '[\"/bin/sleep\", \"30\"]'),
     ('np2', 'np', '[\"/bin/sleep\", \"30\"]')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('np1', 'np2') AND status = 'running' AND pid IS NOT NULL" 2 30
sql "INSERT INTO kyu_jobs (id, queue, argv, max_attempts) VALUES ('np3', 'np', '[\"/bin/true\"]', 5)"
wait_for "SELECT CONCAT(status, ' ', attempts - tempfails, ': ', error) FROM kyu_jobs WHERE id = 'np3'" \
	"waiting 0: queue np: rule limit_nproc: user kyut_c has more processes than its limit (1) (temporary: retrying later)" 30
assert_log_contains 'job np3 will retry: queue np: rule limit_nproc'
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id IN ('np1', 'np2')"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'np3'" succeeded 60
echo "limit_nproc = 1: a third job of the user waited, naming the rule, and ran once the others ended"

userdel kyut_gone
sql "INSERT INTO kyu_jobs (id, queue, argv, max_attempts) VALUES ('g1', 'gone', '[\"id\"]', 5)"
wait_for "SELECT CONCAT(status, ' ', attempts) FROM kyu_jobs WHERE id = 'g1'" "failed 1" 30
assert_eq "queue gone: rule user: user 'kyut_gone' does not exist" "$(sql "SELECT error FROM kyu_jobs WHERE id = 'g1'")" "g1: error"
stop_kyud
echo "a removed user: the job failed at once, naming the rule and the queue"
