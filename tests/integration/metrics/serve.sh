#!/usr/bin/env bash
# [kyud] metrics: the metrics process serves /metrics; counters move as
# jobs run, exactly by queue; histograms count every start and claim; the
# per-queue figures come from the table; the exposition passes a strict
# check (and promtool's, where installed); counters survive a worker's
# restart; the process is restarted when killed and moved by a reload; a
# taken address stops kyud at start with status 78.
. "$KYU_SRC/tests/lib.sh"

port=$(free_tcp_port)
url=http://127.0.0.1:$port/metrics

# scrape NAME: the checked samples of one scrape into $T_DIR/NAME.
scrape() {
	http_get "$url" >"$T_DIR/$1.raw"
	assert_eq 200 "$(sed -n 1p "$T_DIR/$1.raw")" "HTTP status of GET /metrics ($1)"
	sed 1d "$T_DIR/$1.raw" >"$T_DIR/$1.txt"
	python3 "$KYU_SRC/tests/exposition.py" <"$T_DIR/$1.txt" >"$T_DIR/$1.samples" ||
		fail "the exposition of scrape $1 breaks the format (above; $T_DIR/$1.txt)"
	if command -v promtool >/dev/null; then
		# promtool also lints names and help; it prints problems and
		# exits non-zero on any.
		promtool check metrics <"$T_DIR/$1.txt" >"$T_DIR/$1.promtool" 2>&1 ||
			fail "promtool check metrics: $(cat "$T_DIR/$1.promtool")"
	fi
}
# value SCRAPE SERIES: the value of one series (as exposition.py prints
# it), or "none".
value() {
	local v
	v=$(S="$2 " awk 'substr($0, 1, length(ENVIRON["S"])) == ENVIRON["S"] { print substr($0, length(ENVIRON["S"]) + 1) }' \
		"$T_DIR/$1.samples")
	echo "${v:-none}"
}

start_kyud kyud.workers=2 kyud.metrics="127.0.0.1:$port" kyud.metrics_interval=1 \
	job.backoff_base=0 job.kill_grace=1
assert_log_contains 'kyud\[metrics\]: serving metrics on http://127.0.0.1:'"$port"'/metrics'

scrape empty
assert_eq 2 "$(value empty kyu_workers)" "kyu_workers"
assert_eq 1 "$(value empty "kyu_build_info{version=\"$("$KYUD" --version | cut -d' ' -f2)\"}")" "kyu_build_info"
assert_eq 0 "$(grep -c '^kyu_jobs_started_total{' "$T_DIR/empty.samples")" "per-queue counters before any job"
assert_eq 0 "$(value empty kyu_worker_restarts_total)" "worker restarts at start"

# Known outcomes in known queues. The odd queue name checks label escaping.
weird='we"ird\q'
sql "INSERT INTO kyu_jobs (queue, command) SELECT 'alpha', 'true' FROM seq_1_to_20"
sql "INSERT INTO kyu_jobs (queue, command, max_attempts) SELECT 'beta', 'exit 3', 1 FROM seq_1_to_5"
sql "INSERT INTO kyu_jobs (queue, command, max_attempts) SELECT 'gamma', 'exit 3', 2 FROM seq_1_to_3"
sql "INSERT INTO kyu_jobs (queue, command, max_attempts, time_limit) VALUES ('delta', 'sleep 60', 1, 1)"
sql "INSERT INTO kyu_jobs (queue, command) VALUES ('we\"ird\\\\q', 'true')"
assert_eq 1 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'we\"ird\\\\q'")" "the odd queue's row"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE status IN ('succeeded', 'failed')" 30 60

scrape ran
for q in alpha:20:20:0:0:0 beta:5:0:5:0:0 gamma:6:0:3:3:0 delta:1:0:1:0:1 "$weird:1:1:0:0:0"; do
	IFS=: read -r name started ok failed retried timed <<<"$q"
	assert_eq "$started" "$(value ran "kyu_jobs_started_total{queue=\"$name\"}")" "started in $name"
	assert_eq "$ok" "$(value ran "kyu_jobs_succeeded_total{queue=\"$name\"}")" "succeeded in $name"
	assert_eq "$failed" "$(value ran "kyu_jobs_failed_total{queue=\"$name\"}")" "failed in $name"
	assert_eq "$retried" "$(value ran "kyu_jobs_retried_total{queue=\"$name\"}")" "retried in $name"
	assert_eq "$timed" "$(value ran "kyu_jobs_timed_out_total{queue=\"$name\"}")" "timed out in $name"
