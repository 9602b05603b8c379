-- Step 5: workflows, a job that runs after others (kyu_jobs(7),
-- "Workflows").
--
-- New columns at the end of kyu_jobs, the status 'blocked' at the end of
-- its list (instant), an index on batch, two new tables, triggers on
-- kyu_jobs and the procedure kyu_settle. kyud of version 4 keeps working
-- on it (it never claims a blocked row, and its results make the same
-- bookkeeping rows), but only kyud of version 5 settles them, so a blocked
-- job waits until one runs: schema_compat stays 1.
--
-- Online: not quite. MariaDB adds a column instantly only to a table
-- without an indexed virtual column, and kyu_jobs has one (running_key),
-- so the columns cost a rebuild of the table, during which INSERTs,
-- claims and results wait (LOCK=SHARED: reads go on). Measured 6.7 s for
-- 200,000 rows on a 2-core VM; retention keeps the table to the rows of
-- the last [kyud] retention. kyud's statements that wait past their
-- deadline are sent again after it.

ALTER TABLE kyu_jobs
  MODIFY status ENUM('waiting','running','succeeded','failed','cancelled','blocked')
    NOT NULL DEFAULT 'waiting';
ALTER TABLE kyu_jobs
  ADD COLUMN IF NOT EXISTS after MEDIUMTEXT NULL,
  ADD COLUMN IF NOT EXISTS after_policy ENUM('succeeded','finished') NOT NULL DEFAULT 'succeeded',
  ADD COLUMN IF NOT EXISTS batch VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS after_batch VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS after_left INT NULL,
  ADD COLUMN IF NOT EXISTS after_bad INT NULL,
  ADD COLUMN IF NOT EXISTS cancelled_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS has_downstream TINYINT NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS after_seen TINYINT NULL,
  ADD COLUMN IF NOT EXISTS after_changed TINYINT AS (IF(has_downstream <> 0 AND NOT (after_seen <=>
    CASE status WHEN 'succeeded' THEN 1 WHEN 'failed' THEN 2 WHEN 'cancelled' THEN 2 ELSE 0 END),
    1, NULL)) PERSISTENT;
ALTER TABLE kyu_jobs
  ADD KEY IF NOT EXISTS kyu_jobs_batch (batch),
  ADD KEY IF NOT EXISTS kyu_jobs_after_changed (after_changed),
  ALGORITHM = INPLACE, LOCK = NONE;

-- Workflows (kyu_jobs(7), "Workflows"). A job inserted with after (a JSON
-- array of job ids) or after_batch (a batch label) waits, blocked, for
-- those jobs; one edge row per upstream here says how far each has got.
-- The edges are made by the INSERT itself (the triggers below); what the
-- ends of upstreams do to their dependents is done by kyu_settle, which
-- kyud calls, because a trigger may not update the table that fired it.
CREATE TABLE IF NOT EXISTS kyu_after (
  -- kyu_jobs.seq of the upstream and of the job that waits for it.
  up_seq       BIGINT UNSIGNED NOT NULL,
  down_seq     BIGINT UNSIGNED NOT NULL,
  -- What kyu_settle last counted of the upstream: 0 not ended (or not
  -- counted yet), 1 succeeded, 2 failed, cancelled or deleted.
  state        TINYINT NOT NULL DEFAULT 0,
  PRIMARY KEY (up_seq, down_seq),
  KEY kyu_after_down (down_seq)
) ENGINE = InnoDB;

