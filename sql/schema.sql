-- kyu schema: everything kyud needs, created in the current database, at
-- the newest schema version (recorded in kyu_meta, at the end).
-- Idempotent: running it again on an existing installation changes nothing,
-- and running it over an older one brings it to this version like `kyu
-- schema upgrade` does (the steps in sql/upgrade/ say which changes are
-- online); it never lowers a newer version recorded there.
--
--   mariadb yourdb < sql/schema.sql
--
-- Submitting a job is one INSERT; only `command` (or `argv`) is required:
--   INSERT INTO kyu_jobs (command) VALUES ('echo hello');
-- Every column is described in kyu.ini(5)'s companion page kyu_jobs(7) and
-- in README.md.

-- On a server that writes a binary log, creating the triggers and
-- procedures below needs SUPER or log_bin_trust_function_creators = ON;
-- without either the server stops this file halfway (ERROR 1419, after
-- the tables). Say so first, with the fix, before anything is changed.
SET @kyu_schema_super = EXISTS (SELECT 1 FROM information_schema.USER_PRIVILEGES
                                WHERE PRIVILEGE_TYPE = 'SUPER');
EXECUTE IMMEDIATE IF(@@GLOBAL.log_bin = 1 AND @@GLOBAL.log_bin_trust_function_creators = 0
    AND NOT @kyu_schema_super,
  'SIGNAL SQLSTATE ''KYU10'' SET MYSQL_ERRNO = 31010, MESSAGE_TEXT = ''this server writes a binary log (log_bin = ON): creating the triggers and procedures of kyu then needs the SUPER privilege or log_bin_trust_function_creators = ON. Load sql/schema.sql as an administrator, or have one run SET GLOBAL log_bin_trust_function_creators = 1 (and set it in the configuration of the server); nothing was changed''',
  'DO 0');

-- The schema's version (kyu_jobs(7), "Schema versions"): schema_version is
-- the version of this file (the number of the last step in sql/upgrade/),
-- schema_compat the oldest version a kyud must know to work on it. The
-- table comes first and its rows last: a kyud that connects while this
-- file is loaded sees a kyu_meta without a version, i.e. nothing installed
-- yet, rather than tables without kyu_meta, i.e. version 1.
CREATE TABLE IF NOT EXISTS kyu_meta (
  name         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  value        BIGINT NOT NULL,
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  PRIMARY KEY (name)
) ENGINE = InnoDB;

