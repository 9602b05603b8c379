-- Step 6: what happened to each attempt, what a running job says about
-- itself, what happens when one fails (kyu_jobs(7), "Attempts", "The
-- status channel", "Failure hooks", "Unique keys", "Trace context").
--
-- New columns at the end of kyu_jobs (progress, progress_note, result,
-- unique_key, traceparent, key_slot) and of kyu_queues (on_failure,
-- on_failure_queue, key_max_running), the table kyu_attempts, and
-- running_key, which now names the key's slot. kyud of version 5 keeps
-- working on it (it writes none of the new columns and never sets
-- key_slot, so every key keeps one slot), so schema_compat stays 1.
--
-- Online: as step 5, the kyu_jobs columns cost a rebuild (LOCK=SHARED:
-- reads go on; INSERTs, claims and results wait for it). kyu_queues and
-- the new table are instant.

-- One ALTER, so one rebuild: the columns, running_key naming the slot
-- (only when it does not yet: changing its expression copies the table,
-- which sql/schema.sql run again must not do) and the unique key.
SET @kyu_rk = (SELECT GENERATION_EXPRESSION FROM information_schema.COLUMNS
  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kyu_jobs' AND COLUMN_NAME = 'running_key');
EXECUTE IMMEDIATE CONCAT('ALTER TABLE kyu_jobs
  ADD COLUMN IF NOT EXISTS progress     TINYINT UNSIGNED NULL,
  ADD COLUMN IF NOT EXISTS progress_note VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS result       MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS unique_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS unique_live  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
    AS (IF(status IN (''waiting'', ''running'', ''blocked''), unique_key, NULL)) VIRTUAL,
  ADD COLUMN IF NOT EXISTS traceparent  VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL,
  ADD COLUMN IF NOT EXISTS key_slot     SMALLINT UNSIGNED NOT NULL DEFAULT 0,',
  IF(@kyu_rk LIKE '%key_slot%', '', '
  MODIFY running_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
    AS (IF(status = ''running'', IF(key_slot = 0, concurrency_key, CONCAT(concurrency_key, 0x1f, key_slot)), NULL)) VIRTUAL,'),
  '
  ADD UNIQUE KEY IF NOT EXISTS kyu_jobs_unique_key (unique_live)');
-- Slot 0 of a key is the key itself, so a row of kyud 5 (key_slot 0)
-- holds the same value as before and every check written for one slot
-- per key still reads slot 0 right.

-- trace context: checked at INSERT (SQLSTATE KYU03 naming the value), not
-- by a CHECK constraint (no CHECK on kyu_jobs: sql/schema.sql says why);
-- kyud checks it again when it claims the row. W3C Trace Context: version
-- (not ff), trace-id and parent-id not all zeros, flags; lowercase hex.
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
  '   SIGNAL SQLSTATE ''KYU03'' SET MESSAGE_TEXT = msg;',
  '  END IF;',
  ' END');

ALTER TABLE kyu_queues
  ADD COLUMN IF NOT EXISTS on_failure       TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS on_failure_queue VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS key_max_running  INT NOT NULL DEFAULT 1;
ALTER TABLE kyu_queues
  ADD CONSTRAINT IF NOT EXISTS kyu_queues_on_failure CHECK (on_failure IS NULL OR
    (JSON_VALID(on_failure) AND JSON_TYPE(on_failure) = 'ARRAY' AND JSON_LENGTH(on_failure) > 0)),
  ADD CONSTRAINT IF NOT EXISTS kyu_queues_key_max_running CHECK (key_max_running BETWEEN 1 AND 1000);

-- One row per attempt that ended, written by kyud in the round trip that
-- records the end (kyu_jobs(7), "Attempts"). Attempts are numbered by the
-- job's attempts column, which `kyu retry` sets back to 0: a job retried
-- by hand has two rows with number 1, told apart by seq and finished_at.
CREATE TABLE IF NOT EXISTS kyu_attempts (
  seq          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_seq      BIGINT UNSIGNED NOT NULL,
  job_id       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  attempt      INT UNSIGNED NOT NULL,
  queue        VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- kyu_daemons.id of the daemon that ran it.
  daemon       VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NULL,
  host         VARCHAR(255) NULL,
  pid          INT UNSIGNED NULL,
  started_at   DATETIME(6) NULL,
  finished_at  DATETIME(6) NOT NULL,
  -- succeeded, failed (for good), retried (failed, will run again),
  -- cancelled (by an operator or an upstream), timeout (its time limit).
  outcome      ENUM('succeeded','failed','retried','cancelled','timeout') NOT NULL,
  exit_code    INT NULL,
  `signal`     INT NULL,
  error        TEXT NULL,
  cpu_user     DOUBLE NULL,
  cpu_sys      DOUBLE NULL,
  max_rss      BIGINT UNSIGNED NULL,
  -- The end of the attempt's output ([kyud] attempt_output bytes).
  output_tail  BLOB NULL,
  PRIMARY KEY (seq),
  KEY kyu_attempts_job (job_seq, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- A job's attempts go with it, whoever deletes it (the retention DELETE,
-- an operator's DELETE): the trigger of step 5 and this one statement
-- more, one index range of kyu_attempts per deleted row.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_after_delete',
  ' AFTER DELETE ON kyu_jobs FOR EACH ROW',
  ' BEGIN',
  '  IF OLD.has_downstream <> 0 AND OLD.status NOT IN (''succeeded'', ''failed'', ''cancelled'') THEN',
  '   INSERT INTO kyu_after_todo (job_seq, job_id, what) VALUES (OLD.seq, OLD.id, ''deleted'');',
  '  END IF;',
  '  IF OLD.after IS NOT NULL OR OLD.after_batch IS NOT NULL THEN',
  '   INSERT INTO kyu_after_todo (job_seq, job_id, what) VALUES (OLD.seq, OLD.id, ''gone'');',
  '  END IF;',
  '  DELETE FROM kyu_attempts WHERE job_seq = OLD.seq;',
  ' END');

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 6), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
