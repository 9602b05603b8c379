#!/usr/bin/env bash
# Push wake-up over UDP: with poll_interval = 60 an idle kyud finds a new job
# only when a datagram tells it, and then at once (well before any poll,
# database clock); a datagram for a queue it does not serve is ignored.
. "$KYU_SRC/tests/lib.sh"

if [ -z "${KYU:-}" ] || [ ! -x "$KYU" ]; then
	echo "SKIP: the kyu CLI is not built"
	exit 77
fi

# A woken job starts within WAKE_MAX_MS. A poll could not start it that
# soon (poll_interval 60: none comes within 54 s of the last claim), so a
# start within the bound is the wake-up's doing. It is no latency target:
# a 2-core machine at load average 40 took 1.1 s at most.
WAKE_MAX_MS=10000

# started_within_ms ID FROM_EXPR MAX_MS WHAT: job ID starts (and succeeds)
# within MAX_MS milliseconds of FROM_EXPR.
started_within_ms() {
	local ms
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$1'" succeeded 30
	ms=$(ms_between "$2" started_at "$1")
	echo "$4: started $ms ms after $2"
	[ "$ms" -ge 0 ] && [ "$ms" -lt "$3" ] ||
		fail "$4: job $1 started $ms ms after $2, expected 0 to $3 ms"
}

port=$(free_udp_port)
start_kyud kyud.workers=2 kyud.poll_interval=60 kyud.listen="127.0.0.1:$port" kyud.queues=a
assert_log_contains "listening for wake-ups on udp 127.0.0.1:$port"
# The start-up claims find nothing: from now on kyud sleeps for ~60 s.
wait_workers_idle 2

# A job in queue a, and a wake-up for queue b: kyud does not serve b, so
# the datagram must not cause a claim (a claim would take the job in a).
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a1', 'a', 'true')"
"$KYU" -c "$KYUD_INI" wake b || fail "kyu wake b failed"
sleep 2
assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'a1'")" \
	"job in queue a 2 s after a wake-up for queue b (not served)"

# Its own queue's wake-up: the job starts at once.
t0=$(sql "SELECT NOW(6)")
"$KYU" -c "$KYUD_INI" wake a || fail "kyu wake a failed"
started_within_ms a1 "'$t0'" "$WAKE_MAX_MS" "kyu wake a"

# INSERT, then a wake-up for any queue (empty name).
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a2', 'a', 'true')"
"$KYU" -c "$KYUD_INI" wake || fail "kyu wake failed"
started_within_ms a2 created_at "$WAKE_MAX_MS" "INSERT + kyu wake (any queue)"

# INSERT, then a hand-made datagram with a trailing newline (echo | nc -u).
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('a3', 'a', 'true')"
echo "kyu:a" >"/dev/udp/127.0.0.1/$port"
started_within_ms a3 created_at "$WAKE_MAX_MS" "INSERT + datagram 'kyu:a\\n'"

# kyu submit sends the wake-up itself.
"$KYU" -c "$KYUD_INI" submit -i a4 -q a -s true >/dev/null || fail "kyu submit failed"
started_within_ms a4 created_at "$WAKE_MAX_MS" "kyu submit"

# Nothing else was ever due: no job other than these ran, each once.
assert_eq "a1 1,a2 1,a3 1,a4 1" \
	"$(sql "SELECT GROUP_CONCAT(CONCAT(id, ' ', attempts) ORDER BY id) FROM kyu_jobs")" "jobs and attempts"
stop_kyud
