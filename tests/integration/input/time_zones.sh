#!/usr/bin/env bash
# Sessions whose time_zone is not the server's (schema version 8, kyu_jobs(7)
# "Time"): plain SQL from a '+09:00' and a '-05:00' session means what it
# says. A default run_at is now (the job starts at once, not nine hours
# late), NOW() + INTERVAL 2 SECOND is two seconds from now, as are
# FROM_UNIXTIME(epoch) and the debounce's VALUES(run_at); an UPDATE of
# another column leaves run_at where it was (and stamps updated_at with the
# server's now); an SQL retry with run_at = NOW() runs (the job it retries
# failed on purpose). What such a session
# reads back through the documented CONVERT_TZ is the instant it wrote.
# Each stored time is checked against the server's clock read in a session
# of the server's zone, in seconds with a wide margin (a shifted time is
# hours off).
. "$KYU_SRC/tests/lib.sh"

start_kyud job.max_attempts=1
sql "INSERT INTO kyu_queues (name, paused) VALUES ('held', 1)"

# in_zone TZ "STATEMENTS": run them in a session of zone TZ, with @t0 the
# server's clock (read in the server's zone) just before.
in_zone() { sql "SET @t0 = NOW(6); SET time_zone = '$1'; $2"; }
# off ID COLUMN: seconds from the server's now to the job's COLUMN.
off() { sql "SELECT TIMESTAMPDIFF(SECOND, NOW(6), $2) FROM kyu_jobs WHERE id = '$1'"; }
# near SECONDS ACTUAL WHAT: ACTUAL within 15 s of SECONDS.
near() {
	if [ -z "$2" ] || [ "$2" -lt $(($1 - 15)) ] || [ "$2" -gt $(($1 + 15)) ]; then
		fail "$3: $2 s from the server's now, expected about $1 (a session's zone not converted?)"
	fi
}

for tz in '+09:00' '-05:00'; do
	p=tz${tz:0:1}
	epoch=$(date +%s)
	in_zone "$tz" "INSERT INTO kyu_jobs (id, command) VALUES ('$p-default', 'true');
		INSERT INTO kyu_jobs (id, command, run_at) VALUES ('$p-2s', 'true', NOW() + INTERVAL 2 SECOND);
		INSERT INTO kyu_jobs (id, command, run_at) VALUES ('$p-epoch', 'true', FROM_UNIXTIME($epoch + 2));
		INSERT INTO kyu_jobs (id, queue, command, unique_key, run_at) VALUES ('$p-deb1', 'held', 'true', '$p-k',
			NOW(6) + INTERVAL 1 HOUR) ON DUPLICATE KEY UPDATE run_at = VALUES(run_at);
		INSERT INTO kyu_jobs (id, queue, command, unique_key, run_at) VALUES ('$p-deb2', 'held', 'true', '$p-k',
			NOW(6) + INTERVAL 30 SECOND) ON DUPLICATE KEY UPDATE run_at = VALUES(run_at)"
	near 0 "$(off "$p-default" run_at)" "$tz: a default run_at"
	near 0 "$(off "$p-default" created_at)" "$tz: a default created_at"
	near 2 "$(off "$p-2s" run_at)" "$tz: NOW() + INTERVAL 2 SECOND"
	near 2 "$(off "$p-epoch" run_at)" "$tz: FROM_UNIXTIME(epoch + 2)"
	near 30 "$(off "$p-deb1" run_at)" "$tz: the debounce's VALUES(run_at)"
	assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id = '$p-deb2'")" "$tz: the debounced second row"

	wait_for "SELECT GROUP_CONCAT(id, ' ', status ORDER BY id) FROM kyu_jobs WHERE id IN ('$p-default', '$p-2s', '$p-epoch')" \
		"$p-2s succeeded,$p-default succeeded,$p-epoch succeeded" 60
	# The delayed ones were claimed once due, not before.
	assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id IN ('$p-2s', '$p-epoch') AND started_at < run_at")" \
		"$tz: jobs started before their run_at"

	# The session reads an instant back through CONVERT_TZ: the epoch it
	# wrote.
	assert_eq "$((epoch + 2)).000000" "$(in_zone "$tz" "SELECT UNIX_TIMESTAMP(CONVERT_TZ(run_at, @@global.time_zone,
		@@session.time_zone)) FROM kyu_jobs WHERE id = '$p-epoch'")" "$tz: FROM_UNIXTIME's epoch read back"

	# An UPDATE of another column moves no time but updated_at, to now.
	before=$(sql "SELECT run_at FROM kyu_jobs WHERE id = '$p-deb1'")
	in_zone "$tz" "UPDATE kyu_jobs SET priority = 5 WHERE id = '$p-deb1'"
	assert_eq "$before" "$(sql "SELECT run_at FROM kyu_jobs WHERE id = '$p-deb1'")" "$tz: run_at after an UPDATE of priority"
	near 0 "$(off "$p-deb1" updated_at)" "$tz: updated_at of that UPDATE"

	# The SQL retry of a failed job runs now.
	sql "INSERT INTO kyu_jobs (id, command) VALUES ('$p-retry', 'test -e $T_DIR/$p-ok')"
	wait_for "SELECT status FROM kyu_jobs WHERE id = '$p-retry'" failed 60
	touch "$T_DIR/$p-ok"
	in_zone "$tz" "UPDATE kyu_jobs SET status = 'waiting', run_at = NOW(), attempts = 0, tempfails = 0,
		error = NULL WHERE id = '$p-retry'"
	near 0 "$(off "$p-retry" run_at)" "$tz: the retry's run_at"
	wait_for "SELECT CONCAT(status, ' ', attempts) FROM kyu_jobs WHERE id = '$p-retry'" "succeeded 1" 60
done

# kyud's sessions are of the server's zone: its times are the server's.
assert_eq 0 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE finished_at > NOW(6) OR finished_at < NOW(6) - INTERVAL 10 MINUTE
	OR started_at > finished_at")" "ends stamped outside the last 10 minutes"
stop_kyud