-- What kyu_settle has still to do, in order, besides the rows of kyu_jobs
-- whose after_changed is 1: a job with upstreams was inserted (what = 'new',
-- the job is the dependent) or deleted ('gone': its edges go), or an
-- upstream that has dependents was deleted before it ended ('deleted').
-- Rows
-- are made by the triggers, in the transaction that made the change, and
-- removed by kyu_settle in the transaction that acts on them: whoever
-- ends a job, and whenever kyud runs, each change is acted on once.
CREATE TABLE IF NOT EXISTS kyu_after_todo (
  seq          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  job_seq      BIGINT UNSIGNED NOT NULL,
  job_id       VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  what         ENUM('new','open','succeeded','failed','cancelled','deleted','gone') NOT NULL,
  at           DATETIME(6) NOT NULL DEFAULT NOW(6),
  PRIMARY KEY (seq)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- At INSERT: every id in after must name a job that exists (else SQLSTATE
-- KYU02 naming it; a job cannot name itself or a later job, so no cycle
-- can be built), and the job starts blocked, unless its upstreams have
-- all ended already as its policy wants: then it is due at once, counted
-- here, and kyu_settle has nothing to do for it. The upstreams are read
-- with shared locks (an end or a batch member in flight is waited for),
-- so that the edges made after the INSERT are the same jobs. First among
-- the BEFORE INSERT triggers, so that the max_waiting bound does not
-- count a blocked job.
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
  '    SIGNAL SQLSTATE ''KYU02'' SET MESSAGE_TEXT = msg;',
  '   END IF;',
  '   SELECT t.n, t.id INTO bad_n, bad_id FROM JSON_TABLE(NEW.after, ''$[*]'' COLUMNS (',
  '     n FOR ORDINALITY, id VARCHAR(1024) CHARACTER SET utf8mb4 PATH ''$'')) AS t',
  '    WHERE t.id IS NULL OR NOT EXISTS (SELECT 1 FROM kyu_jobs AS j WHERE j.id = t.id) LIMIT 1;',
  '   IF bad_n IS NOT NULL THEN',
  '    SET msg = CONCAT(''kyu: after of job '', LEFT(NEW.id, 100), '' names job '',',
  '      IFNULL(LEFT(bad_id, 100), CONCAT(''(element '', bad_n, '', not a string)'')),',
  '      '', which does not exist'');',
  '    SIGNAL SQLSTATE ''KYU02'' SET MESSAGE_TEXT = msg;',
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

-- After the INSERT: one edge per upstream (the ids of after, and every
-- job of after_batch that exists now: a member another transaction is
-- inserting is waited for; under REPEATABLE READ new ones are also kept
-- out until this one commits), and for a blocked job an item for
-- kyu_settle, which counts them. A job counted at INSERT gets its edges
-- counted too.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_jobs_after_edges',
  ' AFTER INSERT ON kyu_jobs FOR EACH ROW',
  ' IF JSON_LENGTH(NEW.after) > 0 OR NEW.after_batch IS NOT NULL THEN',
  '  INSERT IGNORE INTO kyu_after (up_seq, down_seq, state)',
  '   SELECT u.seq, NEW.seq, IF(NEW.after_left IS NULL, 0, CASE WHEN u.status = ''succeeded'' THEN 1',
  '     WHEN u.status IN (''failed'', ''cancelled'') THEN 2 ELSE 0 END)',
  '    FROM (SELECT j.seq FROM JSON_TABLE(IFNULL(NEW.after, ''[]''), ''$[*]''',
  '       COLUMNS (id VARCHAR(1024) CHARACTER SET utf8mb4 PATH ''$'')) AS t JOIN kyu_jobs AS j ON j.id = t.id',
  '      UNION SELECT j.seq FROM kyu_jobs AS j',
  '       WHERE NEW.after_batch IS NOT NULL AND j.batch = NEW.after_batch AND j.seq <> NEW.seq) AS x',
  '    JOIN kyu_jobs AS u ON u.seq = x.seq;',
  '  IF NEW.status = ''blocked'' THEN',
  '   INSERT INTO kyu_after_todo (job_seq, job_id, what) VALUES (NEW.seq, NEW.id, ''new'');',
  '  END IF;',
  ' END IF');

-- No UPDATE trigger: one would run for every row kyud claims, renews and
-- finishes, and cost about a tenth of its throughput (README "Workflows");
-- an end is seen by the generated column after_changed instead. So after
-- and after_batch are read at INSERT only: changing them later changes the
-- columns, not what the job waits for. (Triggers of earlier drafts go.)
DROP TRIGGER IF EXISTS kyu_jobs_after_update;
DROP TRIGGER IF EXISTS kyu_jobs_after_change;

-- A DELETE: an upstream deleted before it ended counts as failed for its
-- dependents; a dependent's edges go after it, deleted by kyu_settle (not
-- here: the retention DELETE reads kyu_after, and a trigger may not change
-- a table its statement reads).
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
  ' END');

-- kyu_settle(n): act on up to n items of kyu_after_todo, oldest first,
-- each in a transaction of its own (SKIP LOCKED: an item another session
-- is acting on is left to it). kyud calls it when it ended a job with
-- dependents and when its claim sees items waiting; anyone may call it
-- (CALL kyu_settle(1000)) after ending a job in plain SQL, to move its
-- dependents on without waiting for kyud. What an item does:
--   new: count the dependent's upstreams (those that ended before it was
--     inserted count now) and mark each as having dependents, which makes
--     its own end leave an item;
--   gone: a dependent was deleted: its edges go;
--   an upstream's end or re-opening (its after_changed flag) or deletion:
--     move its edges to the new state,
--     adjusting each dependent's two counters by the difference (a
--     constant amount per dependent, however many upstreams it has);
-- then, for the dependents concerned: a blocked one whose upstreams have
-- all ended becomes waiting (policy 'succeeded': all succeeded); a
-- blocked one of policy 'succeeded' with a failed upstream is cancelled,
-- naming it in error and cancelled_by; one cancelled that way whose
-- upstreams are no longer failed (a retry) is blocked again. Those
-- changes leave items of their own when the job has dependents: the
-- cascade goes on, to any depth, in the following items. A deadlock (or
-- a Galera certification failure) rolls back one item, which is tried
-- again.
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
          ELSEIF c = 0 THEN
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

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 5), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
