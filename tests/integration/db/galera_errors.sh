#!/usr/bin/env bash
# The errors a Galera node answers, without Galera: a trigger on kyu_jobs
# raises them (SIGNAL ... SET MYSQL_ERRNO) where kyud meets them in a
# cluster, with a counter in an Aria table (not rolled back with the
# statement the SIGNAL fails).
#  - 1180 ("Not connected to Primary Component") on recording a result:
#    a lost connection, not a failed statement; the result is kept and
#    recorded once the fault ends, and the job does not run again;
#  - 1047 ("WSREP has not yet prepared node") on the claim: reconnect, and
#    claim at once after it (poll_interval 600 s: a poll cannot explain
#    the start);
#  - 1213 (a certification conflict) on the claim, many times in a row,
#    also when finishes ride along in its round trip: every job runs once
#    and every result is recorded.
. "$KYU_SRC/tests/lib.sh"

ran=$T_DIR/ran
: >"$ran"
root_sql -D "$T_DB" <<-'SQL'
	CREATE TABLE fault (kind VARCHAR(16) PRIMARY KEY, n INT NOT NULL) ENGINE = Aria;
	INSERT INTO fault VALUES ('finish', 0), ('claim', 0), ('conflict', 0);
	DELIMITER //
	CREATE TRIGGER fault_inject BEFORE UPDATE ON kyu_jobs FOR EACH ROW
	BEGIN
	  IF OLD.status = 'running' AND NEW.status IN ('succeeded', 'failed')
	     AND (SELECT n FROM fault WHERE kind = 'finish') > 0 THEN
	    UPDATE fault SET n = n + 1 WHERE kind = 'finish';
	    SIGNAL SQLSTATE 'HY000' SET MYSQL_ERRNO = 1180,
	      MESSAGE_TEXT = 'Got error 6 "No such device or address" during COMMIT (test)';
	  END IF;
	  IF OLD.status = 'waiting' AND NEW.status = 'running' THEN
	    IF (SELECT n FROM fault WHERE kind = 'claim') > 0 THEN
	      UPDATE fault SET n = n + 1 WHERE kind = 'claim';
	      SIGNAL SQLSTATE '08S01' SET MYSQL_ERRNO = 1047,
	        MESSAGE_TEXT = 'WSREP has not yet prepared node for application use (test)';
	    END IF;
	    -- Every other claimed row fails while the counter lasts, so
	    -- that claims that fail and claims that pass (and record
	    -- results) take turns.
	    IF (SELECT n FROM fault WHERE kind = 'conflict') > 0 THEN
	      UPDATE fault SET n = n - 1 WHERE kind = 'conflict';
	      IF (SELECT MOD(n, 2) FROM fault WHERE kind = 'conflict') = 0 THEN
	        SIGNAL SQLSTATE '40001' SET MYSQL_ERRNO = 1213,
	          MESSAGE_TEXT = 'Deadlock found when trying to get lock (test)';
	      END IF;
	    END IF;
	  END IF;
	END//
	DELIMITER ;
SQL
fault() { root_sql -D "$T_DB" -e "UPDATE fault SET n = $2 WHERE kind = '$1'"; }
faults() { root_sql -N -B -D "$T_DB" -e "SELECT n FROM fault WHERE kind = '$1'"; }
job() { sql "INSERT INTO kyu_jobs (id, command) VALUES ('$1', 'echo $1 >> $ran')"; }

# No UDF here: kyu wake stands in for the trigger's datagram. The poll
# (600 s) explains nothing below.
port=$(free_udp_port)
start_kyud kyud.workers=1 kyud.poll_interval=600 kyud.lease=20 job.max_attempts=1 \
	kyud.listen="127.0.0.1:$port"
wake() { "$KYU" -c "$KYUD_INI" wake >/dev/null; }

# 1180 on the result: the job ran; its result waits through reconnects.
fault finish 1
job f1
wake
wait_for_log 'database connection lost: error 1180' 20
wait_for "SELECT n >= 3 FROM fault WHERE kind = 'finish'" 1 30
assert_eq running "$(sql "SELECT status FROM kyu_jobs WHERE id = 'f1'")" "f1 while results fail"
fault finish 0
wait_for "SELECT status FROM kyu_jobs WHERE id = 'f1'" succeeded 30
assert_eq 1 "$(sql "SELECT attempts FROM kyu_jobs WHERE id = 'f1'")" "attempts of f1"

# 1047 on the claim: after the reconnect the worker claims at once, with
# no wake-up and no poll.
fault claim 1
job c1
wake
wait_for_log 'database connection lost: error 1047' 20
wait_for "SELECT n >= 3 FROM fault WHERE kind = 'claim'" 1 30
fault claim 0
wait_for "SELECT status FROM kyu_jobs WHERE id = 'c1'" succeeded 30

# 1213 on claims, half of them, with results riding along.
fault conflict 400
sql "INSERT INTO kyu_jobs (id, command) SELECT CONCAT('d', seq), CONCAT('echo d', seq, ' >> $ran')
	FROM seq_1_to_30"
wake
wait_for "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'd%' AND status = 'succeeded'" 30 60
assert_eq 30 "$(sql "SELECT COUNT(*) FROM kyu_jobs WHERE id LIKE 'd%' AND attempts = 1")" "d jobs claimed once"
[ "$(faults conflict)" -lt 400 ] || fail "no conflict was raised"
# Past db.c's immediate retries: the worker's own backoff took over.
grep 'acquiring jobs: deadlock, trying again' "$KYUD_LOG" >/dev/null ||
	fail "no claim came back to the worker as a deadlock"
stop_kyud
assert_eq "" "$(sort "$ran" | uniq -d)" "jobs that ran twice"
assert_eq 32 "$(sort -u "$ran" | wc -l)" "jobs that ran"
assert_log_lacks 'dropping|failed: error 1047|failed: error 1180|gave up'
grep -c 'deadlock(s) retried' "$KYUD_LOG" >/dev/null || fail "no exit summary"
