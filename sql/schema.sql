-- kyu schema: everything kyud needs, created in the current database.
-- Idempotent: running it again on an existing installation changes nothing.
--
--   mariadb yourdb < sql/schema.sql
--
-- Submitting a job is one INSERT; only `command` (or `argv`) is required:
--   INSERT INTO kyu_jobs (command) VALUES ('echo hello');
-- Every column is described in kyu.ini(5)'s companion page kyu_jobs(7) and
-- in README.md.

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
  status       ENUM('waiting','running','succeeded','failed','cancelled')
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
  created_at   DATETIME(6) NOT NULL DEFAULT NOW(6),
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  -- The one indexed time kyud claims on: run_at for waiting jobs, the
  -- lease expiry for running ones (so a dead worker's job becomes due again),
  -- NULL once the job has ended. Maintained by the server, never written.
  due          DATETIME(6) AS (CASE status
                                 WHEN 'waiting' THEN run_at
                                 WHEN 'running' THEN lease_until
                               END) PERSISTENT,
  PRIMARY KEY (seq),
  UNIQUE KEY kyu_jobs_id (id),
  KEY kyu_jobs_due (due, priority),
  KEY kyu_jobs_queue_due (queue, due, priority),
  KEY kyu_jobs_owner (owner),
  KEY kyu_jobs_finished (status, updated_at)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin;

-- No CHECK constraints on kyu_jobs: a row that breaks one (inserted with
-- check_constraint_checks = 0, or by an older schema) would make every
-- UPDATE that touches it fail, the claim of all other rows included. kyud
-- checks each claimed row instead and fails a bad one with an error naming
-- the column. Installations of the first release had one; it goes here
-- (dropping a CHECK constraint only changes metadata).
ALTER TABLE kyu_jobs DROP CONSTRAINT IF EXISTS kyu_jobs_max_attempts;
