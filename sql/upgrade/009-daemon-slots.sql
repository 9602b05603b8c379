-- Step 9: a wedged daemon told from a busy one, and the drain (kyu_jobs(7),
-- "Daemons: kyu_daemons"). Each kyud writes, at every refresh of its row,
-- the job slots it has (slots: [kyud] workers x slots) and the jobs it runs
-- (running); an operator sets drain (`kyu drain`, the dashboard, or a plain
-- UPDATE) to make the daemon stop claiming, let its running jobs finish and
-- exit 0, from any host, through the database.
--
-- Online: kyu_daemons holds a row per running daemon; the columns are added
-- in place without a copy (ALGORITHM = INSTANT). kyud of version 8 names
-- the columns it writes and reads, and keeps working on it (the new ones
-- keep their defaults, and it never drains): schema_compat stays 1.
ALTER TABLE kyu_daemons
  -- Job slots the daemon has ([kyud] workers x [kyud] slots); 0: not
  -- written yet (a kyud older than this step).
  ADD COLUMN IF NOT EXISTS slots     INT UNSIGNED NOT NULL DEFAULT 0,
  -- Jobs it ran at its last refresh.
  ADD COLUMN IF NOT EXISTS running   INT UNSIGNED NOT NULL DEFAULT 0,
  -- Set by an operator: NOT NULL asks the daemon to drain (stop claiming,
  -- let what runs finish, exit 0); it does at its next refresh.
  ADD COLUMN IF NOT EXISTS drain     DATETIME(6) NULL,
  -- Who set drain (USER() of the session, as `kyu drain` writes it).
  ADD COLUMN IF NOT EXISTS drain_by  VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ALGORITHM = INSTANT;

INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 9), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