CREATE TABLE IF NOT EXISTS kyu_jobs (
  -- Internal row number: short, stable key used by kyud for every update.
  seq          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  -- The submission key. Unique while the row exists (waiting, running, or
  -- finished and within the retention time): a second INSERT of the same id
  -- fails with a duplicate-key error; INSERT IGNORE is the idempotent form.
  id           VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
                 NOT NULL DEFAULT (UUID()),
  queue        VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
                 NOT NULL DEFAULT 'default',
  -- What to run: a shell line for /bin/sh -c, or argv, a JSON array run
  -- directly (argv wins when both are set).
  command      TEXT NULL,
  argv         TEXT NULL,
  -- Extra environment (JSON object of strings) and working directory.
  env          TEXT NULL,
  cwd          VARCHAR(4096) NULL,
  -- waiting -> running -> succeeded | failed; cancelled by the user at any
  -- time with UPDATE kyu_jobs SET status = 'cancelled' WHERE id = ...
  -- blocked: waiting for the jobs named by after or after_batch to end
  -- (kyu_jobs(7), "Workflows"); it becomes waiting when they have.
  status       ENUM('waiting','running','succeeded','failed','cancelled','blocked')
                 NOT NULL DEFAULT 'waiting',
  -- Lower numbers run first among jobs due at the same time (like nice).
  priority     INT NOT NULL DEFAULT 0,
  -- When the job (or its next attempt) becomes due, database time.
  run_at       DATETIME(6) NOT NULL DEFAULT NOW(6),
  -- NULL means the daemon's default (kyu.ini [job] max_attempts/time_limit).
  max_attempts INT UNSIGNED NULL,
  time_limit   INT UNSIGNED NULL,
  -- Attempts started so far; an attempt whose worker died counts.
  attempts     INT UNSIGNED NOT NULL DEFAULT 0,
  -- Attempts that ended with exit code 75 (EX_TEMPFAIL, "try again later"):
  -- retried with backoff and not counted against max_attempts.
  tempfails    INT UNSIGNED NOT NULL DEFAULT 0,
  -- The claim token of the attempt that holds (or last held) the job, and
  -- until when its lease runs. Heartbeats extend the lease.
  owner        BIGINT UNSIGNED NULL,
  lease_until  DATETIME(6) NULL,
  -- Where the current or last attempt ran.
  host         VARCHAR(255) NULL,
  pid          INT UNSIGNED NULL,
  -- Results of the last attempt.
  exit_code    INT NULL,
  `signal`     INT NULL,
  error        TEXT NULL,
  output       MEDIUMBLOB NULL,
  started_at   DATETIME(6) NULL,
  finished_at  DATETIME(6) NULL,
  duration     DOUBLE NULL,
  -- What the last attempt cost, from the kernel's accounting of its
  -- process and the descendants it waited for (wait4's rusage): CPU
  -- seconds in user and kernel mode, and the peak resident set size of the
  -- largest of those processes, in bytes. NULL while an attempt runs, and
  -- for one that never started or whose worker died.
  cpu_user     DOUBLE NULL,
  cpu_sys      DOUBLE NULL,
  max_rss      BIGINT UNSIGNED NULL,
  -- At most one job with a given key is running at any instant, across
  -- every daemon (a cluster-wide mutex); NULL: no such rule.
  concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  created_at   DATETIME(6) NOT NULL DEFAULT NOW(6),
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  -- The one indexed time kyud claims on: run_at for waiting jobs, the
  -- lease expiry for running ones (so a dead worker's job becomes due again),
  -- NULL once the job has ended. Maintained by the server, never written.
  due          DATETIME(6) AS (CASE status
                                 WHEN 'waiting' THEN run_at
                                 WHEN 'running' THEN lease_until
                               END) PERSISTENT,
  -- The key of a running job: unique, so the database itself refuses a
  -- second running job with the same key. Computed, never stored.
  running_key  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
                 AS (IF(status = 'running', IF(key_slot = 0, concurrency_key,
                   CONCAT(concurrency_key, 0x1f, key_slot)), NULL)) VIRTUAL,
  -- Workflows (kyu_jobs(7), "Workflows"). after: a JSON array of the ids
  -- of jobs this one runs after, after_batch: a batch whose every job
  -- (that exists at INSERT) it runs after; both fixed at INSERT.
  -- after_policy: 'succeeded', run once they all succeeded (cancelled if
  -- one fails, is cancelled or deleted), or 'finished', run once they all
  -- ended, however. batch: a label for the jobs of one batch.
  after        MEDIUMTEXT NULL,
  after_policy ENUM('succeeded','finished') NOT NULL DEFAULT 'succeeded',
  batch        VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  after_batch  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  -- Kept by kyu_settle, never written by hand: how many upstreams have
  -- not ended, and how many ended failed, cancelled or deleted (NULL
  -- until counted); the upstream whose end cancelled this job; whether
  -- jobs wait for this one.
  after_left   INT NULL,
  after_bad    INT NULL,
  cancelled_by VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  has_downstream TINYINT NOT NULL DEFAULT 0,
  -- What kyu_settle last told the job's dependents of it (0 not ended, 1
  -- succeeded, 2 failed or cancelled), and, computed by the server, 1
  -- while its status says otherwise: its end (or re-opening) is yet to be
  -- settled. No trigger: a generated column costs an UPDATE next to
  -- nothing, an UPDATE trigger a tenth of kyud's throughput.
  after_seen   TINYINT NULL,
  after_changed TINYINT AS (IF(has_downstream <> 0 AND NOT (after_seen <=> CASE status
                  WHEN 'succeeded' THEN 1 WHEN 'failed' THEN 2 WHEN 'cancelled' THEN 2 ELSE 0 END),
                  1, NULL)) PERSISTENT,
  -- What the job said of itself on KYU_STATUS_FD (kyu_jobs(7), "The status
  -- channel"): its last progress (0-100) and note, and its result (JSON).
  progress     TINYINT UNSIGNED NULL,
  progress_note VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  result       MEDIUMTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  -- At most one job that has not ended per unique_key (unique_live is the
  -- key while the job waits, runs or is blocked): a second INSERT is a
  -- duplicate, and INSERT … ON DUPLICATE KEY UPDATE debounces.
  unique_key   VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  unique_live  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
                 AS (IF(status IN ('waiting', 'running', 'blocked'), unique_key, NULL)) VIRTUAL,
  -- W3C trace context, passed to the job as TRACEPARENT.
  traceparent  VARCHAR(55) CHARACTER SET ascii COLLATE ascii_bin NULL,
  -- Which of its queue's key_max_running slots a running job holds (set by
  -- kyud when it claims; 0 is the key itself).
  key_slot     SMALLINT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (seq),
  UNIQUE KEY kyu_jobs_id (id),
  KEY kyu_jobs_due (due, priority),
  KEY kyu_jobs_queue_due (queue, due, priority),
  KEY kyu_jobs_owner (owner),
  KEY kyu_jobs_finished (status, updated_at),
  KEY kyu_jobs_queue_status (queue, status),
  -- Per-queue counts of waiting and running jobs read only those rows.
  -- Gains priority at step 10, below (rebuilt at the end of the list, as an
  -- upgraded table has it).
  KEY kyu_jobs_status_queue_due (status, queue, due),
  UNIQUE KEY kyu_jobs_running_key (running_key),
  KEY kyu_jobs_batch (batch),
  KEY kyu_jobs_after_changed (after_changed),
  UNIQUE KEY kyu_jobs_unique_key (unique_live)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- No CHECK constraints on kyu_jobs: a row that breaks one (inserted with
-- check_constraint_checks = 0, or by an older schema) would make every
-- UPDATE that touches it fail, the claim of all other rows included. kyud
-- checks each claimed row instead and fails a bad one with an error naming
-- the column. Installations of the first release had one; it goes here
-- (dropping a CHECK constraint only changes metadata).
ALTER TABLE kyu_jobs DROP CONSTRAINT IF EXISTS kyu_jobs_max_attempts;

-- Installations made before queues and concurrency keys get them here.
-- Every step is online: a column added at the end is instant, a virtual
-- column is never written, and the indexes are built without blocking
-- INSERTs or claims.
ALTER TABLE kyu_jobs
  ADD COLUMN IF NOT EXISTS concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD COLUMN IF NOT EXISTS running_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
    AS (IF(status = 'running', concurrency_key, NULL)) VIRTUAL;
ALTER TABLE kyu_jobs
  ADD KEY IF NOT EXISTS kyu_jobs_queue_status (queue, status),
  ADD UNIQUE KEY IF NOT EXISTS kyu_jobs_running_key (running_key);

-- Installations made before attempts' costs were recorded get them here,
-- at the end of the row (not instant: the indexed running_key above makes
-- MariaDB rebuild the table; sql/upgrade/005-after.sql). max_rss is in
-- bytes.
ALTER TABLE kyu_jobs
  ADD COLUMN IF NOT EXISTS cpu_user DOUBLE NULL,
  ADD COLUMN IF NOT EXISTS cpu_sys DOUBLE NULL,
  ADD COLUMN IF NOT EXISTS max_rss BIGINT UNSIGNED NULL;

-- Installations of schema version 1 get the index of the per-queue gauges
-- here, built in place while jobs are inserted and claimed
-- (sql/upgrade/002-meta-gauges.sql).
ALTER TABLE kyu_jobs
  ADD KEY IF NOT EXISTS kyu_jobs_status_queue_due (status, queue, due),
  ALGORITHM = INPLACE, LOCK = NONE;

-- Settings of a queue, changed in plain SQL while daemons run (the next
-- claim of every daemon sees them). A queue without a row has no limits
-- and weight 1. kyu_jobs(7) describes every column.
CREATE TABLE IF NOT EXISTS kyu_queues (
  name         VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- 1: no job of the queue starts (running ones finish).
  paused       TINYINT NOT NULL DEFAULT 0,
  -- At most this many of its jobs are running at once, across all daemons.
  max_running  INT NULL,
  -- At most rate_limit starts in any rate_period seconds.
  rate_limit   INT NULL,
  rate_period  INT NULL,
  -- Share of the workers when several queues have due jobs.
  weight       INT NOT NULL DEFAULT 1,
  -- An INSERT into a queue that holds this many waiting jobs fails.
  max_waiting  INT NULL,
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  -- A job of the queue that fails for good makes a job of this JSON argv
  -- in on_failure_queue (NULL: this queue): kyu_jobs(7), "Failure hooks".
  on_failure   TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  on_failure_queue VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  -- At most this many running jobs per concurrency_key (claimed from here).
  key_max_running INT NOT NULL DEFAULT 1,
  PRIMARY KEY (name),
  -- What a poll of MAX(updated_at) reads: one index dive.
  KEY kyu_queues_updated (updated_at),
  -- Limits on this small table only: a bad value fails the UPDATE that
  -- sets it, with the constraint's name, whatever the session's sql_mode.
  CONSTRAINT kyu_queues_paused CHECK (paused IN (0, 1)),
  CONSTRAINT kyu_queues_max_running CHECK (max_running >= 0),
  CONSTRAINT kyu_queues_rate_limit CHECK (rate_limit >= 0),
  CONSTRAINT kyu_queues_rate_period CHECK (rate_period >= 1),
  CONSTRAINT kyu_queues_rate_needs_period CHECK (rate_limit IS NULL OR rate_period IS NOT NULL),
  CONSTRAINT kyu_queues_weight CHECK (weight BETWEEN 1 AND 1000000),
  CONSTRAINT kyu_queues_max_waiting CHECK (max_waiting >= 0),
  CONSTRAINT kyu_queues_on_failure CHECK (on_failure IS NULL OR
    (JSON_VALID(on_failure) AND JSON_TYPE(on_failure) = 'ARRAY' AND JSON_LENGTH(on_failure) > 0)),
  CONSTRAINT kyu_queues_key_max_running CHECK (key_max_running BETWEEN 1 AND 1000)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Starts of rate-limited queues within their rate_period: one row per
-- claim that started any, written under the queue's lock, pruned by the
-- retention pass.
CREATE TABLE IF NOT EXISTS kyu_queue_starts (
  seq          BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
  queue        VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  at           DATETIME(6) NOT NULL,
  n            INT UNSIGNED NOT NULL,
  PRIMARY KEY (seq),
  KEY kyu_queue_starts_queue_at (queue, at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- Bounded intake: refuse an INSERT into a queue that already holds
-- max_waiting waiting jobs, with SQLSTATE KYU01 (error 31001) and a message
-- naming the queue and the bound, which says what was counted: the rows
-- this transaction inserted before count too, the refused statement's own
-- included, and the refusal takes all of the statement's rows back. One primary-key read of kyu_queues per row; only a
-- queue with a bound also counts its waiting rows, on the (queue, status)
-- index and never more than max_waiting of them: no table-wide COUNT and
-- no counter row that every INSERT would have to lock. Concurrent INSERTs
-- may each see room for one more: the bound can be passed by the number of
-- sessions inserting at the same instant.
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

-- Installations of schema version 4 get workflows here (the columns at
-- the end: a rebuild of the table, sql/upgrade/005-after.sql says why).
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

-- No UPDATE trigger for workflows: one would run for every row kyud claims,
-- renews and finishes, and one that writes a table cost about a tenth of
-- its throughput (README "Workflows"); an end is seen by the generated
-- column after_changed instead. (kyu_jobs_status_update, below, only tests
-- one column.) So after
-- and after_batch are read at INSERT only: changing them later changes the
-- columns, not what the job waits for. (Triggers of earlier drafts go.)
DROP TRIGGER IF EXISTS kyu_jobs_after_update;
DROP TRIGGER IF EXISTS kyu_jobs_after_change;

-- A DELETE: an upstream deleted before it ended counts as failed for its
-- dependents; a dependent's edges go after it, deleted by kyu_settle (not
-- here: the retention DELETE reads kyu_after, and a trigger may not change
-- a table its statement reads). Its attempts go with it (kyu_attempts,
-- below: created after this trigger, which only names it), whoever
-- deletes it: the retention DELETE or an operator's.
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

-- Schedules: each row enqueues a job at every instant its cron expression
-- names, once across all daemons (kyu_jobs(7), "Schedules"). Managed in
-- plain SQL; kyud fills next_run, last_run, last_job and error.
CREATE TABLE IF NOT EXISTS kyu_schedules (
  name         VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- Five fields (minute hour day-of-month month day-of-week), or six with
  -- a leading seconds field, or @hourly @daily @weekly @monthly @yearly.
  cron         VARCHAR(255) NOT NULL,
  -- IANA zone the expression is read in (its wall clock, its DST).
  timezone     VARCHAR(64) NOT NULL DEFAULT 'UTC',
  -- The job each instant enqueues: the kyu_jobs columns of the same names.
  queue        VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin
                 NOT NULL DEFAULT 'default',
  command      TEXT NULL,
  argv         TEXT NULL,
  env          TEXT NULL,
  cwd          VARCHAR(4096) NULL,
  priority     INT NOT NULL DEFAULT 0,
  max_attempts INT UNSIGNED NULL,
  time_limit   INT UNSIGNED NULL,
  concurrency_key VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  enabled      TINYINT NOT NULL DEFAULT 1,
  -- Instants no daemon reached within grace seconds (all were down):
  -- skip them, run one job for them all, or run each (the last 100).
  missed       ENUM('skip','once','all') NOT NULL DEFAULT 'once',
  -- When the previous job of the schedule is still waiting or running:
  -- enqueue anyway, skip the instant, or enqueue at most one that waits.
  overlap      ENUM('allow','skip','queue') NOT NULL DEFAULT 'allow',
  grace        INT UNSIGNED NOT NULL DEFAULT 60,
  -- UTC, unlike kyu_jobs' times: instants, whatever the sessions' zone.
  -- next_run NULL: kyud computes it from the database clock.
  next_run     DATETIME NULL,
  last_run     DATETIME NULL,
  last_job     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  -- Why kyud cannot run the row (bad expression, unknown zone, a date
  -- that never occurs); set once, cleared when the row is changed.
  error        VARCHAR(1024) NULL,
  created_at   DATETIME(6) NOT NULL DEFAULT NOW(6),
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  PRIMARY KEY (name),
  KEY kyu_schedules_next_run (enabled, next_run),
  CONSTRAINT kyu_schedules_enabled CHECK (enabled IN (0, 1)),
  CONSTRAINT kyu_schedules_what CHECK (command IS NOT NULL OR argv IS NOT NULL),
  CONSTRAINT kyu_schedules_grace CHECK (grace >= 1)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- A changed expression, zone or enabling makes kyud compute next_run
-- again from the database clock (unless the same UPDATE sets next_run);
-- any change to what the row runs clears a previous error (unless the
-- same UPDATE sets error). kyud's own updates change none of these.
EXECUTE IMMEDIATE CONCAT(
  'CREATE OR REPLACE TRIGGER kyu_schedules_changed',
  ' BEFORE UPDATE ON kyu_schedules FOR EACH ROW',
  ' BEGIN',
  '  IF NOT (NEW.cron <=> OLD.cron AND NEW.timezone <=> OLD.timezone',
  '          AND NEW.enabled <= OLD.enabled)',
  '     AND NEW.next_run <=> OLD.next_run THEN',
  '   SET NEW.next_run = NULL;',
  '  END IF;',
  '  IF NOT (NEW.cron <=> OLD.cron AND NEW.timezone <=> OLD.timezone',
  '          AND NEW.enabled <=> OLD.enabled AND NEW.command <=> OLD.command',
  '          AND NEW.argv <=> OLD.argv)',
  '     AND NEW.error <=> OLD.error THEN',
  '   SET NEW.error = NULL;',
  '  END IF;',
  ' END');

-- Cluster-wide locks (kyu lock, kyu locks; kyu_jobs(7), "Locks"). A lock
-- is the rows of one name: slot 0 alone for a plain lock, slots 0..N-1
-- for a pool of N. A row is free when holder is NULL, held while expires
-- is ahead of the database's clock, and anyone's again once it has
-- passed (a holder that died loses it after its lease). Every statement
-- of a holder names its token, so one that lost its row cannot touch the
-- next holder's. Times are UTC (UTC_TIMESTAMP(6)), unlike kyu_jobs': a
-- lease must not grow or vanish when the server's zone changes to or from
-- summer time.
CREATE TABLE IF NOT EXISTS kyu_locks (
  name         VARCHAR(191) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  slot         INT UNSIGNED NOT NULL,
  -- Random token of the holder, new for each acquisition; NULL: free.
  holder       BIGINT UNSIGNED NULL,
  -- Where the holder runs, for people reading the table.
  host         VARCHAR(255) NULL,
  pid          INT UNSIGNED NULL,
  acquired_at  DATETIME(6) NULL,
  -- End of the lease; extended by the holder while it works.
  expires      DATETIME(6) NULL,
  PRIMARY KEY (name, slot)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- The daemon registry (kyu_jobs(7), "kyu_daemons"): one row per running
-- kyud, read by the wake-up triggers of sql/notify.sql, `kyu submit`, `kyu
-- wake` and `kyu daemons`.
CREATE TABLE IF NOT EXISTS kyu_daemons (
  -- The daemon's token, made by its supervisor at start: host:pid:random.
  id           VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  host         VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  pid          INT UNSIGNED NOT NULL,
  -- Where its wake-up datagrams go ([kyud] advertise, else listen), as
  -- ADDR:PORT or [V6]:PORT; NULL: it listens for none.
  wake_addr    VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NULL,
  -- [kyud] queues, comma-separated; empty: every queue.
  queues       VARCHAR(2100) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL DEFAULT '',
  version      VARCHAR(32) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  started      DATETIME(6) NOT NULL,
  -- Written by the daemon every refresh (database clock).
  last_seen    DATETIME(6) NOT NULL,
  -- The row counts as live until then: last_seen plus a few of the
  -- daemon's own refresh intervals. Past it, the wake-ups skip the row and
  -- the retention cleanup deletes it.
  live_until   DATETIME(6) NOT NULL,
  PRIMARY KEY (id)
) ENGINE = InnoDB;

-- The jobs that ended, counted per minute by kyud (kyu_jobs(7),
-- "kyu_minutes"): what kyu web's overview reads for the last hour.
CREATE TABLE IF NOT EXISTS kyu_minutes (
  -- The minute, in UTC (the database's clock, truncated to the minute).
  minute       DATETIME NOT NULL,
  queue        VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
  -- Who counted: the daemon's token (kyu_daemons.id) and its worker.
  -- Each worker adds to rows of its own, so counting never waits for
  -- another worker's lock.
  daemon       VARCHAR(128) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  worker       SMALLINT UNSIGNED NOT NULL,
  -- Jobs that ended succeeded or failed (for good), and failed attempts
  -- that go back to waiting for a retry.
  succeeded    INT UNSIGNED NOT NULL DEFAULT 0,
  failed       INT UNSIGNED NOT NULL DEFAULT 0,
  retried      INT UNSIGNED NOT NULL DEFAULT 0,
  PRIMARY KEY (minute, queue, daemon, worker)
) ENGINE = InnoDB;

-- Installations of schema version 5 get step 6 here (attempts, the status
-- channel, failure hooks, per-key limits, unique keys, trace context:
-- sql/upgrade/006-attempts.sql).
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
  '   SIGNAL SQLSTATE ''KYU03'' SET MYSQL_ERRNO = 31003, MESSAGE_TEXT = msg;',
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

-- Installations of schema version 6 get step 7 here (checks at INSERT,
-- NULL as the default, error numbers, the index of kyu_queues.updated_at:
-- sql/upgrade/007-checks.sql; the other triggers above carry their error
-- numbers already). Last of the triggers made here, so that it is first.
-- SQLSTATE and error number of each refusal (kyu_jobs(7), "Errors"):
--   KYU01 31001 queue full, KYU02 31002 after, KYU03 31003 traceparent,
--   KYU04 31004 argv, KYU05 31005 env, KYU06 31006 status.
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
-- In a session whose time_zone is not the server's, the times are then
-- converted to the server's zone (step 8, below).
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

-- The one check on UPDATE: a status the ENUM does not hold, which without
-- a strict sql_mode is stored as '' (UPDATE ... SET status = 'canceled'
-- leaves a job that never runs and that retention never deletes). It
-- tests one column and touches nothing: a 1,000-row UPDATE of the claim's
-- shape cost the server the same CPU with it and without it, within the
-- noise of the measurement, where the draft workflow trigger that wrote a
-- table cost kyud a tenth of its throughput. A row that is '' already
-- (from before this step) does not make later UPDATEs of it fail: only a
-- change to '' is refused, so the claims of other rows cannot be stopped
-- by it, which is why kyu_jobs has no CHECK constraint. From step 8 it
-- also converts the times an UPDATE changed in a session of another zone.
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

-- A poll that reads MAX(updated_at) of kyu_queues every second (to see a
-- setting changed soon) gets it in one index dive with this key. Built in
-- place; kyu_queues holds a row per configured queue.
ALTER TABLE kyu_queues ADD KEY IF NOT EXISTS kyu_queues_updated (updated_at),
  ALGORITHM = INPLACE, LOCK = NONE;

-- Installations of schema version 7 get step 8 here (the session's time
-- zone converted by kyu_jobs_check and kyu_jobs_status_update above, in
-- place; kyu_wait: sql/upgrade/008-zones-wait.sql). kyu_jobs' times are
-- the server's zone (@@global.time_zone); a session of another zone has
-- the times it writes converted from its zone.
-- SQLSTATE and error number of kyu_wait's refusals (kyu_jobs(7), "Errors"):
--   KYU11 31011 in an open transaction, KYU12 31012 no job has that id.
--
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


-- The version, last: recorded only once everything above is there; only
-- ever raised, so that this file run over a newer installation changes
-- nothing.
INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 8), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));

-- Installations of schema version 8 get step 9 here (sql/upgrade/
-- 009-daemon-slots.sql): each daemon's slots and running jobs, and the
-- drain an operator asks for (kyu_jobs(7), "Daemons: kyu_daemons"). With
-- its own version, after the one above: this block comes last so that
-- the steps written at the same time merge without touching each other.
ALTER TABLE kyu_daemons
  ADD COLUMN IF NOT EXISTS slots     INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS running   INT UNSIGNED NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS drain     DATETIME(6) NULL,
  ADD COLUMN IF NOT EXISTS drain_by  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ALGORITHM = INSTANT;
INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 9), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));

-- Installations of schema version 9 get step 10 here (sql/upgrade/
-- 010-fan.sql): the names of the queues, for the fan.
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
  '  INSERT IGNORE INTO kyu_queue_names_new (name, seq) VALUES (NEW.queue, NEW.seq);',
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

-- Step 11 (sql/upgrade/011-names-seq.sql): the trigger above ignores a
-- note already there (a seq used again after kyu_jobs was emptied and its
-- AUTO_INCREMENT reset).
INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 11), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
