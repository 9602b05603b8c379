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

-- kyu_settle again (sql/schema.sql has the whole comment): an upstream
-- retried after it cancelled its dependents, that ran and succeeded before
-- kyu_settle saw it open again, now re-opens them too (step 5's left them
-- cancelled).
EXECUTE IMMEDIATE '
CREATE OR REPLACE PROCEDURE kyu_settle(IN max_items INT)
  MODIFIES SQL DATA
  COMMENT ''kyu: acts on kyu_after_todo (kyu_jobs(7), Workflows)''
BEGIN
  DECLARE done, tries, n INT DEFAULT 0;
  DECLARE t_seq, j_seq BIGINT UNSIGNED;
  DECLARE j_id, bad_id VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
  DECLARE t_what, bad_what VARCHAR(16);
  DECLARE c TINYINT;
  DECLARE policy VARCHAR(16);
  items: WHILE done < max_items AND tries < 20 DO
    item: BEGIN
      DECLARE EXIT HANDLER FOR 1213, 1205 BEGIN ROLLBACK; SET tries = tries + 1; END;
      -- Anything else: the item stays, the caller gets the error, and
      -- its session is not left inside a transaction.
      DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
      START TRANSACTION;
      SET t_seq = NULL;
      SELECT seq, job_seq, job_id, what INTO t_seq, j_seq, j_id, t_what FROM kyu_after_todo
        ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED;
      IF t_seq IS NULL THEN
        -- A flagged job: what its dependents hear is its status now.
        SET j_seq = NULL;
        SELECT seq, id, IF(status IN (''succeeded'', ''failed'', ''cancelled''), status, ''open'')
          INTO j_seq, j_id, t_what FROM kyu_jobs WHERE after_changed = 1
          LIMIT 1 FOR UPDATE SKIP LOCKED;
        IF j_seq IS NULL THEN
          COMMIT;
          LEAVE items;
        END IF;
        UPDATE kyu_jobs SET after_seen = CASE status WHEN ''succeeded'' THEN 1 WHEN ''failed'' THEN 2 WHEN ''cancelled'' THEN 2 ELSE 0 END, updated_at = updated_at
          WHERE seq = j_seq;
      END IF;
      IF t_what = ''new'' THEN
        SET policy = NULL;
        SELECT after_policy INTO policy FROM kyu_jobs WHERE seq = j_seq FOR UPDATE;
        IF policy IS NOT NULL THEN
          -- Lock the upstreams first: an end in progress is waited for,
          -- and every later one is seen (after_changed). One that had no
          -- dependents yet is seen as it is now: this item counts it.
          -- (Joins, not seq IN (...): that reads all of kyu_jobs.)
          SELECT COUNT(*) INTO n FROM kyu_after AS e JOIN kyu_jobs AS u ON u.seq = e.up_seq
            WHERE e.down_seq = j_seq FOR UPDATE;
          UPDATE kyu_jobs AS u JOIN kyu_after AS e ON e.up_seq = u.seq
            SET u.after_seen = CASE u.status WHEN ''succeeded'' THEN 1 WHEN ''failed'' THEN 2 WHEN ''cancelled'' THEN 2 ELSE 0 END,
                u.has_downstream = 1, u.updated_at = u.updated_at
            WHERE e.down_seq = j_seq AND u.has_downstream = 0;
          UPDATE kyu_after AS e LEFT JOIN kyu_jobs AS u ON u.seq = e.up_seq
            SET e.state = CASE WHEN u.seq IS NULL THEN 2 WHEN u.status = ''succeeded'' THEN 1
                          WHEN u.status IN (''failed'', ''cancelled'') THEN 2 ELSE 0 END
            WHERE e.down_seq = j_seq AND e.state = 0;
          UPDATE kyu_jobs SET updated_at = updated_at,
              after_left = (SELECT COUNT(*) FROM kyu_after WHERE down_seq = j_seq AND state = 0),
              after_bad = (SELECT COUNT(*) FROM kyu_after WHERE down_seq = j_seq AND state = 2)
            WHERE seq = j_seq;
          SET bad_id = NULL, bad_what = NULL;
          SELECT IFNULL(u.id, CONCAT(''#'', e.up_seq)), IFNULL(u.status, ''deleted'')
            INTO bad_id, bad_what FROM kyu_after AS e LEFT JOIN kyu_jobs AS u ON u.seq = e.up_seq
            WHERE e.down_seq = j_seq AND e.state = 2 ORDER BY e.up_seq LIMIT 1;
          UPDATE kyu_jobs SET status = ''cancelled'', cancelled_by = bad_id, finished_at = NOW(6),
              error = CONCAT(''kyu: upstream job '', bad_id, '' ended '', bad_what)
            WHERE seq = j_seq AND status = ''blocked'' AND after_policy = ''succeeded'' AND after_bad > 0;
          UPDATE kyu_jobs SET status = ''waiting''
            WHERE seq = j_seq AND status = ''blocked'' AND after_left = 0
              AND (after_policy = ''finished'' OR after_bad = 0);
        END IF;
      ELSEIF t_what = ''gone'' THEN
        DELETE FROM kyu_after WHERE down_seq = j_seq;
      ELSE
        SET c = CASE t_what WHEN ''open'' THEN 0 WHEN ''succeeded'' THEN 1 ELSE 2 END;
        -- The edges that change, locked before anything reads them.
        SELECT COUNT(*) INTO n FROM kyu_after WHERE up_seq = j_seq AND state <> c FOR UPDATE;
        IF n > 0 THEN
          UPDATE kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
            SET d.after_left = d.after_left - (e.state = 0) + (c = 0),
                d.after_bad = d.after_bad - (e.state = 2) + (c = 2), d.updated_at = d.updated_at
            WHERE e.up_seq = j_seq AND e.state <> c AND d.after_left IS NOT NULL;
          UPDATE kyu_after SET state = c WHERE up_seq = j_seq AND state <> c;
          IF c = 2 THEN
            UPDATE kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
              SET d.status = ''cancelled'', d.cancelled_by = j_id, d.finished_at = NOW(6),
                  d.error = CONCAT(''kyu: upstream job '', j_id, '' ended '', t_what)
              WHERE e.up_seq = j_seq AND d.status = ''blocked'' AND d.after_policy = ''succeeded'';
          ELSE
            -- Open again (c = 0), or succeeded (c = 1) after a retry whose
            -- re-opening this item never saw as such (the upstream ran and
            -- ended before kyu_settle came to it): either way its
            -- dependents it cancelled are blocked again, then counted.
            UPDATE kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq
              SET d.status = ''blocked'', d.cancelled_by = NULL, d.error = NULL, d.finished_at = NULL
              WHERE e.up_seq = j_seq AND d.status = ''cancelled'' AND d.cancelled_by IS NOT NULL
                AND d.after_bad = 0;
          END IF;
          IF c > 0 THEN
            UPDATE kyu_jobs AS d JOIN kyu_after AS e ON e.down_seq = d.seq SET d.status = ''waiting''
              WHERE e.up_seq = j_seq AND d.status = ''blocked'' AND d.after_left = 0
                AND (d.after_policy = ''finished'' OR d.after_bad = 0);
          END IF;
        END IF;
      END IF;
      IF t_seq IS NOT NULL THEN
        DELETE FROM kyu_after_todo WHERE seq = t_seq;
      END IF;
      COMMIT;
      SET done = done + 1;
    END item;
  END WHILE items;
END';

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 6), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
