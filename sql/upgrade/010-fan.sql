-- Step 10: many queues served in turn (notes/DESIGN.md, "Many queues: the
-- fan"). kyu_queue_names holds every queue name a job was inserted with
-- (an INSERT trigger notes new ones, kyud files them), so that kyud can go
-- round thousands of due
-- queues by reading names in order instead of grouping kyu_jobs; and
-- kyu_jobs_status_queue_due gains priority, so that a queue's first due
-- waiting row is one index dive in the claim's own order (due, priority).
--
-- Online: the table is new, the index is rebuilt in place
-- (ALGORITHM=INPLACE, LOCK=NONE: writes go on while it is built), the
-- trigger is one statement. kyud of versions 6 to 9 keep working on it
-- (they read neither; the index keeps its name and its first columns), so
-- schema_compat stays 1.

CREATE TABLE IF NOT EXISTS kyu_queue_names (
  name         VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  PRIMARY KEY (name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Names the INSERT trigger has not found in kyu_queue_names, a row per
-- job (seq: no two rows share a key, so no submitter ever waits on
-- another's row here); kyud moves them into kyu_queue_names with its
-- retention pass (src/worker/names.c).
CREATE TABLE IF NOT EXISTS kyu_queue_names_new (
  name         VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  seq          BIGINT UNSIGNED NOT NULL,
  PRIMARY KEY (name, seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The trigger reads kyu_queue_names and writes only kyu_queue_names_new:
-- a table a trigger writes is locked for writing for all of it, and its
-- reads of that table would then lock the rows they read (a submitter
-- would wait for another's uncommitted first job of a queue). So a job
-- of a known queue costs one consistent primary-key read and writes
-- nothing; one of a new queue, one row of its own, and the session
-- remembers the last name it noted (@kyu_noted), so a 1,000,000-row INSERT
-- into a new queue notes it once. (A session that noted a name and rolled
-- back notes it no more: kyud files every due queue's name every 5
-- minutes while it goes round, store_claim.c.) A job moved to another
-- queue by UPDATE is not covered (kyu moves none; kyu_jobs(7) says so):
-- the directory's claims find it once fewer queues are due.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_queue_name',
  ' AFTER INSERT ON kyu_jobs FOR EACH ROW',
  ' IF NOT (@kyu_noted <=> NEW.queue) AND',
  '   NOT EXISTS (SELECT 1 FROM kyu_queue_names WHERE name = NEW.queue) THEN',
  '  INSERT INTO kyu_queue_names_new (name, seq) VALUES (NEW.queue, NEW.seq);',
  '  SET @kyu_noted = NEW.queue;',
  ' END IF');

-- The names of the jobs there before the trigger (read once, from the
-- index below's first two columns).
INSERT IGNORE INTO kyu_queue_names (name)
  SELECT DISTINCT queue FROM kyu_jobs WHERE status IN ('waiting', 'running', 'blocked');

SET @kyu_has_priority = (SELECT COUNT(*) FROM information_schema.STATISTICS
  WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'kyu_jobs'
    AND INDEX_NAME = 'kyu_jobs_status_queue_due' AND COLUMN_NAME = 'priority');
EXECUTE IMMEDIATE IF(@kyu_has_priority > 0, 'DO 0',
  'ALTER TABLE kyu_jobs DROP KEY kyu_jobs_status_queue_due,
     ADD KEY kyu_jobs_status_queue_due (status, queue, due, priority),
     ALGORITHM = INPLACE, LOCK = NONE');

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 10), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
