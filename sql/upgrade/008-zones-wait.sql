-- Step 8: the session's time zone made harmless, and waiting for a job
-- (kyu_jobs(7), "Time" and "Waiting for a job").
--
-- kyu_jobs' times are DATETIME(6): no zone of their own. They are the
-- server's zone (@@global.time_zone), which is the zone of kyud's, kyu's
-- and kyu web's sessions (none sets time_zone) and of NOW(6) in them.
-- Before this step a session of another zone wrote its own wall clock: SET
-- time_zone = '+09:00' gave a default run_at nine hours late. From here the
-- BEFORE INSERT and BEFORE UPDATE triggers convert, in such a session, the
-- times the statement writes from its zone to the server's (CONVERT_TZ),
-- defaulted or given alike: NOW(6) + INTERVAL 5 SECOND, FROM_UNIXTIME(epoch)
-- and a literal of that session's wall clock all mean what they say. A
-- session of the server's zone (every one of kyud's) skips the conversion
-- after one comparison of the two variables.
--
-- Why not TIMESTAMP(6) columns, which the server converts per session by
-- itself: changing a column's type copies kyu_jobs, which blocks its
-- writes for the length of the copy on MariaDB 10.11, and TIMESTAMP ends in
-- 2038. Triggers change in one brief metadata lock each. The cost: what an
-- UPDATE in such a session computes from a stored time is already in the
-- server's zone and is converted again (SET run_at = run_at + INTERVAL 1
-- HOUR moves it by the difference of the zones too); VALUES(run_at) in an
-- ON DUPLICATE KEY UPDATE (the debounce of kyu_jobs(7)) is not: the
-- INSERT trigger leaves the value it converted in @kyu_run_at_inserted,
-- and the UPDATE trigger takes that value as converted. CONVERT_TZ leaves a
-- time outside TIMESTAMP's range (1970 to 2038-01-19 UTC) as it is.
--
-- kyu_wait(id, timeout): waits, in the server, until the job has ended or
-- the timeout has passed, and returns its row; refused in an open
-- transaction, whose snapshot would never show the job end.
--
-- SQLSTATE and error number of the new refusals (after 31010, KYU10, of
-- sql/schema.sql's binary-log check):
--   KYU11 31011  kyu_wait called in an open transaction
--   KYU12 31012  kyu_wait: no job has that id (or it was deleted meanwhile)
--
-- Online: two triggers replaced and one procedure created, a brief
-- metadata lock on kyu_jobs each, as any DDL takes. kyud of version 6 and
-- 7 keeps working on it (its sessions are of the server's zone, where the
-- triggers do what they did), so schema_compat stays 1. On a server that
-- writes a binary log, a user without SUPER needs
-- log_bin_trust_function_creators = ON: the first statement, a trigger,
-- is then refused by the server (1419, naming the variable) before
-- anything is changed, as step 7's first one is.

-- First of the BEFORE INSERT triggers, as step 7 made it, with the
-- conversion after the defaults (so that NOW(6) taken for a NULL is
-- converted like a given time), and the lease of a row inserted as
-- running among the times converted.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_check',
  ' BEFORE INSERT ON kyu_jobs FOR EACH ROW PRECEDES kyu_jobs_after_check',
  ' BEGIN',
  '  DECLARE bad_n INT DEFAULT NULL;',
  '  DECLARE bad VARCHAR(200) DEFAULT NULL;',
  '  DECLARE env_names MEDIUMTEXT DEFAULT NULL;',
  '  DECLARE env_str VARCHAR(64);',
  '  DECLARE msg VARCHAR(512);',
  '  IF NEW.id IS NULL OR NEW.queue IS NULL OR NEW.status IS NULL OR NEW.priority IS NULL',
  '     OR NEW.run_at IS NULL OR NEW.attempts IS NULL OR NEW.tempfails IS NULL',
  '     OR NEW.created_at IS NULL OR NEW.updated_at IS NULL OR NEW.after_policy IS NULL',
  '     OR NEW.has_downstream IS NULL OR NEW.key_slot IS NULL THEN',
  '   SET NEW.id = IFNULL(NEW.id, CAST(UUID() AS CHAR)), NEW.queue = IFNULL(NEW.queue, ''default''),',
  '    NEW.status = IFNULL(NEW.status, ''waiting''), NEW.priority = IFNULL(NEW.priority, 0),',
  '    NEW.run_at = IFNULL(NEW.run_at, NOW(6)), NEW.attempts = IFNULL(NEW.attempts, 0),',
  '    NEW.tempfails = IFNULL(NEW.tempfails, 0), NEW.created_at = IFNULL(NEW.created_at, NOW(6)),',
  '    NEW.updated_at = IFNULL(NEW.updated_at, NOW(6)),',
  '    NEW.after_policy = IFNULL(NEW.after_policy, ''succeeded''),',
  '    NEW.has_downstream = IFNULL(NEW.has_downstream, 0), NEW.key_slot = IFNULL(NEW.key_slot, 0);',
  '  END IF;',
  '  IF NEW.status = '''' THEN',
  '   SET msg = CONCAT(''kyu: status of job '', LEFT(NEW.id, 100), '' is not one of waiting, running,'',',
  '     '' succeeded, failed, cancelled, blocked (without a strict sql_mode, any other value is stored as '''''''')'');',
  '   SIGNAL SQLSTATE ''KYU06'' SET MYSQL_ERRNO = 31006, MESSAGE_TEXT = msg;',
  '  END IF;',
  '  IF NEW.status = ''running'' AND NEW.lease_until IS NULL THEN',
  '   SET NEW.lease_until = NOW(6);',
  '  END IF;',
  '  IF @@session.time_zone <> @@global.time_zone THEN',
  '   SET NEW.run_at = CONVERT_TZ(NEW.run_at, @@session.time_zone, @@global.time_zone),',
  '    NEW.created_at = CONVERT_TZ(NEW.created_at, @@session.time_zone, @@global.time_zone),',
  '    NEW.updated_at = CONVERT_TZ(NEW.updated_at, @@session.time_zone, @@global.time_zone),',
  '    NEW.lease_until = CONVERT_TZ(NEW.lease_until, @@session.time_zone, @@global.time_zone),',
  '    NEW.started_at = CONVERT_TZ(NEW.started_at, @@session.time_zone, @@global.time_zone),',
  '    NEW.finished_at = CONVERT_TZ(NEW.finished_at, @@session.time_zone, @@global.time_zone);',
  '   SET @kyu_run_at_inserted = NEW.run_at;',
  '  END IF;',
  '  IF NEW.argv IS NOT NULL THEN',
  '   IF JSON_VALID(NEW.argv) IS NOT TRUE THEN',
  '    SET bad = ''not valid JSON'';',
  '   ELSEIF NEW.argv NOT REGEXP CONCAT(''^[[:space:]]*[[][[:space:]]*"(?:[^"'', CHAR(92, 92), '']++|'',',
  '       CHAR(92, 92), ''.)++"(?:[[:space:]]*,[[:space:]]*"(?:[^"'', CHAR(92, 92), '']++|'', CHAR(92, 92),',
  '       ''.)*+")*+[[:space:]]*[]][[:space:]]*$'') THEN',
  '    IF JSON_TYPE(NEW.argv) <> ''ARRAY'' THEN',
  '     SET bad = CONCAT(''a JSON '', LOWER(JSON_TYPE(NEW.argv)));',
  '    ELSEIF JSON_LENGTH(NEW.argv) = 0 THEN',
  '     SET bad = ''empty'';',
  '    ELSE',
  '     SELECT MIN(t.n) INTO bad_n FROM JSON_TABLE(NEW.argv, ''$[*]'' COLUMNS (',
  '       n FOR ORDINALITY, v JSON PATH ''$'')) AS t WHERE LEFT(t.v, 1) <> ''"'';',
  '     SET bad = IFNULL(CONCAT(''argv['', bad_n - 1, ''] is not a string''), ''argv[0] is empty'');',
  '    END IF;',
  '   ELSEIF INSTR(NEW.argv, CONCAT(CHAR(92), ''u0000'')) > 0 THEN',
  '    SELECT MIN(t.n) INTO bad_n FROM JSON_TABLE(NEW.argv, ''$[*]'' COLUMNS (',
  '      n FOR ORDINALITY, s LONGTEXT PATH ''$'')) AS t WHERE INSTR(t.s, CHAR(0)) > 0;',
  '    IF bad_n IS NOT NULL THEN',
  '     SET bad = CONCAT(''argv['', bad_n - 1, ''] holds a NUL character, which no program can be passed'');',
  '    END IF;',
  '   END IF;',
  '   IF bad IS NOT NULL THEN',
  '    SET msg = CONCAT(''kyu: argv of job '', LEFT(NEW.id, 100),',
  '      '' is not a non-empty JSON array of strings ('', bad, ''): '', LEFT(NEW.argv, 100));',
  '    SIGNAL SQLSTATE ''KYU04'' SET MYSQL_ERRNO = 31004, MESSAGE_TEXT = msg;',
  '   END IF;',
  '  END IF;',
  '  IF NEW.env IS NOT NULL THEN',
  '   SET env_str = CONCAT(''"(?:[^"'', CHAR(92, 92), '']++|'', CHAR(92, 92), ''.)*+"'');',
  '   IF JSON_VALID(NEW.env) IS NOT TRUE THEN',
  '    SET bad = ''not valid JSON'';',
  '   ELSEIF NEW.env NOT REGEXP CONCAT(''^[[:space:]]*[{][[:space:]]*(?:'', env_str, ''[[:space:]]*:[[:space:]]*'',',
  '       env_str, ''(?:[[:space:]]*,[[:space:]]*'', env_str, ''[[:space:]]*:[[:space:]]*'', env_str,',
  '       '')*+)?+[[:space:]]*[}][[:space:]]*$'') THEN',
  '    IF JSON_TYPE(NEW.env) <> ''OBJECT'' THEN',
  '     SET bad = CONCAT(''a JSON '', LOWER(JSON_TYPE(NEW.env)));',
  '    ELSE',
  '     SELECT MIN(t.n) INTO bad_n FROM JSON_TABLE(NEW.env, ''$.*'' COLUMNS (',
  '       n FOR ORDINALITY, v JSON PATH ''$'')) AS t WHERE LEFT(t.v, 1) <> ''"'';',
  '     SET bad = CONCAT(''value of '', LEFT(JSON_VALUE(JSON_KEYS(NEW.env), CONCAT(''$['', bad_n - 1, '']'')), 64),',
  '       '' is not a string'');',
  '    END IF;',
  '   ELSE',
  '    SET env_names = JSON_KEYS(NEW.env);',
  '    IF JSON_LENGTH(env_names) < JSON_LENGTH(NEW.env) THEN',
  '     SET bad = ''a variable named twice'';',
  '    ELSE',
  '     IF INSTR(env_names, ''='') > 0 OR INSTR(env_names, ''""'') > 0 THEN',
  '      SELECT MIN(t.n) INTO bad_n FROM JSON_TABLE(env_names, ''$[*]'' COLUMNS (',
  '        n FOR ORDINALITY, k LONGTEXT PATH ''$'')) AS t WHERE t.k = '''' OR INSTR(t.k, ''='') > 0;',
  '      IF bad_n IS NOT NULL THEN',
  '       SET bad = CONCAT(''invalid variable name '''''', LEFT(JSON_VALUE(env_names, CONCAT(''$['', bad_n - 1, '']'')), 64),',
  '         '''''''');',
  '      END IF;',
  '     END IF;',
  '     IF bad IS NULL AND INSTR(NEW.env, CONCAT(CHAR(92), ''u0000'')) > 0 THEN',
  '      SELECT MIN(t.n) INTO bad_n FROM JSON_TABLE(NEW.env, ''$.*'' COLUMNS (',
  '        n FOR ORDINALITY, s LONGTEXT PATH ''$'')) AS t WHERE INSTR(t.s, CHAR(0)) > 0;',
  '      IF bad_n IS NOT NULL OR INSTR(env_names, CONCAT(CHAR(92), ''u0000'')) > 0 THEN',
  '       SET bad = ''a NUL character in a name or value, which no program can be passed'';',
  '      END IF;',
  '     END IF;',
  '    END IF;',
  '   END IF;',
  '   IF bad IS NOT NULL THEN',
  '    SET msg = CONCAT(''kyu: env of job '', LEFT(NEW.id, 100),',
  '      '' is not a JSON object of strings ('', bad, ''): '', LEFT(NEW.env, 100));',
  '    SIGNAL SQLSTATE ''KYU05'' SET MYSQL_ERRNO = 31005, MESSAGE_TEXT = msg;',
  '   END IF;',
  '  END IF;',
  ' END');

-- The check on UPDATE of step 7, and the conversion of the times the
-- statement changed: a column it left as it was (or set to the value it
-- held) is not touched, so an UPDATE of status alone from such a session
-- moves no time. updated_at's ON UPDATE NOW(6) is in NEW already here (the
-- session's clock, as any NOW(6)), and converted like the rest. In the
-- server's zone this costs one comparison per row: kyud's claims,
-- heartbeats and ends, which update up to a batch of rows each, pay that.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_status_update',
  ' BEFORE UPDATE ON kyu_jobs FOR EACH ROW',
  ' BEGIN',
  '  IF NEW.status = '''' AND OLD.status <> '''' THEN',
  '   SIGNAL SQLSTATE ''KYU06'' SET MYSQL_ERRNO = 31006, MESSAGE_TEXT = ''kyu: status is not one of',
  ' waiting, running, succeeded, failed, cancelled, blocked (without a strict sql_mode,',
  ' any other value is stored as '''''''')'';',
  '  END IF;',
  '  IF @@session.time_zone <> @@global.time_zone THEN',
  '   IF NOT (NEW.run_at <=> OLD.run_at OR NEW.run_at <=> @kyu_run_at_inserted) THEN',
  '    SET NEW.run_at = CONVERT_TZ(NEW.run_at, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   IF NOT NEW.updated_at <=> OLD.updated_at THEN',
  '    SET NEW.updated_at = CONVERT_TZ(NEW.updated_at, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   IF NOT NEW.created_at <=> OLD.created_at THEN',
  '    SET NEW.created_at = CONVERT_TZ(NEW.created_at, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   IF NOT NEW.lease_until <=> OLD.lease_until THEN',
  '    SET NEW.lease_until = CONVERT_TZ(NEW.lease_until, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   IF NOT NEW.started_at <=> OLD.started_at THEN',
  '    SET NEW.started_at = CONVERT_TZ(NEW.started_at, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   IF NOT NEW.finished_at <=> OLD.finished_at THEN',
  '    SET NEW.finished_at = CONVERT_TZ(NEW.finished_at, @@session.time_zone, @@global.time_zone);',
  '   END IF;',
  '   SET @kyu_run_at_inserted = NULL;',
  '  END IF;',
  ' END');

-- Waiting for a job: CALL kyu_wait(id, timeout_seconds) reads the job's
-- status by its primary key, sleeping 10 ms at first, each pause half as
-- long again as the last, at most 0.5 s (about 30 reads in 10 s), until
-- it has succeeded, failed or been cancelled or timeout_seconds have been
-- slept (NULL or 0: read once); then returns one row of the job: id,
-- status, exit_code, signal, error, result, attempts, finished_at. Plain
-- reads, no locks: kyud's finish of the row is never held up by it.
-- Refused in an open transaction (@@in_transaction), whose REPEATABLE READ
-- snapshot would show the job as it was at its start, for ever; with
-- autocommit off and no transaction open, each read is committed at once
-- (a transaction of its own, so that the next read sees what happened
-- since, and none is left open). SQL SECURITY INVOKER: the caller needs
-- EXECUTE on it and SELECT on kyu_jobs, as for the reads it replaces.
EXECUTE IMMEDIATE '
CREATE OR REPLACE PROCEDURE kyu_wait(IN job_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin,
                                     IN timeout_seconds DOUBLE)
  READS SQL DATA
  SQL SECURITY INVOKER
  COMMENT ''kyu: waits until a job has ended (kyu_jobs(7), Waiting for a job)''
BEGIN
  DECLARE j_seq BIGINT UNSIGNED DEFAULT NULL;
  DECLARE st VARCHAR(16) DEFAULT NULL;
  DECLARE waited DOUBLE DEFAULT 0;
  DECLARE pause DOUBLE DEFAULT 0.01;
  DECLARE msg VARCHAR(512);
  IF @@in_transaction THEN
    SIGNAL SQLSTATE ''KYU11'' SET MYSQL_ERRNO = 31011, MESSAGE_TEXT = ''kyu: kyu_wait called in an open transaction, whose snapshot would show the job as it was when the transaction began; commit (an INSERT of the job too, or kyud never sees it) or roll back first, or turn autocommit on'';
  END IF;
  SELECT seq, status INTO j_seq, st FROM kyu_jobs WHERE id = job_id LIMIT 1;
  IF @@autocommit = 0 THEN COMMIT; END IF;
  IF j_seq IS NULL THEN
    SET msg = CONCAT(''kyu: kyu_wait: no job has id '', IFNULL(LEFT(job_id, 200), ''NULL''));
    SIGNAL SQLSTATE ''KYU12'' SET MYSQL_ERRNO = 31012, MESSAGE_TEXT = msg;
  END IF;
  w: WHILE st NOT IN (''succeeded'', ''failed'', ''cancelled'') AND waited < timeout_seconds DO
    SET pause = LEAST(pause, timeout_seconds - waited);
    DO SLEEP(pause);
    SET waited = waited + pause, pause = LEAST(pause * 1.5, 0.5);
    SET st = (SELECT status FROM kyu_jobs WHERE seq = j_seq);
    IF @@autocommit = 0 THEN COMMIT; END IF;
    IF st IS NULL THEN
      SET msg = CONCAT(''kyu: kyu_wait: job '', LEFT(job_id, 200), '' was deleted while waited for'');
      SIGNAL SQLSTATE ''KYU12'' SET MYSQL_ERRNO = 31012, MESSAGE_TEXT = msg;
    END IF;
  END WHILE;
  SELECT id, status, exit_code, `signal`, error, result, attempts, finished_at FROM kyu_jobs WHERE seq = j_seq;
  IF @@autocommit = 0 THEN COMMIT; END IF;
END';

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 8), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
