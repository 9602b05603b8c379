#!/usr/bin/env bash
# A job's environment carries KYU_JOB_ID, KYU_QUEUE and KYU_ATTEMPT.
. "$KYU_SRC/tests/lib.sh"

start_kyud kyud.workers=1
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES
     ('env-1', 'mail', 'env > $T_DIR/env-1.txt'),
     ('env 2/x', 'default', 'env > $T_DIR/env-2.txt')"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status = 'succeeded'" 2 30
stop_kyud

# expect_env FILE NAME=VALUE: that exact line is in the job's environment.
expect_env() {
	grep -qxF -- "$2" "$1" || fail "$(basename "$1") lacks '$2'; KYU_* seen: $(grep '^KYU_' "$1" | tr '\n' ' ')"
}
expect_env "$T_DIR/env-1.txt" KYU_JOB_ID=env-1
expect_env "$T_DIR/env-1.txt" KYU_QUEUE=mail
expect_env "$T_DIR/env-1.txt" KYU_ATTEMPT=1
expect_env "$T_DIR/env-2.txt" "KYU_JOB_ID=env 2/x"
expect_env "$T_DIR/env-2.txt" KYU_QUEUE=default
expect_env "$T_DIR/env-2.txt" KYU_ATTEMPT=1
