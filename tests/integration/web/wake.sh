#!/usr/bin/env bash
# The dashboard's actions wake the daemons as kyu's do (common/action.h):
# with kyud polling once an hour and no trigger sending wake-ups, a job
# the dashboard retries or runs now, a queue it resumes, a schedule it
# enables or runs now, all start within seconds, not at the next poll.
. "$KYU_SRC/tests/lib.sh"
. "$KYU_SRC/tests/lib/web.sh"

udp=$(free_udp_port)
start_kyud kyud.workers=1 kyud.poll_interval=3600 kyud.listen="127.0.0.1:$udp" job.max_attempts=1
# Its row in kyu_daemons names the address the wake-ups go to.
wait_for "SELECT COUNT(*) FROM kyu_daemons WHERE wake_addr = '127.0.0.1:$udp' AND live_until > NOW(6)" 1 30
port=$(free_tcp_port)
start_web "$port"
u=$WEB_URL
post() { webq -X POST --csrf "$@"; }

# A job that failed (as a daemon would have left it): retried, it runs.
sql "INSERT INTO kyu_jobs (id, command, status, attempts, max_attempts, exit_code, error, finished_at)
     VALUES ('failed-once', 'true', 'failed', 1, 1, 1, 'exit code 1', NOW(6))"
assert_eq "200 retrying" "$(post "$u/api/job/retry?id=failed-once" "d['done']")" "retry"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'failed-once'" succeeded 30

# A job due tomorrow, made due now.
sql "INSERT INTO kyu_jobs (id, command, run_at) VALUES ('tomorrow', 'true', NOW(6) + INTERVAL 1 DAY)"
assert_eq "200 due now" "$(post "$u/api/job/run-now?id=tomorrow" "d['done']")" "run now"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'tomorrow'" succeeded 30

# A paused queue's job, once the queue is resumed (pause itself wakes no one:
# nothing can start for it).
sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('held-1', 'held', 'true')"
assert_eq "200 paused" "$(post "$u/api/queue/pause?queue=held" "d['done']")" "pause"
assert_eq "200 resumed" "$(post "$u/api/queue/resume?queue=held" "d['done']")" "resume"
wait_for "SELECT status FROM kyu_jobs WHERE id = 'held-1'" succeeded 30

# A schedule's run-now: its job, in its queue.
sql "INSERT INTO kyu_schedules (name, cron, command, enabled) VALUES ('yearly', '0 0 1 1 *', 'true', 1)"
job=$(post "$u/api/schedule/run-now?name=yearly" "d['job']")
case "$job" in "200 cron:yearly:now:"*) ;; *) fail "schedule run-now answered '$job'" ;; esac
wait_for "SELECT status FROM kyu_jobs WHERE id = '${job#200 }'" succeeded 30

# A disabled schedule of every second, enabled: kyud reads kyu_schedules
# again at the wake-up and enqueues its instants.
sql "INSERT INTO kyu_schedules (name, cron, command, enabled) VALUES ('tick', '* * * * * *', 'true', 0)"
sleep 2
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'cron:tick:%'")" "jobs of the disabled schedule"
assert_eq "200 enabled" "$(post "$u/api/schedule/enable?name=tick" "d['done']")" "enable"
wait_for "SELECT COUNT(*) > 0 FROM kyu_jobs WHERE id LIKE 'cron:tick:%' AND status = 'succeeded'" 1 30
post "$u/api/schedule/disable?name=tick" >/dev/null

stop_web
stop_kyud
echo ok
