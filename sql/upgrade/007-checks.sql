-- Step 7: what an application meets at INSERT (kyu_jobs(7), "Errors",
-- "Columns"): argv, env and status checked when the row is inserted, an
-- explicit NULL taken as the column's default, an error number of kyu's
-- own for each refusal besides its SQLSTATE, a max_waiting message that
-- says what was counted; and an index on kyu_queues.updated_at.
--
-- Online: triggers are replaced one statement each (a brief metadata lock
-- on kyu_jobs, as any DDL takes), and the index is built in place on the
-- small kyu_queues (ALGORITHM=INPLACE, LOCK=NONE). kyud of version 6 keeps
-- working on it (it reads none of this, and its failure hook's INSERT,
-- refused, is recorded without the hook as a full queue's is), so
-- schema_compat stays 1.
--
-- The error numbers are 31001 and up. A SIGNAL may set any number from 1
-- to 65535, but PyMySQL reads the number as a signed 16-bit integer (50001
-- arrives as -15535), so it stays below 32768; none that reaches a client
-- is that high otherwise: MariaDB's and MySQL's servers stay below 7000,
-- Connector/C's own errors are 2000-2999 and 5000-5999 (which drivers
-- take for a lost connection), the engines that bring their own
-- (Mroonga, Spider) use 9501-22999 over their versions, and MySQL's
-- 10000-49999 are error-log messages, never sent. SQLSTATE and number:
--   KYU01 31001  queue full (kyu_queues.max_waiting)
--   KYU02 31002  after: not a JSON array, or names a job that does not exist
--   KYU03 31003  traceparent: not a W3C traceparent
--   KYU04 31004  argv: not a non-empty JSON array of strings
--   KYU05 31005  env: not a JSON object of strings
--   KYU06 31006  status: not one of the statuses
-- Before this step all three of KYU01-03 were error 1644.