done
# Escaped in the exposition itself: \" and \\.
grep -F 'kyu_jobs_started_total{queue="we\"ird\\q"} 1' "$T_DIR/ran.txt" >/dev/null ||
	fail "the odd queue name is not escaped as the format requires"
assert_eq 33 "$(value ran kyu_job_start_latency_seconds_count)" "start latencies observed (one per start)"
claims=$(value ran kyu_claims_total)
[ "$claims" -ge 1 ] || fail "kyu_claims_total is $claims"
assert_eq "$claims" "$(value ran kyu_claim_duration_seconds_count)" "claim round trips observed"
assert_eq "$claims" "$(value ran kyu_claim_batch_size_count)" "batch sizes observed"
# Each start came from a claim: the batch sizes add up to the starts (no
# job was given back here: every row found a free slot).
assert_eq 33 "$(value ran kyu_claim_batch_size_sum)" "rows claimed"
assert_eq 0 "$(value ran kyu_jobs_running)" "jobs running after all ended"

# Figures from the table: waiting (not due), due in a paused queue.
sql "INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT 'later', 'true', NOW(6) + INTERVAL 1 DAY FROM seq_1_to_4"
sql "INSERT INTO kyu_jobs (queue, command, run_at) SELECT 'held', 'true', NOW(6) - INTERVAL 5 SECOND FROM seq_1_to_2"
# Three jobs that run after one of later's, not due before tomorrow.
sql "INSERT INTO kyu_jobs (id, queue, command, after) SELECT CONCAT('b', seq), 'blk', 'true',
     JSON_ARRAY((SELECT id FROM kyu_jobs WHERE queue = 'later' LIMIT 1)) FROM seq_1_to_3"
# A paused queue whose jobs failed before and wait for their next attempt.
sql "INSERT INTO kyu_queues (name, paused) VALUES ('storm', 1)"
sql "INSERT INTO kyu_jobs (queue, command, attempts, error) VALUES ('storm', 'false', 4, 'exited with status 1'),
     ('storm', 'false', 7, 'exited with status 1'), ('storm', 'false', 0, NULL)"
sleep 1.2 # metrics_interval = 1: the next scrape reads the table again
scrape table
assert_eq 1 "$(value table kyu_database_up)" "kyu_database_up"
assert_eq 4 "$(value table 'kyu_queue_waiting{queue="later"}')" "waiting in later"
assert_eq 0 "$(value table 'kyu_queue_due{queue="later"}')" "due in later"
assert_eq 2 "$(value table 'kyu_queue_waiting{queue="held"}')" "waiting in held"
assert_eq 2 "$(value table 'kyu_queue_due{queue="held"}')" "due in held"
assert_eq 3 "$(value table 'kyu_queue_blocked{queue="blk"}')" "blocked in blk"
assert_eq 0 "$(value table 'kyu_queue_blocked{queue="later"}')" "blocked in later"
age=$(value table 'kyu_queue_oldest_due_age_seconds{queue="held"}')
python3 -c "import sys; sys.exit(not 5 <= float('$age') < 3600)" ||
	fail "oldest due age in held is $age s, expected at least 5"
assert_eq none "$(value table 'kyu_queue_waiting{queue="alpha"}')" "a queue with only finished rows has no figures"
assert_eq "2 3 0" "$(value table 'kyu_queue_retrying{queue="storm"}') $(value table 'kyu_queue_waiting{queue="storm"}') $(value table 'kyu_queue_retrying{queue="held"}')" \
	"retrying jobs: waiting with attempts > 0"
# The attempts that failed in the hour, on every daemon (kyu_minutes):
# gamma's three jobs failed twice each (once retried), beta's five once.
assert_eq "6 5 none" "$(value table 'kyu_queue_failed_attempts_1h{queue="gamma"}') $(value table 'kyu_queue_failed_attempts_1h{queue="beta"}') $(value table 'kyu_queue_failed_attempts_1h{queue="alpha"}')" \
	"failed attempts in the last hour"

