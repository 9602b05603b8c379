-- Step 3: the daemon registry, kyu_daemons (kyu_jobs(7), "kyu_daemons").
--
-- Every running kyud keeps one row here: who it is, where its wake-up
-- datagrams must go and which queues it serves. The triggers of
-- sql/notify.sql read it to wake every live daemon that serves a row's
-- queue, `kyu submit` and `kyu wake` to do the same, `kyu daemons` to list
-- them. Online: a new table. kyud of version 2 ignores it (schema_compat
-- stays 1).

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

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 3), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