-- Bounded intake with its error number, and a message that says what was
-- counted: the rows this transaction inserted before count too, those of
-- the refused statement itself included, which the refusal then takes
-- back (a 1,000-row INSERT into a queue bounded at 500 was told "500 jobs
-- waiting" when none of its rows were kept).
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_max_waiting',
  ' BEFORE INSERT ON kyu_jobs FOR EACH ROW',
  ' BEGIN',
  '  DECLARE bound INT DEFAULT NULL;',
  '  DECLARE msg VARCHAR(512);',
  '  SELECT max_waiting INTO bound FROM kyu_queues WHERE name = NEW.queue;',
  '  IF bound IS NOT NULL AND NEW.status = ''waiting'' AND bound <= (SELECT COUNT(*) FROM',
  '     (SELECT 1 FROM kyu_jobs WHERE queue = NEW.queue AND status = ''waiting'' LIMIT bound) AS w)',
  '  THEN',
  '   SET msg = CONCAT(''kyu: queue '', NEW.queue, '' is full: kyu_queues.max_waiting is '', bound,',
  '     IF(bound = 0, '''', CONCAT('' and '', bound, '' jobs wait, counting those this transaction inserted'',',
  '       '' before this row (this statement''''s included)'')),',
  '     ''; none of the statement''''s rows were inserted'');',
  '   SIGNAL SQLSTATE ''KYU01'' SET MYSQL_ERRNO = 31001, MESSAGE_TEXT = msg;',
  '  END IF;',
  ' END');

-- The checks of workflows (step 5) and trace context (step 6) as they were,
-- with their error numbers. In this order, after kyu_jobs_max_waiting's, so
-- that the triggers end in the order sql/schema.sql makes (a trigger
-- replaced goes where its PRECEDES puts it, else last), and before
-- kyu_jobs_check, which puts itself first.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_after_check',
  ' BEFORE INSERT ON kyu_jobs FOR EACH ROW PRECEDES kyu_jobs_max_waiting',
  ' BEGIN',
  '  DECLARE bad_n INT DEFAULT NULL;',
  '  DECLARE n_open, n_bad INT DEFAULT 0;',
  '  DECLARE bad_id VARCHAR(255) DEFAULT NULL;',
  '  DECLARE msg VARCHAR(512);',
  '  IF NEW.after IS NOT NULL THEN',
  '   IF JSON_VALID(NEW.after) IS NOT TRUE OR JSON_TYPE(NEW.after) <> ''ARRAY'' THEN',
  '    SET msg = CONCAT(''kyu: after of job '', LEFT(NEW.id, 100), '' is not a JSON array of job ids: '',',
  '      LEFT(NEW.after, 100));',
  '    SIGNAL SQLSTATE ''KYU02'' SET MYSQL_ERRNO = 31002, MESSAGE_TEXT = msg;',
  '   END IF;',
  '   SELECT t.n, t.id INTO bad_n, bad_id FROM JSON_TABLE(NEW.after, ''$[*]'' COLUMNS (',
  '     n FOR ORDINALITY, id VARCHAR(1024) CHARACTER SET utf8mb4 PATH ''$'')) AS t',
  '    WHERE t.id IS NULL OR NOT EXISTS (SELECT 1 FROM kyu_jobs AS j WHERE j.id = t.id) LIMIT 1;',
  '   IF bad_n IS NOT NULL THEN',
  '    SET msg = CONCAT(''kyu: after of job '', LEFT(NEW.id, 100), '' names job '',',
  '      IFNULL(LEFT(bad_id, 100), CONCAT(''(element '', bad_n, '', not a string)'')),',
  '      '', which does not exist'');',
  '    SIGNAL SQLSTATE ''KYU02'' SET MYSQL_ERRNO = 31002, MESSAGE_TEXT = msg;',
  '   END IF;',
  '  END IF;',
  '  SET NEW.after_left = NULL, NEW.after_bad = NULL, NEW.has_downstream = 0, NEW.after_seen = NULL;',
  '  IF JSON_LENGTH(NEW.after) > 0 OR NEW.after_batch IS NOT NULL THEN',
  '   IF NEW.status IN (''waiting'', ''blocked'') THEN',
  '    SELECT IFNULL(SUM(u.status NOT IN (''succeeded'', ''failed'', ''cancelled'')), 0),',
  '      IFNULL(SUM(u.status IN (''failed'', ''cancelled'')), 0) INTO n_open, n_bad',
  '     FROM (SELECT j.seq FROM JSON_TABLE(IFNULL(NEW.after, ''[]''), ''$[*]''',
  '       COLUMNS (id VARCHAR(1024) CHARACTER SET utf8mb4 PATH ''$'')) AS t JOIN kyu_jobs AS j ON j.id = t.id',
  '      UNION SELECT j.seq FROM kyu_jobs AS j',
  '       WHERE NEW.after_batch IS NOT NULL AND j.batch = NEW.after_batch AND j.seq <> NEW.seq) AS x',
  '     JOIN kyu_jobs AS u ON u.seq = x.seq LOCK IN SHARE MODE;',
  '    IF n_open = 0 AND (n_bad = 0 OR NEW.after_policy = ''finished'') THEN',
  '     SET NEW.status = ''waiting'', NEW.after_left = 0, NEW.after_bad = n_bad;',
  '    ELSE',
  '     SET NEW.status = ''blocked'';',
  '    END IF;',
  '   END IF;',
  '  ELSEIF NEW.status = ''blocked'' THEN',
  '   SET NEW.status = ''waiting'';',
  '  END IF;',
  ' END');

EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_traceparent_check',
  ' BEFORE INSERT ON kyu_jobs FOR EACH ROW',
  ' BEGIN',
  '  DECLARE msg VARCHAR(512);',
  '  IF NEW.traceparent IS NOT NULL AND (',
  '     NEW.traceparent NOT REGEXP ''^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$''',
  '     OR LEFT(NEW.traceparent, 2) = ''ff''',
  '     OR SUBSTRING(NEW.traceparent, 4, 32) = REPEAT(''0'', 32)',
  '     OR SUBSTRING(NEW.traceparent, 37, 16) = REPEAT(''0'', 16)) THEN',
  '   SET msg = CONCAT(''kyu: traceparent of job '', LEFT(NEW.id, 100),',
  '     '' is not a W3C traceparent (VV-TRACEID32-PARENTID16-FLAGS, lowercase hex, not all zeros): '',',
  '     LEFT(NEW.traceparent, 100));',
  '   SIGNAL SQLSTATE ''KYU03'' SET MYSQL_ERRNO = 31003, MESSAGE_TEXT = msg;',
  '  END IF;',
  ' END');

-- First of the BEFORE INSERT triggers: the defaults, then what kyud would
-- refuse when it claims the row (src/worker/jobspec.c), so that a wrong
-- bind (PHP's 'Array', JavaScript's '[object Object]', a number in env)
-- fails the INSERT, naming the column, instead of the job. A NULL the
-- application sent for a NOT NULL column is still NULL here (the server
-- checks NOT NULL after the BEFORE triggers, in any sql_mode), so NULL
-- means the default for every column, as it always did for max_attempts.
-- (The id's is CAST: UUID() is of type UUID since MariaDB 10.10, and
-- IFNULL with it would read a given id as a UUID, and refuse it.)
-- A row inserted as running with no lease (nobody's: no worker renews
-- it) gets an expired one, so that a claim takes it as a dead worker's.
-- A status the ENUM does not hold is stored as '' when sql_mode is not
-- strict (strict mode refuses it before any trigger runs, with the
-- server's error 1265 naming the column). argv and env are checked at
-- INSERT only: a row made bad by an UPDATE is failed by kyud when it
-- claims it, naming the column.
-- The common row (argv of a few strings, no env) costs JSON_VALID and one
-- pass of a regular expression that only an array of strings, the first
-- not empty, matches (possessive, so linear in the length; the pattern is
-- the same every row, so compiled once); the JSON functions that say what
-- is wrong run only for a row that is refused (or holds an escaped NUL),
-- where a JSON_TABLE on every row cost more than the rest of the trigger.
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

-- The one check on UPDATE: a status the ENUM does not hold, which without
-- a strict sql_mode is stored as '' (UPDATE ... SET status = 'canceled'
-- leaves a job that never runs and that retention never deletes). It
-- tests one column and touches nothing: a 1,000-row UPDATE of the claim's
-- shape cost the server the same CPU with it and without it, within the
-- noise of the measurement, where the draft workflow trigger that wrote a
-- table cost kyud a tenth of its throughput. A row that is '' already
-- (from before this step) does not make later UPDATEs of it fail: only a
-- change to '' is refused, so the claims of other rows cannot be stopped
-- by it, which is why kyu_jobs has no CHECK constraint.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_status_update',
  ' BEFORE UPDATE ON kyu_jobs FOR EACH ROW',
  ' IF NEW.status = '''' AND OLD.status <> '''' THEN',
  '  SIGNAL SQLSTATE ''KYU06'' SET MYSQL_ERRNO = 31006, MESSAGE_TEXT = ''kyu: status is not one of',
  ' waiting, running, succeeded, failed, cancelled, blocked (without a strict sql_mode,',
  ' any other value is stored as '''''''')'';',
  ' END IF');

-- A poll that reads MAX(updated_at) of kyu_queues every second (to see a
-- setting changed soon) gets it in one index dive with this key. Built in
-- place; kyu_queues holds a row per configured queue.
ALTER TABLE kyu_queues ADD KEY IF NOT EXISTS kyu_queues_updated (updated_at),
  ALGORITHM = INPLACE, LOCK = NONE;

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 7), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