# kyu stats --json: the same table as rows of JSON, counts as numbers.
"$KYU" -c "$KYUD_INI" stats --json >"$T_DIR/stats.json" || fail "kyu stats --json failed"
assert_eq "alpha succeeded 20 int|held waiting 2 int|later waiting 4 int" \
	"$(python3 -c 'import json, sys
rows = json.load(open(sys.argv[1]))
want = {("alpha", "succeeded"), ("held", "waiting"), ("later", "waiting")}
print("|".join("%s %s %d %s" % (r["queue"], r["status"], r["jobs"], type(r["jobs"]).__name__)
               for r in rows if (r["queue"], r["status"]) in want))' "$T_DIR/stats.json")" \
	"kyu stats --json rows"

# A worker killed: restarted, counted, and the counters go on from where
# they were (the scoreboard outlives the worker).
WORKER_DEATHS_OK=1
read -r victim _ <<<"$(worker_pids)"
kill -9 "$victim"
wait_for_log 'worker [0-9] \(pid '"$victim"'\) killed by signal 9' 20
wait_for_log 'worker [0-9] started' 20
sql "INSERT INTO kyu_jobs (queue, command) SELECT 'alpha', 'true' FROM seq_1_to_4"
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE queue = 'alpha' AND status = 'succeeded'" 24 60
scrape restarted
assert_eq 1 "$(value restarted kyu_worker_restarts_total)" "worker restarts"
assert_eq 24 "$(value restarted 'kyu_jobs_succeeded_total{queue="alpha"}')" "succeeded in alpha across the restart"

# Only GET and HEAD, only /metrics.
assert_eq 404 "$(http_get "http://127.0.0.1:$port/nope" | sed -n 1p)" "status of an unknown path"
assert_eq 405 "$(http_get "$url" POST | sed -n 1p)" "status of a POST"

# The metrics process killed: restarted; no worker is touched.
mpid=$(pgrep -P "$KYUD_PID" -x kyud-metrics)
[ -n "$mpid" ] || fail "no metrics process under kyud"
kill -9 "$mpid"
wait_for_log 'metrics process \(pid '"$mpid"'\) killed by signal 9 \(SIGKILL\); restarting' 20
wait_for_log 'metrics process started' 20
deadline=$(($(date +%s) + 20 * KYU_TIME_SCALE))
until [ "$(http_get "$url" | sed -n 1p)" = 200 ]; do
	[ "$(date +%s)" -lt "$deadline" ] || fail "no metrics after the metrics process was restarted"
	sleep 0.2
done
scrape after_kill
assert_eq 24 "$(value after_kill 'kyu_jobs_succeeded_total{queue="alpha"}')" "counters kept across a metrics restart"

# A reload moves the endpoint.
port2=$(free_tcp_port)
write_ini "$KYUD_INI" kyud.workers=2 kyud.metrics="127.0.0.1:$port2" kyud.metrics_interval=1
signal_kyud HUP
wait_for_log "serving metrics on http://127.0.0.1:$port2/metrics" 20
assert_eq 000 "$(http_get "$url" | sed -n 1p)" "the old address after the reload"
url=http://127.0.0.1:$port2/metrics
scrape moved
assert_eq 24 "$(value moved 'kyu_jobs_succeeded_total{queue="alpha"}')" "counters kept across a reload"
stop_kyud

# A taken address: status 78 and a line naming it and the reason.
port3=$(free_tcp_port)
python3 -c 'import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("bound", flush=True); time.sleep(60)' "$port3" >"$T_DIR/holder.out" &
holder=$!
EXIT_HOOKS+=("kill $holder 2>/dev/null")
until grep bound "$T_DIR/holder.out" >/dev/null; do sleep 0.1; done
write_ini "$T_DIR/taken.ini" kyud.metrics="127.0.0.1:$port3"
rc=0
"$KYUD" -c "$T_DIR/taken.ini" 2>"$T_DIR/taken.log" || rc=$?
assert_eq 78 "$rc" "kyud's exit status when the metrics address is taken"
grep -F "[kyud] metrics = '127.0.0.1:$port3'" "$T_DIR/taken.log" >/dev/null ||
	fail "no line naming the taken metrics address: $(cat "$T_DIR/taken.log")"
grep -F "Address already in use" "$T_DIR/taken.log" >/dev/null ||
	fail "the reason is not given: $(cat "$T_DIR/taken.log")"
