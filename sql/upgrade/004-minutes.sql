-- Step 4: kyu_minutes, the jobs that ended, counted per minute
-- (kyu_jobs(7), "kyu_minutes").
--
-- kyud adds each batch of results it records to its own rows here, in the
-- round trip that records them; kyu web's overview reads the last hour
-- from this table (a row per minute, queue and worker that ended jobs)
-- instead of an index entry per job that ended in it. Online: a new
-- table. kyud of version 3 ignores it (its jobs are then not counted):
-- schema_compat stays 1.

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

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 4), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
