#!/usr/bin/env bash
# A failure hook runs in a queue with an allow list (rule row_env off, as
# allow makes it): its KYU_FAILED_* variables are kyud's, not a row's env.
# A row's own env is still refused there, and a row cannot slip a variable
# past the rule by naming it KYU_FAILED_* beside another.
. "$KYU_SRC/tests/lib.sh"

out=$T_DIR/hooks
mkdir "$out"
chmod 0777 "$out"
sql "INSERT INTO kyu_queues (name, on_failure) VALUES
     ('guarded', '[\"/usr/bin/touch\", \"$out/hook-ran\"]')"
start_kyud job.max_attempts=1 queue.guarded.allow=/usr/bin queue.guarded.user="$(id -un)"

sql "INSERT INTO kyu_jobs (id, queue, argv) VALUES ('breaks', 'guarded', '[\"/usr/bin/false\"]')"
wait_for "SELECT status FROM kyu_jobs WHERE id LIKE 'on\\_failure:%breaks'" succeeded 60
test -e "$out/hook-ran" || fail "the hook's command did not run"

# A row's env: refused, also when it hides among KYU_FAILED_* names.
sql "INSERT INTO kyu_jobs (id, queue, argv, env) VALUES
     ('preload', 'guarded', '[\"/usr/bin/true\"]', '{\"LD_PRELOAD\": \"/tmp/x.so\"}'),
     ('mixed', 'guarded', '[\"/usr/bin/true\"]', '{\"KYU_FAILED_JOB_ID\": \"x\", \"LD_PRELOAD\": \"/tmp/x.so\"}')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('preload', 'mixed') AND status = 'failed'
	AND error LIKE '%rule row_env%'" 2 60
stop_kyud
