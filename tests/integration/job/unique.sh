#!/usr/bin/env bash
# Unique keys (kyu_jobs(7), "Unique keys"): while a job with unique_key K
# waits, runs or is blocked, another INSERT with K is a duplicate: kyu submit
# --unique K refuses it naming K and the job that holds it; INSERT ... ON
# DUPLICATE KEY UPDATE run_at = ... debounces (moves the waiting row's
# run_at, no second row); once the job has ended, K is accepted again; kyu
# retry of an ended job whose key another job holds now says so, naming
# both, rather than a raw error 1062, and so does the dashboard's (409).
. "$KYU_SRC/tests/lib.sh"

[ -x "${KYU:-}" ] || { echo "kyu not built: skipped"; exit 77; }
write_ini "$T_DIR/kyu.ini"
kyu() { "$KYU" -c "$T_DIR/kyu.ini" "$@"; }

# No kyud yet: the rows stay waiting.
assert_eq first "$(kyu submit -i first --unique 'report:7' -d 3600 -- true)" "first submit"
rc=0
kyu submit -i second --unique 'report:7' -- true >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "exit status of a duplicate key's submit"
grep -qF "unique key 'report:7' is held by job 'first' (waiting), which has not ended" "$T_DIR/err" ||
	fail "duplicate key's message: $(cat "$T_DIR/err")"
[ -s "$T_DIR/out" ] && fail "a refused submit printed: $(cat "$T_DIR/out")"
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = 'second'")" "rows of the refused submit"
kyu show first | grep -q '^ *unique_key: report:7$' || fail "kyu show lacks the key: $(kyu show first)"
rc=0
kyu submit --unique '' -- true 2>"$T_DIR/err" || rc=$?
assert_eq 64 "$rc" "exit status of an empty key"

# Debounce: the same key again moves the waiting row's run_at; no new row.
sql "INSERT INTO kyu_jobs (id, command, unique_key, run_at) VALUES ('third', 'true', 'report:7', NOW(6) + INTERVAL 10 MINUTE)
     ON DUPLICATE KEY UPDATE run_at = VALUES(run_at)"
assert_eq "1 first" "$(sql "SELECT CONCAT_WS(' ', COUNT(*), MIN(id)) FROM kyu_jobs WHERE unique_key = 'report:7'")" "rows with the key after a debounce"
assert_eq 1 "$(sql "SELECT run_at BETWEEN NOW(6) + INTERVAL 9 MINUTE AND NOW(6) + INTERVAL 11 MINUTE FROM kyu_jobs WHERE id = 'first'")" \
	"the debounced row's run_at moved (from an hour to ten minutes)"

# A blocked job holds its key too.
kyu submit -i up -d 3600 -- true >/dev/null
kyu submit -i blocked --after up --unique 'wf:1' -- true >/dev/null
rc=0
kyu submit --unique 'wf:1' -- true 2>"$T_DIR/err" || rc=$?
grep -qF "unique key 'wf:1' is held by job 'blocked' (blocked)" "$T_DIR/err" || fail "blocked holder: $(cat "$T_DIR/err")"

# Once the job ended, the key is free.
start_kyud kyud.workers=1 job.max_attempts=1
kyu run-now first >/dev/null
wait_for "SELECT status FROM kyu_jobs WHERE id = 'first'" succeeded 60
assert_eq again "$(kyu submit -i again --unique 'report:7' -- sh -c 'exit 3')" "submit after the holder ended"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'again'" failed 60
kyu submit -i holder --unique 'report:7' -d 3600 -- true >/dev/null

# kyu retry of 'again' (failed) while 'holder' holds its key: a clear error.
rc=0
kyu retry again >"$T_DIR/out" 2>"$T_DIR/err" || rc=$?
assert_eq 1 "$rc" "exit status of a retry whose key is taken"
grep -qF "kyu: retry: job 'again' cannot be retried: its unique key 'report:7' is held by job 'holder' (waiting), which has not ended" "$T_DIR/err" ||
	fail "retry's message: $(cat "$T_DIR/err")"
assert_eq failed "$(sql "SELECT status FROM kyu_jobs WHERE id = 'again'")" "status of the job whose retry was refused"
# The dashboard's retry: 409 with the same words.
. "$KYU_SRC/tests/lib/web.sh"
start_web "$(free_tcp_port)"
assert_eq "409 job 'again' cannot be retried: its unique key 'report:7' is held by job 'holder' (waiting), which has not ended" \
	"$(webq -X POST --csrf "$WEB_URL/api/job/retry?id=again" "d['error'].split(': ', 1)[1]")" "the dashboard's retry"
stop_web
# Freed: the retry goes through.
kyu cancel holder >/dev/null
kyu retry again >/dev/null || fail "retry after the holder was cancelled"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'again'" failed 60
stop_kyud
