#!/usr/bin/env bash
# Failure hooks (kyu_jobs(7), "Failure hooks"): a job of a queue with
# on_failure that fails for good (its last attempt failed, a permanent
# failure, its time limit on its last attempt) makes one job of that argv in
# on_failure_queue, with KYU_FAILED_JOB_ID, KYU_FAILED_QUEUE,
# KYU_FAILED_EXIT_CODE and KYU_FAILED_ERROR in its environment; a retry, a
# cancel and a success make none; a failing hook makes none; a queue
# without on_failure_queue gets the hook itself; a job failed again after a
# `kyu retry` makes a second hook.
. "$KYU_SRC/tests/lib.sh"

out=$T_DIR/hooks
mkdir "$out"
# The hook writes its environment to a file named by the failed job's id.
# shellcheck disable=SC2016 # expanded by the hook's shell
hook='["sh", "-c", "env | grep ^KYU_FAILED_ | sort > '$out'/$KYU_FAILED_JOB_ID.$KYU_JOB_ID.env; exit 0"]'
sql "INSERT INTO kyu_queues (name, on_failure, on_failure_queue) VALUES
     ('work', '$hook', 'alerts'),
     ('self', '[\"sh\", \"-c\", \"touch $out/self.\$KYU_FAILED_JOB_ID; exit 1\"]', NULL)"
start_kyud kyud.workers=2 job.max_attempts=1 job.kill_grace=1 job.backoff_base=1 job.backoff_cap=1

sql "INSERT INTO kyu_jobs (id, queue, command, max_attempts, time_limit) VALUES
     ('fail-once', 'work', 'echo ''it broke: \"quoted\"'' >&2; exit 3', 1, NULL),
     ('fail-twice', 'work', 'exit 4', 2, NULL),
     ('slow', 'work', 'sleep 60', 1, 1),
     ('ok', 'work', 'exit 0', 1, NULL),
     ('retried-then-ok', 'work', '[ -e $out/second ] && exit 0; touch $out/second; exit 5', 2, NULL),
     ('cancel-me', 'work', 'touch $out/cancel-started; sleep 60', 1, NULL),
     ('self-fail', 'self', 'exit 6', 1, NULL)"
wait_until 60 "cancel-me to start" test -e "$out/cancel-started"
sql "UPDATE kyu_jobs SET status = 'cancelled' WHERE id = 'cancel-me'"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue IN ('work', 'self') AND status IN ('waiting', 'running')" 0 90
# The hooks of the three failures in 'alerts' (served by kyud: no queue
# list), the one of self-fail in 'self', and that one's own failure fires
# nothing.
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'on\\_failure:%' AND status IN ('succeeded', 'failed')" 4 90
assert_eq "alerts fail-once
alerts fail-twice
alerts slow
self self-fail" \
	"$(sql "SELECT CONCAT_WS(' ', queue, JSON_VALUE(env, '\$.KYU_FAILED_JOB_ID')) FROM kyu_jobs WHERE id LIKE 'on\\_failure:%' ORDER BY 1")" \
	"hook jobs (queue, failed job)"
assert_eq "failed" "$(sql "SELECT status FROM kyu_jobs WHERE id LIKE 'on\\_failure:%self-fail'")" "the failing hook's status"
assert_eq 4 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'on\\_failure:%'")" "hook jobs, none for the failed hook"
# ids: on_failure:ATTEMPT:CLAIM:FAILED-ID
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id REGEXP '^on_failure:2:[0-9]+:fail-twice\$'")" "the id names the attempt"

for id in fail-once fail-twice slow; do
	f=$(ls "$out/$id".*.env 2>/dev/null) || fail "no hook ran for $id"
	[ "$(echo "$f" | wc -l)" = 1 ] || fail "more than one hook ran for $id: $f"
	grep -qx "KYU_FAILED_JOB_ID=$id" "$f" || fail "$id's hook: KYU_FAILED_JOB_ID: $(cat "$f")"
	grep -qx "KYU_FAILED_QUEUE=work" "$f" || fail "$id's hook: KYU_FAILED_QUEUE: $(cat "$f")"
done
grep -qx 'KYU_FAILED_EXIT_CODE=3' "$out"/fail-once.*.env || fail "exit code: $(cat "$out"/fail-once.*.env)"
grep -qx 'KYU_FAILED_ERROR=.*it broke: "quoted"' "$out"/fail-once.*.env || fail "error: $(cat "$out"/fail-once.*.env)"
grep -qx 'KYU_FAILED_EXIT_CODE=4' "$out"/fail-twice.*.env || fail "exit code: $(cat "$out"/fail-twice.*.env)"
# Killed at its time limit: no exit code, the error says why.
grep -qx 'KYU_FAILED_EXIT_CODE=' "$out"/slow.*.env || fail "timeout's exit code: $(cat "$out"/slow.*.env)"
grep -q '^KYU_FAILED_ERROR=.*timed out' "$out"/slow.*.env || fail "timeout's error: $(cat "$out"/slow.*.env)"
[ -e "$out/self.self-fail" ] || fail "the hook in the failed job's own queue did not run"
ls "$out"/ok.* "$out"/retried-then-ok.* "$out"/cancel-me.* 2>/dev/null && fail "a hook ran for a success, a retry or a cancel"

# Retried by hand (attempts from 0 again) and failing again: a second hook.
"$KYU" -c "$KYUD_INI" retry fail-once >/dev/null
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'on\\_failure:%:fail-once' AND status = 'succeeded'" 2 90
envs=("$out"/fail-once.*.env)
assert_eq 2 "${#envs[@]}" "hooks run for fail-once after a retry by hand"

stop_kyud
