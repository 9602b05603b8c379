-- Step 2: the schema's version table, and an index for per-queue gauges.
--
-- kyu_meta holds the version (kyu_jobs(7), "Schema versions"): from now on
-- kyud and `kyu schema upgrade` read it. A new table: online.
--
-- kyu_jobs_status_queue_due lets counts of waiting and running jobs per
-- queue, their due count and the oldest due time read only the rows that
-- are waiting or running, from the index alone; without it such a query
-- reads an index entry of every row, finished ones included (on 500,000
-- rows, 105,000 of them active: 105,000 entries read instead of 500,000).
-- Online: built in place while INSERTs, claims and finishes go on
-- (ALGORITHM = INPLACE, LOCK = NONE are spelled out so that a server that
-- could only copy the table refuses instead); it takes a brief metadata
-- lock at its start and end, which waits for open transactions on kyu_jobs
-- (`kyu schema upgrade` gives up after its lock wait, see kyu(1)).
--
-- kyud of version 1 works on the result unchanged: schema_compat stays 1.

CREATE TABLE IF NOT EXISTS kyu_meta (
  name         VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  value        BIGINT NOT NULL,
  updated_at   DATETIME(6) NOT NULL DEFAULT NOW(6) ON UPDATE NOW(6),
  PRIMARY KEY (name)
) ENGINE = InnoDB;

ALTER TABLE kyu_jobs
  ADD KEY IF NOT EXISTS kyu_jobs_status_queue_due (status, queue, due),
  ALGORITHM = INPLACE, LOCK = NONE;

-- Last, so that the version says 2 only once everything above is there;
-- only ever raised, so that this step run late (by a second, slower `kyu
-- schema upgrade`) never lowers what a later step recorded.
INSERT INTO kyu_meta (name, value) VALUES ('schema_version', 2), ('schema_compat', 1)
  ON DUPLICATE KEY UPDATE value = GREATEST(value, VALUES(value));
