# shellcheck shell=bash
# What the watcher's tests (wake/watch_*) ask of either wake-up path, with
# poll_interval an hour so that nothing else starts these jobs: an SQL
# retry of a failed job, a paused queue resumed by an UPDATE of
# kyu_queues, and a transaction that commits 3 s after its INSERT. Needs a
# running kyud with job.max_attempts=1; sourced by those tests.
watch_sql_cases() {
	# An SQL retry (kyu_jobs(7)): due again, found again.
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('retry', 'false')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'retry'" failed 30
	sql "UPDATE kyu_jobs SET status = 'waiting', command = 'true', run_at = NOW(6), attempts = 0,
		tempfails = 0, error = NULL WHERE id = 'retry' AND status IN ('failed', 'cancelled')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'retry'" succeeded 30

	# A paused queue's job waits; the resume starts it.
	sql "INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"
	sql "INSERT INTO kyu_jobs (id, queue, command) VALUES ('held1', 'held', 'true')"
	sleep 2
	assert_eq waiting "$(sql "SELECT status FROM kyu_jobs WHERE id = 'held1'")" "a paused queue's job"
	sql "UPDATE kyu_queues SET paused = 0 WHERE name = 'held'"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'held1'" succeeded 30

	# Enqueued in a transaction that commits 3 s after its INSERT.
	root_sql -D "$T_DB" -e "BEGIN; INSERT INTO kyu_jobs (id, command) VALUES ('late', 'true');
		DO SLEEP(3); COMMIT;"
	wait_for "SELECT status FROM kyu_jobs WHERE id = 'late'" succeeded 30
}
